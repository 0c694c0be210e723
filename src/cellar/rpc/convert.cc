#include "rpc/convert.h"

#include <cstring>

#include "partition/memtable.h"
#include "util/coding.h"

namespace cellar::rpc {

namespace {

capnp::Data::Reader data(const std::string& s) { return {reinterpret_cast<const capnp::byte*>(s.data()), s.size()}; }

std::string str(capnp::Data::Reader d) { return {reinterpret_cast<const char*>(d.begin()), d.size()}; }
std::string str(capnp::Text::Reader t) { return {t.cStr(), t.size()}; }
capnp::Text::Reader text(const std::string& s) { return {s.data(), s.size()}; }

void to_wire(const time_range& r, wire::TimeRange::Builder b) {
  b.setMin(r.min);
  b.setMax(r.max);
}

time_range from_wire(wire::TimeRange::Reader r) { return {r.getMin(), r.getMax()}; }

// ---- filters: a tree, sent as its nodes in prefix order -------------------------------------

void to_wire(const comparator& c, wire::Comparator::Builder b) {
  b.setKind(static_cast<wire::Comparator::Kind>(c.type()));
  b.setValue(data(c.value()));
}

result<comparator> from_wire(wire::Comparator::Reader r) {
  std::string v = str(r.getValue());
  using W = wire::Comparator::Kind;
  switch (r.getKind()) {
    case W::BINARY: return comparator::binary(std::move(v));
    case W::BINARY_PREFIX: return comparator::binary_prefix(std::move(v));
    case W::SUBSTRING: return comparator::substring(std::move(v));
    case W::REGEX_STRING: return comparator::regex(std::move(v));
    case W::NULL_: return comparator::null();
    case W::BIT_AND: return comparator::bit_and(std::move(v));
    case W::BIT_OR: return comparator::bit_or(std::move(v));
    case W::BIT_XOR: return comparator::bit_xor(std::move(v));
    case W::LONG: {
      if (v.size() != 8) break;
      return comparator::long_value(static_cast<std::int64_t>(detail::load_u64(v.data())));
    }
  }
  return status{code::invalid_argument, "filter: unknown or malformed comparator"};
}

std::size_t count_nodes(const filter& f) {
  return std::visit(
      [](const auto& x) -> std::size_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, skip_filter> || std::is_same_v<T, while_match_filter>) {
          return 1 + count_nodes(x.inner);
        } else if constexpr (std::is_same_v<T, filter_list>) {
          std::size_t n = 1;
          for (const auto& c : x.filters) n += count_nodes(c);
          return n;
        } else {
          return 1;
        }
      },
      f.body());
}

template <class Spec, class B>
void check_to_wire(const Spec& x, B b) {
  b.setFamily(data(x.family));
  b.setQualifier(data(x.qualifier));
  b.setOp(static_cast<wire::CompareOp>(x.op));
  to_wire(x.cmp, b.initComparator());
  if constexpr (!std::is_same_v<Spec, column_value_filter>) {
    b.setFilterIfMissing(x.filter_if_missing);
    b.setLatestVersionOnly(x.latest_version_only);
  }
}

template <class Spec>
void compare_to_wire(const Spec& x, wire::FilterNode::CompareSpec::Builder b) {
  b.setOp(static_cast<wire::CompareOp>(x.op));
  to_wire(x.cmp, b.initComparator());
}

void node_to_wire(const filter& f, capnp::List<wire::FilterNode>::Builder nodes, unsigned& i) {
  auto n = nodes[i++];
  if (!f.invalid_reason()) {  // a placeholder from filter::invalid: send what the server refuses
    n.initList().setCount(0);
    return;
  }
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, row_filter>) {
          compare_to_wire(x, n.initRow());
        } else if constexpr (std::is_same_v<T, family_filter>) {
          compare_to_wire(x, n.initFamily());
        } else if constexpr (std::is_same_v<T, qualifier_filter>) {
          compare_to_wire(x, n.initQualifier());
        } else if constexpr (std::is_same_v<T, value_filter>) {
          compare_to_wire(x, n.initValue());
        } else if constexpr (std::is_same_v<T, prefix_filter>) {
          n.setPrefix(data(x.prefix));
        } else if constexpr (std::is_same_v<T, column_prefix_filter>) {
          n.setColumnPrefix(data(x.prefix));
        } else if constexpr (std::is_same_v<T, multiple_column_prefix_filter>) {
          auto l = n.initMultipleColumnPrefix(static_cast<unsigned>(x.prefixes.size()));
          for (unsigned k = 0; k < l.size(); ++k) l.set(k, data(x.prefixes[k]));
        } else if constexpr (std::is_same_v<T, column_range_filter>) {
          auto b = n.initColumnRange();
          b.setMin(data(x.min));
          b.setMinInclusive(x.min_inclusive);
          b.setMax(data(x.max));
          b.setMaxInclusive(x.max_inclusive);
        } else if constexpr (std::is_same_v<T, column_count_get_filter>) {
          n.setColumnCountGet(x.limit);
        } else if constexpr (std::is_same_v<T, column_pagination_filter>) {
          auto b = n.initColumnPagination();
          b.setLimit(x.limit);
          b.setOffset(x.offset);
          b.setHasColumnOffset(x.column_offset.has_value());
          if (x.column_offset) b.setColumnOffset(data(*x.column_offset));
        } else if constexpr (std::is_same_v<T, page_filter>) {
          n.setPage(x.page_size);
        } else if constexpr (std::is_same_v<T, single_column_value_filter>) {
          check_to_wire(x, n.initSingleColumnValue());
        } else if constexpr (std::is_same_v<T, single_column_value_exclude_filter>) {
          check_to_wire(x, n.initSingleColumnValueExclude());
        } else if constexpr (std::is_same_v<T, column_value_filter>) {
          check_to_wire(x, n.initColumnValue());
        } else if constexpr (std::is_same_v<T, dependent_column_filter>) {
          auto b = n.initDependentColumn();
          b.setFamily(data(x.family));
          b.setQualifier(data(x.qualifier));
          b.setDropDependentColumn(x.drop_dependent_column);
          b.setOp(static_cast<wire::CompareOp>(x.op));
          b.setHasComparator(x.cmp.has_value());
          if (x.cmp) to_wire(*x.cmp, b.initComparator());
        } else if constexpr (std::is_same_v<T, first_key_only_filter>) {
          n.setFirstKeyOnly();
        } else if constexpr (std::is_same_v<T, key_only_filter>) {
          n.setKeyOnly(x.len_as_val);
        } else if constexpr (std::is_same_v<T, inclusive_stop_filter>) {
          n.setInclusiveStop(data(x.stop_row));
        } else if constexpr (std::is_same_v<T, timestamps_filter>) {
          auto b = n.initTimestamps();
          auto l = b.initTimestamps(static_cast<unsigned>(x.timestamps.size()));
          for (unsigned k = 0; k < l.size(); ++k) l.set(k, x.timestamps[k]);
          b.setCanHint(x.can_hint);
        } else if constexpr (std::is_same_v<T, random_row_filter>) {
          n.setRandomRow(x.chance);
        } else if constexpr (std::is_same_v<T, skip_filter>) {
          n.setSkip();
          node_to_wire(x.inner, nodes, i);
        } else if constexpr (std::is_same_v<T, while_match_filter>) {
          n.setWhileMatch();
          node_to_wire(x.inner, nodes, i);
        } else if constexpr (std::is_same_v<T, filter_list>) {
          auto b = n.initList();
          b.setMustPassOne(x.operation == filter_list::op::must_pass_one);
          b.setCount(static_cast<std::uint32_t>(x.filters.size()));
          for (const auto& c : x.filters) node_to_wire(c, nodes, i);
        } else if constexpr (std::is_same_v<T, multi_row_range_filter>) {
          auto l = n.initMultiRowRange(static_cast<unsigned>(x.ranges.size()));
          for (unsigned k = 0; k < l.size(); ++k) {
            l[k].setStart(data(x.ranges[k].start));
            l[k].setStartInclusive(x.ranges[k].start_inclusive);
            l[k].setStop(data(x.ranges[k].stop));
            l[k].setStopInclusive(x.ranges[k].stop_inclusive);
          }
        } else if constexpr (std::is_same_v<T, fuzzy_row_filter>) {
          auto l = n.initFuzzyRow(static_cast<unsigned>(x.keys.size()));
          for (unsigned k = 0; k < l.size(); ++k) {
            l[k].setKey(data(x.keys[k].key));
            l[k].setMask(data(x.keys[k].mask));
          }
        }
      },
      f.body());
}

result<compare_op> op_from_wire(wire::CompareOp op) {
  const auto v = static_cast<unsigned>(op);
  if (v > static_cast<unsigned>(compare_op::no_op)) return status{code::invalid_argument, "filter: unknown compare op"};
  return static_cast<compare_op>(v);
}

template <class Spec, class R>
result<filter> check_from_wire(R r) {
  Spec x;
  x.family = str(r.getFamily());
  x.qualifier = str(r.getQualifier());
  auto op = op_from_wire(r.getOp());
  if (!op) return op.error();
  x.op = op.value();
  auto c = from_wire(r.getComparator());
  if (!c) return c.error();
  x.cmp = std::move(c.value());
  if constexpr (!std::is_same_v<Spec, column_value_filter>) {
    x.filter_if_missing = r.getFilterIfMissing();
    x.latest_version_only = r.getLatestVersionOnly();
  }
  return filter(std::move(x));
}

result<filter> node_from_wire(capnp::List<wire::FilterNode>::Reader nodes, unsigned& i, int depth) {
  if (depth > max_filter_depth)
    return status{code::invalid_argument, "filter nests deeper than " + std::to_string(max_filter_depth) + " levels"};
  if (i >= nodes.size()) return status{code::invalid_argument, "filter: a list or SKIP/WHILE node lacks its children"};
  auto n = nodes[i++];
  auto compare = [&](auto spec, auto r) -> result<filter> {
    auto op = op_from_wire(r.getOp());
    if (!op) return op.error();
    auto c = from_wire(r.getComparator());
    if (!c) return c.error();
    spec.op = op.value();
    spec.cmp = std::move(c.value());
    return filter(std::move(spec));
  };
  using W = wire::FilterNode;
  switch (n.which()) {
    case W::ROW: return compare(row_filter{}, n.getRow());
    case W::FAMILY: return compare(family_filter{}, n.getFamily());
    case W::QUALIFIER: return compare(qualifier_filter{}, n.getQualifier());
    case W::VALUE: return compare(value_filter{}, n.getValue());
    case W::PREFIX: return filter(prefix_filter{str(n.getPrefix())});
    case W::COLUMN_PREFIX: return filter(column_prefix_filter{str(n.getColumnPrefix())});
    case W::MULTIPLE_COLUMN_PREFIX: {
      multiple_column_prefix_filter m;
      for (auto p : n.getMultipleColumnPrefix()) m.prefixes.push_back(str(p));
      return filter(std::move(m));
    }
    case W::COLUMN_RANGE: {
      auto r = n.getColumnRange();
      return filter(column_range_filter{str(r.getMin()), r.getMinInclusive(), str(r.getMax()), r.getMaxInclusive()});
    }
    case W::COLUMN_COUNT_GET: return filter(column_count_get_filter{n.getColumnCountGet()});
    case W::COLUMN_PAGINATION: {
      auto r = n.getColumnPagination();
      column_pagination_filter p{r.getLimit(), r.getOffset(), std::nullopt};
      if (r.getHasColumnOffset()) p.column_offset = str(r.getColumnOffset());
      return filter(std::move(p));
    }
    case W::PAGE: return filter(page_filter{n.getPage()});
    case W::SINGLE_COLUMN_VALUE: return check_from_wire<single_column_value_filter>(n.getSingleColumnValue());
    case W::SINGLE_COLUMN_VALUE_EXCLUDE:
      return check_from_wire<single_column_value_exclude_filter>(n.getSingleColumnValueExclude());
    case W::COLUMN_VALUE: return check_from_wire<column_value_filter>(n.getColumnValue());
    case W::DEPENDENT_COLUMN: {
      auto r = n.getDependentColumn();
      dependent_column_filter d;
      d.family = str(r.getFamily());
      d.qualifier = str(r.getQualifier());
      d.drop_dependent_column = r.getDropDependentColumn();
      auto op = op_from_wire(r.getOp());
      if (!op) return op.error();
      d.op = op.value();
      if (r.getHasComparator()) {
        auto c = from_wire(r.getComparator());
        if (!c) return c.error();
        d.cmp = std::move(c.value());
      }
      return filter(std::move(d));
    }
    case W::FIRST_KEY_ONLY: return filter(first_key_only_filter{});
    case W::KEY_ONLY: return filter(key_only_filter{n.getKeyOnly()});
    case W::INCLUSIVE_STOP: return filter(inclusive_stop_filter{str(n.getInclusiveStop())});
    case W::TIMESTAMPS: {
      timestamps_filter t;
      for (auto ts : n.getTimestamps().getTimestamps()) t.timestamps.push_back(ts);
      t.can_hint = n.getTimestamps().getCanHint();
      return filter(std::move(t));
    }
    case W::RANDOM_ROW: return filter(random_row_filter{n.getRandomRow()});
    case W::SKIP:
    case W::WHILE_MATCH: {
      auto inner = node_from_wire(nodes, i, depth + 1);
      if (!inner) return inner.error();
      if (n.which() == W::SKIP) return filter(skip_filter{std::move(inner.value())});
      return filter(while_match_filter{std::move(inner.value())});
    }
    case W::LIST: {
      auto r = n.getList();
      if (r.getCount() > nodes.size() - i)
        return status{code::invalid_argument, "filter: a list has more children than nodes follow"};
      filter_list l;
      l.operation = r.getMustPassOne() ? filter_list::op::must_pass_one : filter_list::op::must_pass_all;
      for (std::uint32_t k = 0; k < r.getCount(); ++k) {
        auto c = node_from_wire(nodes, i, depth + 1);
        if (!c) return c.error();
        l.filters.push_back(std::move(c.value()));
      }
      return filter(std::move(l));
    }
    case W::MULTI_ROW_RANGE: {
      multi_row_range_filter m;
      for (auto r : n.getMultiRowRange())
        m.ranges.push_back({str(r.getStart()), r.getStartInclusive(), str(r.getStop()), r.getStopInclusive()});
      return filter(std::move(m));
    }
    case W::FUZZY_ROW: {
      fuzzy_row_filter fz;
      for (auto k : n.getFuzzyRow()) fz.keys.push_back({str(k.getKey()), str(k.getMask())});
      return filter(std::move(fz));
    }
  }
  return status{code::invalid_argument, "filter: unknown filter kind"};
}

// The filter of a request: structured, or text in the filter language. A bad one becomes
// a placeholder that the store's validation refuses with the reason (rpc/convert.h).
std::optional<filter> filter_from_wire(wire::Filter::Reader f, capnp::Text::Reader text) {
  const bool has_text = text.size() > 0;
  const auto nodes = f.getNodes();
  if (nodes.size() == 0 && !has_text) return std::nullopt;
  if (nodes.size() > 0 && has_text)
    return filter::invalid({code::invalid_argument, "give the filter either structured or as text, not both"});
  if (has_text) {
    auto p = parse_filter(std::string_view(text.cStr(), text.size()));
    if (!p) return filter::invalid(p.error());
    return std::move(p.value());
  }
  unsigned i = 0;
  auto r = node_from_wire(nodes, i, 1);
  if (!r) return filter::invalid(r.error());
  if (i != nodes.size()) return filter::invalid({code::invalid_argument, "filter: nodes left over after the tree"});
  return std::move(r.value());
}

void filter_to_wire(const filter& f, wire::Filter::Builder b) {
  auto nodes = b.initNodes(static_cast<unsigned>(count_nodes(f)));
  unsigned i = 0;
  node_to_wire(f, nodes, i);
}

}  // namespace

void to_wire(const filter& f, wire::Filter::Builder b) { filter_to_wire(f, b); }

result<filter> from_wire(wire::Filter::Reader r) {
  auto f = filter_from_wire(r, capnp::Text::Reader());
  if (!f) return status{code::invalid_argument, "filter: no nodes"};
  if (!f->invalid_reason()) return f->invalid_reason();
  return std::move(*f);
}

namespace {

void to_wire(const read_options& o, wire::ReadOptions::Builder b) {
  auto cols = b.initColumns(static_cast<unsigned>(o.columns.families.size()));
  for (unsigned i = 0; i < cols.size(); ++i) {
    const auto& fc = o.columns.families[i];
    cols[i].setFamily(text(fc.family));
    auto qs = cols[i].initQualifiers(static_cast<unsigned>(fc.qualifiers.size()));
    for (unsigned j = 0; j < qs.size(); ++j) qs.set(j, data(fc.qualifiers[j]));
  }
  b.setMaxVersions(o.max_versions);
  b.setMaxVersionsGiven(o.max_versions_given);
  to_wire(o.range, b.initRange());
  b.setMaxPerFamily(o.max_per_family);
  b.setOffsetPerFamily(o.offset_per_family);
  if (o.filter) filter_to_wire(*o.filter, b.initFilter());
  b.setCellTtls(o.cell_ttls);
}

read_options from_wire(wire::ReadOptions::Reader r) {
  read_options o;
  for (auto fc : r.getColumns()) {
    column_selection::family_columns f{str(fc.getFamily()), {}};
    for (auto q : fc.getQualifiers()) f.qualifiers.push_back(str(q));
    o.columns.families.push_back(std::move(f));
  }
  o.max_versions = r.getMaxVersions();
  o.max_versions_given = r.getMaxVersionsGiven();
  o.range = from_wire(r.getRange());
  o.max_per_family = r.getMaxPerFamily();
  o.offset_per_family = r.getOffsetPerFamily();
  o.filter = filter_from_wire(r.getFilter(), r.getFilterText());
  o.cell_ttls = r.getCellTtls();
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
  put p;
  cellar::rpc::from_wire(r, p);
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
    d.entries.push_back(
        {static_cast<deletion::scope>(scope), str(e.getFamily()), str(e.getQualifier()), e.getTimestamp()});
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

void from_wire(wire::Put::Reader r, put& out) {
  auto row = r.getRow();
  out.row.assign(reinterpret_cast<const char*>(row.begin()), row.size());
  out.timestamp = r.getTimestamp();
  auto es = r.getEntries();
  out.entries.resize(es.size());
  for (unsigned i = 0; i < es.size(); ++i) {
    auto& e = out.entries[i];
    const auto w = es[i];  // once: each es[i] checks the list again
    auto family = w.getFamily();
    auto qualifier = w.getQualifier();
    auto value = w.getValue();
    e.family.assign(family.cStr(), family.size());
    e.qualifier.assign(reinterpret_cast<const char*>(qualifier.begin()), qualifier.size());
    e.timestamp = w.getTimestamp();
    e.value.assign(reinterpret_cast<const char*>(value.begin()), value.size());
  }
  out.ttl_ms_.reset();
  if (r.getHasTtl()) out.ttl_ms_ = r.getTtlMs();
}

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
          if (o.filter) filter_to_wire(*o.filter, w.initFilter());
        }
      },
      op);
}

void from_wire(wire::Get::Reader g, get& out) {
  auto row = g.getRow();
  out.row.assign(reinterpret_cast<const char*>(row.begin()), row.size());
  // No options on the wire (most gets): read_options{}, whose values are ReadOptions's
  // defaults in schemas/cellar.capnp.
  if (g.hasOptions())
    out.options = from_wire(g.getOptions());
  else
    out.options = read_options{};
  out.exists_only_ = g.getExistsOnly();
}

result<batch_op> from_wire(wire::Action::Reader r) {
  switch (r.which()) {
    case wire::Action::GET: {
      get out;
      from_wire(r.getGet(), out);
      return batch_op(std::move(out));
    }
    case wire::Action::PUT: return batch_op(from_wire(r.getPut()));
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
      if (op > static_cast<unsigned>(compare_op::no_op)) return status{code::invalid_argument, "unknown compare op"};
      out.op = static_cast<compare_op>(op);
      out.filter = filter_from_wire(w.getFilter(), w.getFilterText());
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
    auto out = cells[i];  // one element lookup per cell, not one per field
    // A cell's row is the result's row (a row key is never empty): sent once per row.
    if (c.row != r.row) out.setRow(data(c.row));
    out.setFamily(text(c.family));
    out.setQualifier(data(c.qualifier));
    out.setTimestamp(c.timestamp);
    out.setValue(data(c.value));
  }
  // Only a scan that asked for them has cell TTLs; a list of zeros is not sent.
  bool any_ttl = false;
  for (const auto& c : r.cells) any_ttl = any_ttl || c.ttl_ms != 0;
  if (any_ttl) {
    auto ttls = b.initTtls(static_cast<unsigned>(r.cells.size()));
    for (unsigned i = 0; i < ttls.size(); ++i) ttls.set(i, r.cells[i].ttl_ms);
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
  const auto ttls = r.getTtls();
  for (unsigned i = 0; i < ttls.size() && i < out.cells.size(); ++i) out.cells[i].ttl_ms = ttls[i];
  return out;
}

namespace {
std::uint64_t blob_words(std::size_t bytes) { return (bytes + 8) / 8; }  // room for Text's NUL
}  // namespace

std::uint64_t wire_words(const row_result& r) {
  // RowResult: 1 data word, 3 pointers, + list tag; a TTL list: a word a cell.
  std::uint64_t w = 5 + blob_words(r.row.size());
  for (const auto& c : r.cells)
    if (c.ttl_ms != 0) {
      w += r.cells.size();
      break;
    }
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

void get_views_to_wire(std::string_view row, bool exists, const std::vector<detail::read_cell_view>& cells,
                       wire::ActionResult::Builder b) {
  // In to_wire(op_result)'s order, so the bytes are the same.
  to_wire(status::ok(), b.initError());
  auto r = b.initRow();
  r.setRow(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(row.data()), row.size()));
  r.setExists(exists);
  r.setPartial(false);
  auto out = r.initCells(static_cast<unsigned>(cells.size()));
  for (unsigned i = 0; i < out.size(); ++i) {
    const auto& c = cells[i];
    auto o = out[i];  // every cell is of the result's row: its row is not sent
    o.setFamily(text(*c.family));
    o.setQualifier(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(c.qualifier.data()), c.qualifier.size()));
    o.setTimestamp(c.timestamp);
    o.setValue(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(c.value.data()), c.value.size()));
  }
  b.setProcessed(false);
}

std::uint64_t get_views_words(std::string_view row, const std::vector<detail::read_cell_view>& cells) {
  std::uint64_t w = 8 + blob_words(0) + blob_words(16) + 5 + blob_words(row.size());
  for (const auto& c : cells)
    w += 5 + blob_words(c.family->size()) + blob_words(c.qualifier.size()) + blob_words(c.value.size());
  return w;
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

void to_wire(const scan_end& e, wire::ScanEnd::Builder b) {
  b.setRow(data(e.row));
  b.setBeforeAll(e.before_all);
}

scan_end from_wire(wire::ScanEnd::Reader r) { return {str(r.getRow()), r.getBeforeAll()}; }

void to_wire(const std::map<std::string, std::string>& a, capnp::List<wire::Attribute>::Builder b) {
  unsigned i = 0;
  for (const auto& [k, v] : a) {
    b[i].setName(text(k));
    b[i].setValue(text(v));
    ++i;
  }
}

std::map<std::string, std::string> from_wire(capnp::List<wire::Attribute>::Reader r) {
  std::map<std::string, std::string> out;
  for (auto a : r) out[str(a.getName())] = str(a.getValue());
  return out;
}

void to_wire(const family_descriptor& f, wire::FamilyDescriptor::Builder b) {
  b.setName(text(f.name));
  b.setMaxVersions(f.max_versions);
  b.setTtlSeconds(f.ttl_seconds);
  b.setMaxValueBytes(f.max_value_bytes);
  b.setTimeSeries(f.kind == family_kind::time_series);
  b.setMinVersions(f.min_versions);
  to_wire(f.attributes, b.initAttributes(static_cast<unsigned>(f.attributes.size())));
}

family_descriptor from_wire(wire::FamilyDescriptor::Reader r) {
  family_descriptor f;
  f.name = str(r.getName());
  f.max_versions = r.getMaxVersions();
  f.ttl_seconds = r.getTtlSeconds();
  f.max_value_bytes = static_cast<std::size_t>(r.getMaxValueBytes());
  f.kind = r.getTimeSeries() ? family_kind::time_series : family_kind::normal;
  f.min_versions = r.getMinVersions();
  f.attributes = from_wire(r.getAttributes());
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
  to_wire(d.attributes, b.initAttributes(static_cast<unsigned>(d.attributes.size())));
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
  d.attributes = from_wire(r.getAttributes());
  return d;
}

void to_wire(const store_summary& s, wire::Summary::Builder b) {
  const auto& i = s.store;
  b.setVersion(text(s.version));
  b.setDirectory(text(i.directory));
  b.setDurability(static_cast<wire::Summary::Durability>(i.durability));
  b.setMemoryUsedBytes(i.memory_used_bytes);
  b.setMemoryLimitBytes(i.memory_limit_bytes);
  b.setSnapshots(i.snapshots);
  b.setHasLastSnapshot(i.last_snapshot.has_value());
  if (i.last_snapshot) {
    auto w = b.initLastSnapshot();
    w.setGeneration(i.last_snapshot->generation);
    w.setChanges(i.last_snapshot->changes);
    w.setBytes(i.last_snapshot->bytes);
    w.setSeconds(i.last_snapshot->seconds);
  }
  b.setLastSnapshotUnixMs(i.last_snapshot_unix_ms);
  b.setLogGeneration(i.log_generation);
  b.setLogRecords(i.log_records);
  b.setLogBytes(i.log_bytes);
  b.setLogSyncs(i.log_syncs);
  b.setRecoveryCellsLoaded(i.recovery.cells_loaded);
  b.setRecoveryLogRecords(i.recovery.log_records);
  b.setRecoverySeconds(i.recovery.seconds);
  b.setConnections(s.connections);
  b.setCluster(i.cluster);
  auto live = b.initClusterLiveNodes(static_cast<unsigned>(i.cluster_live_nodes.size()));
  for (unsigned k = 0; k < live.size(); ++k) live.set(k, i.cluster_live_nodes[k]);
  auto down = b.initClusterDownNodes(static_cast<unsigned>(i.cluster_down_nodes.size()));
  for (unsigned k = 0; k < down.size(); ++k) down.set(k, i.cluster_down_nodes[k]);
  auto tables = b.initTables(static_cast<unsigned>(s.tables.size()));
  for (unsigned k = 0; k < tables.size(); ++k) {
    to_wire(s.tables[k].descriptor, tables[k].initDescriptor());
    auto st = tables[k].initStats();
    st.setCells(s.tables[k].stats.cells);
    st.setBytes(s.tables[k].stats.bytes);
    const auto& per = s.tables[k].stats.cells_per_partition;
    auto w = st.initCellsPerPartition(static_cast<unsigned>(per.size()));
    for (unsigned p = 0; p < w.size(); ++p) w.set(p, per[p]);
  }
}

result<store_summary> from_wire(wire::Summary::Reader r) {
  store_summary s;
  auto& i = s.store;
  s.version = str(r.getVersion());
  i.directory = str(r.getDirectory());
  const auto d = static_cast<unsigned>(r.getDurability());
  if (d > static_cast<unsigned>(durability::log_sync)) return status{code::invalid_argument, "unknown durability"};
  i.durability = static_cast<durability>(d);
  i.memory_used_bytes = r.getMemoryUsedBytes();
  i.memory_limit_bytes = r.getMemoryLimitBytes();
  i.snapshots = r.getSnapshots();
  if (r.getHasLastSnapshot()) {
    auto w = r.getLastSnapshot();
    snapshot_stats last;
    last.generation = w.getGeneration();
    last.changes = w.getChanges();
    last.bytes = w.getBytes();
    last.seconds = w.getSeconds();
    i.last_snapshot = last;
  }
  i.last_snapshot_unix_ms = r.getLastSnapshotUnixMs();
  i.log_generation = r.getLogGeneration();
  i.log_records = r.getLogRecords();
  i.log_bytes = r.getLogBytes();
  i.log_syncs = r.getLogSyncs();
  i.recovery.cells_loaded = r.getRecoveryCellsLoaded();
  i.recovery.log_records = r.getRecoveryLogRecords();
  i.recovery.seconds = r.getRecoverySeconds();
  s.connections = r.getConnections();
  i.cluster = r.getCluster();
  for (auto n : r.getClusterLiveNodes()) i.cluster_live_nodes.push_back(str(n));
  for (auto n : r.getClusterDownNodes()) i.cluster_down_nodes.push_back(str(n));
  for (auto t : r.getTables()) {
    auto desc = from_wire(t.getDescriptor());
    if (!desc) return desc.error();
    table_summary ts;
    ts.descriptor = std::move(desc.value());
    ts.stats.table = ts.descriptor.name;
    ts.stats.cells = t.getStats().getCells();
    ts.stats.bytes = t.getStats().getBytes();
    for (auto n : t.getStats().getCellsPerPartition()) ts.stats.cells_per_partition.push_back(n);
    s.tables.push_back(std::move(ts));
  }
  return s;
}

void to_wire(const snapshot_info& s, wire::SnapshotInfo::Builder b) {
  b.setName(s.name);
  b.setTable(s.table);
  b.setCreatedUnixMs(s.created_unix_ms);
  b.setPartitions(s.partitions);
  b.setCells(s.cells);
  b.setBytes(s.bytes);
}

snapshot_info from_wire(wire::SnapshotInfo::Reader r) {
  snapshot_info s;
  s.name = str(r.getName());
  s.table = str(r.getTable());
  s.created_unix_ms = r.getCreatedUnixMs();
  s.partitions = r.getPartitions();
  s.cells = r.getCells();
  s.bytes = r.getBytes();
  return s;
}

}  // namespace cellar::rpc
