// Fuzz target: the filter language (cellar/filter.h), and a parsed filter run by a scan.
// Properties: text either parses or fails with INVALID_ARGUMENT naming a position; a
// parsed filter prints (to_string) as text that parses to the same filter, printing the
// same; a scan with it over a small table ends OK or with INVALID_ARGUMENT / UNSUPPORTED,
// never INTERNAL, and changes no cell.
#include <string>
#include <string_view>

#include "cellar/filter.h"
#include "cellar/store.h"
#include "fuzz_target.h"

namespace {

constexpr int rows = 24;

cellar::table& small_table() {
  static cellar::table* t = [] {
    cellar::store_options o;
    o.worker_threads = 1;
    o.maintenance_interval = std::chrono::milliseconds(0);
    auto opened = cellar::store::open(o);
    fuzz_check(opened.is_ok(), "a memory store opens");
    auto* s = opened.value().release();  // lives for the process
    cellar::table_descriptor d;
    d.name = "t";
    d.partitioning = cellar::partition_spec::hash(3);
    d.families = {cellar::family_descriptor{"f"}, cellar::family_descriptor{"g"}};
    fuzz_check(s->create_table(d, cellar::schema_origin::oceanbase_ddl).is_ok(), "the table is created");
    auto tb = s->open_table("t");
    fuzz_check(tb.is_ok(), "the table opens");
    for (int i = 0; i < rows; ++i) {
      cellar::put p("r" + std::to_string(i));
      for (std::int64_t ts = 1; ts <= 2; ++ts) p.add("f", "a", ts, "v" + std::to_string((i + ts) % 5));
      p.add("f", "b", 3, std::string(8, static_cast<char>(i)));
      p.add("g", "c", 4, "x" + std::to_string(i % 3));
      fuzz_check(tb.value().put(p).is_ok(), "a row is written");
    }
    return new cellar::table(std::move(tb.value()));
  }();
  return *t;
}

std::size_t count_cells(cellar::table& t, const cellar::scan& s, cellar::status* st) {
  auto sc = t.scan(s);
  if (!sc) {
    *st = sc.error();
    return 0;
  }
  std::size_t n = 0;
  for (;;) {
    auto page = sc.value().next(64);
    if (!page) {
      *st = page.error();
      return n;
    }
    if (page->empty()) return n;
    for (const auto& r : page.value()) n += r.cells.size();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = cellar::parse_filter(text);
  if (!parsed) {
    fuzz_check(parsed.code() == cellar::code::invalid_argument, "a refused filter is INVALID_ARGUMENT");
    fuzz_check(parsed.error().message().find("position") != std::string::npos, "a refusal names the position");
    return 0;
  }
  const auto& f = parsed.value();
  const auto printed = cellar::to_string(f);
  auto again = cellar::parse_filter(printed);
  fuzz_check(again.is_ok(), "a printed filter parses");
  fuzz_check(cellar::to_string(again.value()) == printed, "a printed filter prints the same once parsed");
  // Equal once parsed again, except for a RandomRowFilter whose chance is a NaN (any int's
  // bits), which is never == itself: the printed text above already compared it.
  fuzz_check(again.value() == f || printed.find("RandomRowFilter") != std::string::npos,
             "a printed filter parses to the same filter");

  auto& t = small_table();
  cellar::status st;
  for (bool reversed : {false, true}) {
    cellar::scan s = cellar::scan().filter(f);
    if (reversed) s.reversed();
    st = cellar::status::ok();
    count_cells(t, s, &st);
    fuzz_check(st.is_ok() || st.code() == cellar::code::invalid_argument || st.code() == cellar::code::unsupported,
               "a filtered scan ends OK or refuses the filter clearly");
  }
  cellar::status all;
  fuzz_check(count_cells(t, cellar::scan().all_versions(), &all) == rows * 4 && all.is_ok(),
             "a filter changes no cell");
  return 0;
}
