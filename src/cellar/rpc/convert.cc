#include "rpc/convert.h"

namespace cellar::rpc {

namespace {

capnp::Data::Reader data(const std::string& s) {
  return {reinterpret_cast<const capnp::byte*>(s.data()), s.size()};
}

std::string str(capnp::Data::Reader d) { return {reinterpret_cast<const char*>(d.begin()), d.size()}; }
std::string str(capnp::Text::Reader t) { return {t.cStr(), t.size()}; }
capnp::Text::Reader text(const std::string& s) { return {s.data(), s.size()}; }

void to_wire(const time_range& r, wire::TimeRange::Builder b) {
  b.setMin(r.min);
  b.setMax(r.max);
}

time_range from_wire(wire::TimeRange::Reader r) { return {r.getMin(), r.getMax()}; }

void to_wire(const read_options& o, wire::ReadOptions::Builder b) {
  auto cols = b.initColumns(static_cast<unsigned>(o.columns.families.size()));
  for (unsigned i = 0; i < cols.size(); ++i) {
    const auto& fc = o.columns.families[i];
    cols[i].setFamily(text(fc.family));
    auto qs = cols[i].initQualifiers(static_cast<unsigned>(fc.qualifiers.size()));
    for (unsigned j = 0; j < qs.size(); ++j) qs.set(j, data(fc.qualifiers[j]));
  }
  b.setMaxVersions(o.max_versions);
  to_wire(o.range, b.initRange());
  b.setMaxPerFamily(o.max_per_family);
  b.setOffsetPerFamily(o.offset_per_family);
}

read_options from_wire(wire::ReadOptions::Reader r) {
  read_options o;
  for (auto fc : r.getColumns()) {
    column_selection::family_columns f{str(fc.getFamily()), {}};
    for (auto q : fc.getQualifiers()) f.qualifiers.push_back(str(q));
    o.columns.families.push_back(std::move(f));
  }
  o.max_versions = r.getMaxVersions();
  o.range = from_wire(r.getRange());
  o.max_per_family = r.getMaxPerFamily();
  o.offset_per_family = r.getOffsetPerFamily();
  return o;
}

void to_wire(const put& p, wire::Put::Builder b) {
  b.setRow(data(p.row));
  b.setTimestamp(p.timestamp);
  auto es = b.initEntries(static_cast<unsigned>(p.entries.size()));
  for (unsigned i = 0; i < es.size(); ++i) {
    es[i].setFamily(text(p.entries[i].family));
    es[i].setQualifier(data(p.entries[i].qualifier));
    es[i].setTimestamp(p.entries[i].timestamp);
    es[i].setValue(data(p.entries[i].value));
  }
  b.setHasTtl(p.ttl_ms_.has_value());
  b.setTtlMs(p.ttl_ms_.value_or(0));
}

put from_wire(wire::Put::Reader r) {
  put p(str(r.getRow()), r.getTimestamp());
  for (auto e : r.getEntries())
    p.entries.push_back({str(e.getFamily()), str(e.getQualifier()), e.getTimestamp(), str(e.getValue())});
  if (r.getHasTtl()) p.ttl_ms_ = r.getTtlMs();
  return p;
}

void to_wire(const deletion& d, wire::Delete::Builder b) {
  b.setRow(data(d.row));
  b.setTimestamp(d.timestamp);
  auto es = b.initEntries(static_cast<unsigned>(d.entries.size()));
  for (unsigned i = 0; i < es.size(); ++i) {
    es[i].setScope(static_cast<wire::Delete::Scope>(d.entries[i].what));
    es[i].setFamily(text(d.entries[i].family));
    es[i].setQualifier(data(d.entries[i].qualifier));
    es[i].setTimestamp(d.entries[i].timestamp);
  }
}

result<deletion> from_wire(wire::Delete::Reader r) {
  deletion d(str(r.getRow()), r.getTimestamp());
  for (auto e : r.getEntries()) {
    auto scope = static_cast<unsigned>(e.getScope());
    if (scope > static_cast<unsigned>(deletion::scope::columns))
      return status{code::invalid_argument, "unknown delete scope"};
    d.entries.push_back({static_cast<deletion::scope>(scope), str(e.getFamily()), str(e.getQualifier()),
                         e.getTimestamp()});
  }
  return d;
}

void to_wire(const row_mutations& m, wire::RowMutations::Builder b) {
  b.setRow(data(m.row));
  auto ms = b.initMutations(static_cast<unsigned>(m.mutations.size()));
  for (unsigned i = 0; i < ms.size(); ++i) {
    if (auto* p = std::get_if<put>(&m.mutations[i]))
      to_wire(*p, ms[i].initPut());
    else
      to_wire(std::get<deletion>(m.mutations[i]), ms[i].initDelete());
  }
}

result<row_mutations> from_wire(wire::RowMutations::Reader r) {
  row_mutations m(str(r.getRow()));
  for (auto mu : r.getMutations()) {
    if (mu.isPut()) {
      m.mutations.emplace_back(from_wire(mu.getPut()));
    } else {
      auto d = from_wire(mu.getDelete());
      if (!d) return d.error();
      m.mutations.emplace_back(std::move(d.value()));
    }
  }
  return m;
}

}  // namespace

void to_wire(const status& s, wire::Error::Builder b) {
  b.setCode(static_cast<std::uint16_t>(s.code()));
  auto n = code_name(s.code());
  b.setName(capnp::Text::Reader(n.data(), n.size()));
  b.setMessage(text(s.message()));
}

status from_wire(wire::Error::Reader r) {
  if (r.getCode() == 0) return status::ok();
  if (r.getCode() > static_cast<std::uint16_t>(last_code))
    return {code::internal, "unknown error code " + std::to_string(r.getCode()) + ": " + str(r.getMessage())};
  return {static_cast<code>(r.getCode()), str(r.getMessage())};
}

void to_wire(const batch_op& op, wire::Action::Builder b) {
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, get>) {
          auto g = b.initGet();
          g.setRow(data(o.row));
          to_wire(o.options, g.initOptions());
          g.setExistsOnly(o.exists_only_);
        } else if constexpr (std::is_same_v<T, put>) {
          to_wire(o, b.initPut());
        } else if constexpr (std::is_same_v<T, deletion>) {
          to_wire(o, b.initDelete());
        } else if constexpr (std::is_same_v<T, increment>) {
          auto w = b.initIncrement();
          w.setRow(data(o.row));
          auto es = w.initEntries(static_cast<unsigned>(o.entries.size()));
          for (unsigned i = 0; i < es.size(); ++i) {
            es[i].setFamily(text(o.entries[i].family));
            es[i].setQualifier(data(o.entries[i].qualifier));
            es[i].setAmount(o.entries[i].amount);
          }
          w.setHasTtl(o.ttl_ms_.has_value());
          w.setTtlMs(o.ttl_ms_.value_or(0));
          w.setReturnResults(o.return_results_);
        } else if constexpr (std::is_same_v<T, append>) {
          auto w = b.initAppend();
          w.setRow(data(o.row));
          auto es = w.initEntries(static_cast<unsigned>(o.entries.size()));
          for (unsigned i = 0; i < es.size(); ++i) {
            es[i].setFamily(text(o.entries[i].family));
            es[i].setQualifier(data(o.entries[i].qualifier));
            es[i].setValue(data(o.entries[i].value));
          }
          w.setHasTtl(o.ttl_ms_.has_value());
          w.setTtlMs(o.ttl_ms_.value_or(0));
          w.setReturnResults(o.return_results_);
        } else if constexpr (std::is_same_v<T, row_mutations>) {
          to_wire(o, b.initRowMutations());
        } else {
          auto w = b.initCheckAndMutate();
          w.setRow(data(o.row));
          w.setFamily(text(o.family));
          w.setQualifier(data(o.qualifier));
          w.setOp(static_cast<wire::CompareOp>(o.op));
          w.setHasExpected(o.expected.has_value());
          if (o.expected) w.setExpected(data(*o.expected));
          to_wire(o.range, w.initRange());
          to_wire(o.mutation, w.initMutation());
        }
      },
      op);
}

result<batch_op> from_wire(wire::Action::Reader r) {
  switch (r.which()) {
    case wire::Action::GET: {
      auto g = r.getGet();
      get out(str(g.getRow()));
      out.options = from_wire(g.getOptions());
      out.exists_only_ = g.getExistsOnly();
      return batch_op(std::move(out));
    }
    case wire::Action::PUT:
      return batch_op(from_wire(r.getPut()));
    case wire::Action::DELETE: {
      auto d = from_wire(r.getDelete());
      if (!d) return d.error();
      return batch_op(std::move(d.value()));
    }
    case wire::Action::INCREMENT: {
      auto w = r.getIncrement();
      increment out(str(w.getRow()));
      for (auto e : w.getEntries()) out.add(str(e.getFamily()), str(e.getQualifier()), e.getAmount());
      if (w.getHasTtl()) out.ttl_ms_ = w.getTtlMs();
      out.return_results_ = w.getReturnResults();
      return batch_op(std::move(out));
    }
    case wire::Action::APPEND: {
      auto w = r.getAppend();
      append out(str(w.getRow()));
      for (auto e : w.getEntries()) out.add(str(e.getFamily()), str(e.getQualifier()), str(e.getValue()));
      if (w.getHasTtl()) out.ttl_ms_ = w.getTtlMs();
      out.return_results_ = w.getReturnResults();
      return batch_op(std::move(out));
    }
    case wire::Action::ROW_MUTATIONS: {
      auto m = from_wire(r.getRowMutations());
      if (!m) return m.error();
      return batch_op(std::move(m.value()));
    }
    case wire::Action::CHECK_AND_MUTATE: {
      auto w = r.getCheckAndMutate();
      check_and_mutate out(str(w.getRow()), str(w.getFamily()), str(w.getQualifier()));
      auto op = static_cast<unsigned>(w.getOp());
      if (op > static_cast<unsigned>(compare_op::greater)) return status{code::invalid_argument, "unknown compare op"};
      out.op = static_cast<compare_op>(op);
      if (w.getHasExpected()) out.expected = str(w.getExpected());
      out.range = from_wire(w.getRange());
      auto m = from_wire(w.getMutation());
      if (!m) return m.error();
      out.mutation = std::move(m.value());
      return batch_op(std::move(out));
    }
  }
  return status{code::invalid_argument, "unknown action kind"};
}

void to_wire(const row_result& r, wire::RowResult::Builder b) {
  b.setRow(data(r.row));
  b.setExists(r.exists);
  b.setPartial(r.partial);
  auto cells = b.initCells(static_cast<unsigned>(r.cells.size()));
  for (unsigned i = 0; i < cells.size(); ++i) {
    const auto& c = r.cells[i];
    // A cell's row is the result's row (a row key is never empty): sent once per row.
    if (c.row != r.row) cells[i].setRow(data(c.row));
    cells[i].setFamily(text(c.family));
    cells[i].setQualifier(data(c.qualifier));
    cells[i].setTimestamp(c.timestamp);
    cells[i].setValue(data(c.value));
  }
}

row_result from_wire(wire::RowResult::Reader r) {
  row_result out;
  out.row = str(r.getRow());
  out.exists = r.getExists();
  out.partial = r.getPartial();
  out.cells.reserve(r.getCells().size());
  for (auto c : r.getCells())
    out.cells.push_back(cell{c.hasRow() ? str(c.getRow()) : out.row, str(c.getFamily()), str(c.getQualifier()),
                             c.getTimestamp(), str(c.getValue())});
  return out;
}

namespace {
std::uint64_t blob_words(std::size_t bytes) { return (bytes + 8) / 8; }  // room for Text's NUL
}  // namespace

std::uint64_t wire_words(const row_result& r) {
  std::uint64_t w = 4 + blob_words(r.row.size());  // RowResult: 1 data word, 2 pointers, + list tag
  for (const auto& c : r.cells)
    w += 5 + blob_words(c.family.size()) + blob_words(c.qualifier.size()) + blob_words(c.value.size()) +
         (c.row == r.row ? 0 : blob_words(c.row.size()));
  return w;
}

std::uint64_t wire_words(const op_result& r) {
  return 8 + blob_words(r.st.message().size()) + blob_words(16) + wire_words(r.row);
}

void to_wire(const op_result& r, wire::ActionResult::Builder b) {
  to_wire(r.st, b.initError());
  to_wire(r.row, b.initRow());
  b.setProcessed(r.processed);
}

op_result from_wire(wire::ActionResult::Reader r) {
  op_result out;
  out.st = from_wire(r.getError());
  out.row = from_wire(r.getRow());
  out.processed = r.getProcessed();
  return out;
}

void to_wire(const scan& s, wire::Scan::Builder b) {
  b.setStart(data(s.start));
  b.setStartInclusive(s.start_inclusive);
  b.setStop(data(s.stop));
  b.setStopInclusive(s.stop_inclusive);
  b.setReversed(s.reversed_);
  b.setLimit(s.limit_);
  b.setBatch(s.batch_);
  b.setMaxResultSize(s.max_result_size_);
  b.setAllowPartialResults(s.allow_partial_);
  b.setCaching(s.caching_);
  to_wire(s.options, b.initOptions());
}

scan from_wire(wire::Scan::Reader r) {
  scan s;
  s.start = str(r.getStart());
  s.start_inclusive = r.getStartInclusive();
  s.stop = str(r.getStop());
  s.stop_inclusive = r.getStopInclusive();
  s.reversed_ = r.getReversed();
  s.limit_ = r.getLimit();
  s.batch_ = r.getBatch();
  s.max_result_size_ = r.getMaxResultSize();
  s.allow_partial_ = r.getAllowPartialResults();
  s.caching_ = r.getCaching();
  s.options = from_wire(r.getOptions());
  return s;
}

void to_wire(const family_descriptor& f, wire::FamilyDescriptor::Builder b) {
  b.setName(text(f.name));
  b.setMaxVersions(f.max_versions);
  b.setTtlSeconds(f.ttl_seconds);
  b.setMaxValueBytes(f.max_value_bytes);
  b.setTimeSeries(f.kind == family_kind::time_series);
}

family_descriptor from_wire(wire::FamilyDescriptor::Reader r) {
  family_descriptor f;
  f.name = str(r.getName());
  f.max_versions = r.getMaxVersions();
  f.ttl_seconds = r.getTtlSeconds();
  f.max_value_bytes = static_cast<std::size_t>(r.getMaxValueBytes());
  f.kind = r.getTimeSeries() ? family_kind::time_series : family_kind::normal;
  return f;
}

void to_wire(const table_descriptor& d, wire::TableDescriptor::Builder b) {
  b.setName(text(d.name));
  auto p = b.initPartitioning();
  p.setMethod(static_cast<wire::PartitionSpec::Method>(d.partitioning.how));
  p.setPartitions(d.partitioning.partitions);
  p.setPrefixBytes(d.partitioning.prefix_bytes);
  auto bounds = p.initBounds(static_cast<unsigned>(d.partitioning.bounds.size()));
  for (unsigned i = 0; i < bounds.size(); ++i) bounds.set(i, data(d.partitioning.bounds[i]));
  auto fs = b.initFamilies(static_cast<unsigned>(d.families.size()));
  for (unsigned i = 0; i < fs.size(); ++i) to_wire(d.families[i], fs[i]);
}

result<table_descriptor> from_wire(wire::TableDescriptor::Reader r) {
  table_descriptor d;
  d.name = str(r.getName());
  auto p = r.getPartitioning();
  auto method = static_cast<unsigned>(p.getMethod());
  if (method > static_cast<unsigned>(partition_spec::method::range))
    return status{code::invalid_argument, "unknown partitioning method"};
  d.partitioning.how = static_cast<partition_spec::method>(method);
  d.partitioning.partitions = p.getPartitions();
  d.partitioning.prefix_bytes = p.getPrefixBytes();
  for (auto b : p.getBounds()) d.partitioning.bounds.push_back(str(b));
  for (auto f : r.getFamilies()) d.families.push_back(from_wire(f));
  return d;
}

}  // namespace cellar::rpc
