// admin/bulk_load.cc: cellar-admin's bulk load (admin/transfer.h: bulk_load_tsv).
//
// Each cell is copied once on this side: from the input (mapped, not read into strings)
// into its partition's file. Parsing keeps a reference per line, not per cell, and where
// its fields start; each partition's lines are sorted once by row, and the file is then
// written in key order (family, row, qualifier, newest timestamp first) straight from the
// sorted lines, one partition at a time through one reused buffer.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>

#include "admin/transfer.h"
#include "persist/codec.h"
#include "persist/loaded_cells.h"
#include "route/router.h"
#include "store/snapshot_files.h"

namespace cellar::admin {

namespace fs = std::filesystem;
using namespace cellar::detail;

namespace {

status at_line(std::uint64_t line, const status& st) {
  return {st.code(), "line " + std::to_string(line) + ": " + st.message()};
}

// The input, mapped read-only (or read whole when it cannot be mapped: a pipe).
struct input {
  std::shared_ptr<const void> owner;
  std::string_view data;
};

result<input> open_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return status{code::io_error, "cannot open '" + path + "'"};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size == 0) {
      ::close(fd);
      return input{};
    }
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return status{code::io_error, "cannot map '" + path + "'"};
    std::shared_ptr<const void> owner(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
    return input{std::move(owner), std::string_view(static_cast<const char*>(p), size)};
  }
  auto text = std::make_shared<std::string>();
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return status{code::io_error, "cannot read '" + path + "'"};
    }
    if (n == 0) break;
    text->append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  std::string_view data = *text;
  return input{std::move(text), data};
}

// Splits `line` at `sep` into `out` (cleared first).
void split_into(std::string_view line, char sep, std::vector<std::string_view>& out) {
  out.clear();
  for (;;) {
    const void* at = std::memchr(line.data(), sep, line.size());
    if (at == nullptr) {
      out.push_back(line);
      return;
    }
    const std::size_t n = static_cast<const char*>(at) - line.data();
    out.push_back(line.substr(0, n));
    line.remove_prefix(n + 1);
  }
}

// One input line, routed to its partition. The row's first 16 bytes are kept here too,
// as two big-endian words (zero-padded), so that sorting rarely reads the input itself:
// each read there would be a cache and TLB miss on a line far from the last. Where its
// fields start is kept from the parse (field_starts), so the line is not split again.
struct line_ref {
  std::uint64_t head[2];
  std::string_view row;
  std::string_view line;
  std::int64_t ts;
  std::uint32_t index;  // among the lines kept, in input order

  line_ref(std::string_view r, std::string_view l, std::int64_t t, std::uint32_t i)
      : head{word(r, 0), word(r, 8)}, row(r), line(l), ts(t), index(i) {}
  static std::uint64_t word(std::string_view r, std::size_t at) {
    std::uint64_t w = 0;
    for (std::size_t i = 0; i < 8; ++i) w = w << 8 | (at + i < r.size() ? static_cast<unsigned char>(r[at + i]) : 0);
    return w;
  }
  // The rows' byte order (std::string_view's).
  friend bool operator<(const line_ref& a, const line_ref& b) {
    if (a.head[0] != b.head[0]) return a.head[0] < b.head[0];
    if (a.head[1] != b.head[1]) return a.head[1] < b.head[1];
    // The first 16 bytes agree, a shorter row read as zero-padded: the rest decides, then
    // the length.
    const std::string_view ra = a.row.size() > 16 ? a.row.substr(16) : std::string_view{};
    const std::string_view rb = b.row.size() > 16 ? b.row.substr(16) : std::string_view{};
    if (const int c = ra.compare(rb); c != 0) return c < 0;
    return a.row.size() < b.row.size();
  }
  bool same_row(const line_ref& o) const { return head[0] == o.head[0] && head[1] == o.head[1] && row == o.row; }
};

// By row; lines of one row in input order.
bool row_then_input(const line_ref& a, const line_ref& b) {
  if (a < b) return true;
  return !(b < a) && a.index < b.index;
}

// Where the fields of every line kept start, `fields` per line, as offsets into the line.
struct field_starts {
  std::size_t fields = 0;
  std::vector<std::uint32_t> at;

  void add(std::string_view line, const std::vector<std::string_view>& f) {
    for (const auto& x : f) at.push_back(static_cast<std::uint32_t>(x.data() - line.data()));
  }
  // The fields of `l` into `out`.
  void of(const line_ref& l, std::vector<std::string_view>& out) const {
    out.clear();
    const std::uint32_t* s = at.data() + std::size_t{l.index} * fields;
    for (std::size_t k = 0; k < fields; ++k) {
      const std::size_t end = k + 1 < fields ? s[k + 1] - 1 : l.line.size();
      out.push_back(l.line.substr(s[k], end - s[k]));
    }
  }
};

// The --columns spec as the files need it: for each family id (1, 2, ... in the table's
// order), its columns in qualifier order.
struct column_plan {
  struct column {
    std::size_t field;
    std::string qualifier;
    std::size_t order;    // its place in --columns: of two equal cells the later one wins
    std::string escaped;  // the qualifier as a cell key holds it (encode_cell_key_qualifier)
  };
  std::vector<std::vector<column>> by_family;  // index: family id - 1
  bool repeats = false;                        // a family:qualifier named twice
};

// Appends the cells of the lines [first, last) (one row) of family `fid` to `file`, in
// key order; counts them into *cells. Of two cells with the same key the one of the later
// line (then the later column) wins.
void append_row(std::string& file, std::string& key, std::uint32_t fid, const std::vector<column_plan::column>& cols,
                bool repeats, const line_ref* first, const line_ref* last, const field_starts& starts,
                std::vector<std::string_view>& fields, std::uint64_t* cells) {
  constexpr std::int64_t no_ttl = std::numeric_limits<std::int64_t>::max();
  if (last - first == 1 && !repeats) {
    starts.of(*first, fields);
    // The family and row are the same for every cell, so they are encoded once.
    key.clear();
    encode_cell_key_row(key, fid, first->row);
    const std::size_t row_end = key.size();
    for (const auto& c : cols) {
      key.resize(row_end);
      key += c.escaped;
      encode_cell_key_ts(key, first->ts);
      append_cell_record(file, key, no_ttl, fields[c.field]);
      ++*cells;
    }
    return;
  }
  struct cand {
    const column_plan::column* col;
    std::int64_t ts;
    std::size_t seq;
    std::string value;
  };
  std::vector<cand> all;
  for (const line_ref* l = first; l != last; ++l) {
    starts.of(*l, fields);
    for (const auto& c : cols)
      all.push_back({&c, l->ts, static_cast<std::size_t>(l - first) * 1024 + c.order, std::string(fields[c.field])});
  }
  std::sort(all.begin(), all.end(), [](const cand& a, const cand& b) {
    if (int c = a.col->qualifier.compare(b.col->qualifier); c != 0) return c < 0;
    if (a.ts != b.ts) return a.ts > b.ts;
    return a.seq > b.seq;
  });
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0 && all[i].ts == all[i - 1].ts && all[i].col->qualifier == all[i - 1].col->qualifier) continue;
    key.clear();
    encode_cell_key(key, fid, first->row, all[i].col->qualifier, all[i].ts);
    append_cell_record(file, key, no_ttl, all[i].value);
    ++*cells;
  }
}

}  // namespace

result<transfer_stats> bulk_load_tsv(connection& c, const std::string& table, const std::string& path,
                                     const bulk_options& o, const progress_fn& on_progress) {
  auto cols = parse_columns(o.columns);
  if (!cols) return cols.error();
  if (cols->columns.size() > 1024) return status{code::invalid_argument, "--columns names over 1,024 columns"};
  auto desc = c.describe(table);
  if (!desc) return desc.error();
  // The files' family ids: 1, 2, ... in the order of the table's families.
  std::map<std::string, std::uint32_t> family_ids;
  std::vector<std::size_t> max_value;  // by family id - 1
  snapshot_manifest m;
  m.kind = "bulkload";
  m.table = table;
  m.partitions = desc->partitioning.count();
  for (const auto& f : desc->families) {
    const auto id = static_cast<std::uint32_t>(family_ids.size() + 1);
    family_ids[f.name] = id;
    max_value.push_back(f.max_value_bytes);
    m.families[id] = f.name;
  }
  column_plan plan;
  plan.by_family.resize(family_ids.size());
  std::vector<std::uint32_t> column_family;  // by --columns entry
  for (std::size_t k = 0; k < cols->columns.size(); ++k) {
    const auto& col = cols->columns[k];
    auto it = family_ids.find(col.family);
    if (it == family_ids.end())
      return status{code::family_not_found, "table '" + table + "' has no family '" + col.family + "'"};
    if (col.qualifier.size() > max_qualifier_bytes)
      return status{code::too_large,
                    "the qualifier of --columns entry '" + col.family + ":" + col.qualifier + "' is over its limit"};
    column_family.push_back(it->second);
    std::string escaped;
    encode_cell_key_qualifier(escaped, col.qualifier);
    plan.by_family[it->second - 1].push_back({col.field, col.qualifier, k, std::move(escaped)});
  }
  for (auto& f : plan.by_family) {
    std::stable_sort(f.begin(), f.end(), [](const auto& a, const auto& b) { return a.qualifier < b.qualifier; });
    for (std::size_t i = 1; i < f.size(); ++i) plan.repeats = plan.repeats || f[i].qualifier == f[i - 1].qualifier;
  }
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();

  auto in = open_input(path);
  if (!in) return in.error();
  const std::string_view text = in->data;
  const std::uint64_t total = text.size();

  // Every line checked and routed; a reference kept per line.
  std::vector<std::vector<line_ref>> parts(m.partitions);
  std::vector<std::string_view> fields;
  field_starts starts;
  starts.fields = cols->fields;
  std::uint64_t rows = 0, n = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const void* nl = std::memchr(text.data() + pos, '\n', text.size() - pos);
    const std::size_t end = nl ? static_cast<const char*>(nl) - text.data() : text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++n;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    split_into(line, o.separator, fields);
    if (fields.size() != cols->fields)
      return at_line(n, {code::invalid_argument, "expected " + std::to_string(cols->fields) + " fields, found " +
                                                     std::to_string(fields.size())});
    const std::string_view row = fields[cols->row];
    if (row.empty()) return at_line(n, {code::invalid_argument, "an empty row key"});
    if (row.size() > max_row_key_bytes)
      return at_line(n, {code::too_large, "the row key has " + std::to_string(row.size()) +
                                              " bytes, over the limit of " + std::to_string(max_row_key_bytes)});
    std::int64_t ts = now;
    if (cols->ts) {
      const auto t = fields[*cols->ts];
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), ts);
      if (ec != std::errc() || p != t.data() + t.size())
        return at_line(n, {code::invalid_argument, "the timestamp '" + std::string(t) + "' is not a number"});
    }
    for (std::size_t k = 0; k < cols->columns.size(); ++k) {
      const auto& col = cols->columns[k];
      if (fields[col.field].size() > max_value[column_family[k] - 1])
        return at_line(n, {code::too_large,
                           "the value of " + col.family + ":" + col.qualifier + " is over its family's limit"});
    }
    if (rows >= std::numeric_limits<std::uint32_t>::max())
      return at_line(n, {code::too_large, "over 4,294,967,295 lines to load at once"});
    parts[partition_of(desc->partitioning, row)].emplace_back(row, line, ts, static_cast<std::uint32_t>(rows));
    starts.add(line, fields);
    ++rows;
    if (on_progress && (rows & 0xffff) == 0) on_progress(pos, total);
  }
  if (on_progress) on_progress(total, total);

  std::string dir = o.staging;
  const bool temporary = dir.empty();
  if (temporary)
    dir = (fs::temp_directory_path() / ("cellar-bulkload-" + std::to_string(::getpid()) + "-" + std::to_string(now)))
              .string();
  transfer_stats stats;
  stats.rows = rows;
  stats.bytes = total;
  auto write_files = [&]() -> status {
    if (auto st = create_snapshot_dir(dir); !st) return st;
    std::string file, key;
    for (std::uint32_t p = 0; p < m.partitions; ++p) {
      auto& lines = parts[p];
      std::sort(lines.begin(), lines.end(), row_then_input);
      file = cell_file_header();
      std::uint64_t cells = 0;
      for (std::uint32_t f = 0; f < plan.by_family.size(); ++f) {
        if (plan.by_family[f].empty()) continue;
        for (std::size_t i = 0; i < lines.size();) {
          std::size_t j = i + 1;
          while (j < lines.size() && lines[j].same_row(lines[i])) ++j;
          append_row(file, key, f + 1, plan.by_family[f], plan.repeats, lines.data() + i, lines.data() + j, starts,
                     fields, &cells);
          i = j;
        }
      }
      lines = {};
      if (cells) ++stats.partitions;
      stats.cells += cells;
      const std::string name = part_file_name(p);
      m.files[name] = {file.size(), cells, crc32c(file)};
      if (auto st = write_snapshot_file(dir, name, file, /*durable=*/false); !st) return st;
    }
    return write_snapshot_manifest(dir, m, /*durable=*/false);
  };
  auto st = write_files();
  if (st) {
    auto r = c.bulk_load(table, dir);
    if (!r) st = r.error();
  }
  std::error_code ec;
  if (temporary) fs::remove_all(dir, ec);
  if (!st) return st;
  return stats;
}

}  // namespace cellar::admin
