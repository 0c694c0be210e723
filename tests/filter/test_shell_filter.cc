// FILTER => "..." on scan, get and count: the real cellar-shell, embedded and against a real
// cellar-server, must print the same JSON for every filter kind.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>
#include <sstream>

#include "../shell/process.h"

namespace fs = std::filesystem;

namespace {

using testproc::temp_dir;

using testproc::lines;

std::vector<std::string> cells_of(const std::string& json_line) {
  std::vector<std::string> out;
  std::regex cell("\\{\"row\":\"([^\"]*)\",\"column\":\"([^\"]*)\",\"timestamp\":[0-9]+,\"value\":\"([^\"]*)\"\\}");
  for (std::sregex_iterator it(json_line.begin(), json_line.end(), cell), end; it != end; ++it)
    out.push_back((*it)[1].str() + " " + (*it)[2].str() + "=" + (*it)[3].str());
  return out;
}

const char* setup = R"(create 't', {NAME => 'f', VERSIONS => 5}, {NAME => 'g'}
put 't', 'r01', 'f:a', 'v1', 1
put 't', 'r01', 'f:a', 'v2', 2
put 't', 'r01', 'f:b', 'V1', 3
put 't', 'r01', 'g:c', 'x', 2
put 't', 'r02', 'f:a', 'v2', 1
put 't', 'r02', 'f:b', 'xx', 2
put 't', 'r10', 'f:a', 'v3', 1
put 't', 'r11', 'g:c', 'y', 1
put 't', 'r21', 'f:b', 'V1', 4
)";

// Every filter kind, in the shell's double quotes.
const char* const filters[] = {
    "RowFilter(>=, 'binary:r10')",
    "FamilyFilter(=, 'binary:g')",
    "QualifierFilter(=, 'regexstring:^b')",
    "ValueFilter(=, 'substring:v1')",
    "PrefixFilter('r0')",
    "ColumnPrefixFilter('a')",
    "MultipleColumnPrefixFilter('a', 'c')",
    "ColumnRangeFilter('b', true, 'c', true)",
    "ColumnCountGetFilter(1)",
    "ColumnPaginationFilter(1, 1)",
    "ColumnPaginationFilter(1, 'b')",
    "PageFilter(2)",
    "SingleColumnValueFilter('f', 'a', =, 'binary:v2', true, true)",
    "SingleColumnValueExcludeFilter('f', 'a', =, 'binary:v2')",
    "ColumnValueFilter('f', 'b', =, 'binary:V1')",
    "DependentColumnFilter('f', 'a', false)",
    "FirstKeyOnlyFilter()",
    "KeyOnlyFilter()",
    "InclusiveStopFilter('r02')",
    "TimestampsFilter(2, 4)",
    "RandomRowFilter(1073741824)",
    "SKIP ValueFilter(!=, 'binary:xx')",
    "WHILE RowFilter(<, 'binary:r10')",
    "PrefixFilter('r0') AND ColumnPrefixFilter('a') OR RowFilter(=, 'binary:r21')",
    "MultiRowRangeFilter('r02', true, 'r10', true, 'r20', false, '', false)",
    "FuzzyRowFilter('r?1', '010')",
};

}  // namespace

TEST_CASE("FILTER on scan, get and count: every kind, embedded and through a server", "[filter][shell]") {
  std::string script = setup;
  for (const char* f : filters) script += std::string("scan 't', {FILTER => \"") + f + "\"}\n";
  script += "scan 't', {VERSIONS => 5, FILTER => \"ValueFilter(=, 'binary:v1')\"}\n";
  script += "scan 't', {REVERSED => true, FILTER => \"PrefixFilter('r0')\"}\n";
  script += "get 't', 'r01', {FILTER => \"ColumnPrefixFilter('b')\"}\n";
  script += "get 't', 'r01', {VERSIONS => 5, FILTER => \"TimestampsFilter(1, 3)\"}\n";
  script += "count 't', FILTER => \"PrefixFilter('r1')\"\n";
  script += "count 't', {FILTER => \"FirstKeyOnlyFilter() AND RowFilter(!=, 'binary:r02')\"}\n";
  script += "scan 't', {FILTER => \"NoSuchFilter()\"}\n";
  script += "get 't', 'r01', {FILTER => \"PrefixFilter(r)\"}\n";

  temp_dir data, emb;
  testproc::server srv(CELLAR_SERVER, data.path);
  auto rpc = testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, script);
  auto local = testproc::run({CELLAR_SHELL, "--embedded", emb.path, "--json"}, script);
  // Server-assigned timestamps are not used (every put has one): outputs are identical.
  CHECK(rpc.out == local.out);
  auto out = lines(local.out);
  const std::size_t first = 10;  // after create and 9 puts
  REQUIRE(out.size() == first + std::size(filters) + 8);
  auto scan_out = [&](std::size_t i) { return cells_of(out[first + i]); };
  using v = std::vector<std::string>;
  CHECK(scan_out(0) == v{"r10 f:a=v3", "r11 g:c=y", "r21 f:b=V1"});
  CHECK(scan_out(1) == v{"r01 g:c=x", "r11 g:c=y"});
  CHECK(scan_out(2) == v{"r01 f:b=V1", "r02 f:b=xx", "r21 f:b=V1"});
  CHECK(scan_out(3) == v{"r01 f:b=V1", "r21 f:b=V1"});  // newest versions only: r01 f:a is v2
  CHECK(scan_out(4) == v{"r01 f:a=v2", "r01 f:b=V1", "r01 g:c=x", "r02 f:a=v2", "r02 f:b=xx"});
  // PageFilter(2) holds for the whole scan across partitions: the first two rows in order.
  CHECK(scan_out(11) == v{"r01 f:a=v2", "r01 f:b=V1", "r01 g:c=x", "r02 f:a=v2", "r02 f:b=xx"});
  CHECK(scan_out(17) ==
        v{"r01 f:a=", "r01 f:b=", "r01 g:c=", "r02 f:a=", "r02 f:b=", "r10 f:a=", "r11 g:c=", "r21 f:b="});
  CHECK(scan_out(18) == v{"r01 f:a=v2", "r01 f:b=V1", "r01 g:c=x", "r02 f:a=v2", "r02 f:b=xx"});
  CHECK(scan_out(22) == v{"r01 f:a=v2", "r01 f:b=V1", "r01 g:c=x", "r02 f:a=v2", "r02 f:b=xx"});
  CHECK(scan_out(25) == v{"r01 f:a=v2", "r01 f:b=V1", "r01 g:c=x", "r11 g:c=y", "r21 f:b=V1"});
  const std::size_t tail = first + std::size(filters);
  CHECK(cells_of(out[tail]) == v{"r01 f:a=v1"});
  CHECK(cells_of(out[tail + 1]) == v{"r02 f:a=v2", "r02 f:b=xx", "r01 f:a=v2", "r01 f:b=V1", "r01 g:c=x"});
  CHECK(cells_of(out[tail + 2]) == v{"r01 f:b=V1"});
  CHECK(cells_of(out[tail + 3]) == v{"r01 f:a=v1", "r01 f:b=V1"});
  CHECK(out[tail + 4] == "{\"ok\":true,\"count\":2}");
  CHECK(out[tail + 5] == "{\"ok\":true,\"count\":4}");
  CHECK(out[tail + 6].find("\"error\":\"INVALID_ARGUMENT\"") != std::string::npos);
  CHECK(out[tail + 6].find("unknown filter NoSuchFilter") != std::string::npos);
  CHECK(out[tail + 7].find("must be a quoted string") != std::string::npos);
  // Every scan line is well formed and most filters drop something.
  for (std::size_t i = 0; i < std::size(filters); ++i) {
    INFO(filters[i]);
    CHECK(out[first + i].rfind("{\"ok\":true", 0) == 0);
  }
}

TEST_CASE("FILTER in the human output", "[filter][shell]") {
  temp_dir emb;
  auto r =
      testproc::run({CELLAR_SHELL, "--embedded", emb.path},
                    std::string(setup) +
                        "scan 't', FILTER => \"PrefixFilter('r1')\"\ncount 't', FILTER => \"PrefixFilter('r')\"\n");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find(" r10                             column=f:a, timestamp=1, value=v3") != std::string::npos);
  CHECK(r.out.find("2 row(s)") != std::string::npos);
  CHECK(r.out.find("5 row(s)") != std::string::npos);
}
