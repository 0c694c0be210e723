// store/reshape_plan.h: which tables split by size (size_split_limit, the rule one node and
// a cluster follow alike) and a call decided in an earlier incarnation of its table.
#include <catch2/catch.hpp>

#include "../status_checks.h"
#include "store/reshape_plan.h"

using namespace cellar;
using namespace cellar::detail;

namespace {

table_schema range_table(std::map<std::string, std::string> attributes) {
  table_schema s;
  s.name = "t";
  s.uid = 7;
  s.partitioned = true;
  s.partitioning = partition_spec::range_bounds({"m"});
  s.attributes = std::move(attributes);
  return s;
}

}  // namespace

TEST_CASE("size_split_limit: MAX_FILESIZE, unless splits are off or the partitions are fixed", "[reshape_plan]") {
  CHECK(size_split_limit(range_table({{"MAX_FILESIZE", "2097152"}}), 2) == std::optional<std::uint64_t>(2097152));
  CHECK(size_split_limit(range_table({{"MAX_FILESIZE", "2097152"}, {"SPLIT_POLICY", "SteppingSplitPolicy"}}), 2) ==
        std::optional<std::uint64_t>(2097152));
  CHECK_FALSE(size_split_limit(range_table({}), 2));
  CHECK_FALSE(size_split_limit(range_table({{"MAX_FILESIZE", "2097152"}, {"SPLIT_ENABLED", "false"}}), 2));
  CHECK_FALSE(
      size_split_limit(range_table({{"MAX_FILESIZE", "2097152"}, {"SPLIT_POLICY", "DisabledRegionSplitPolicy"}}), 2));
  auto hashed = range_table({{"MAX_FILESIZE", "2097152"}});
  hashed.partitioning = partition_spec::hash(4);
  CHECK_FALSE(size_split_limit(hashed, 4));
  auto group = range_table({{"MAX_FILESIZE", "2097152"}});
  group.partitioned = false;  // a table group without a family yet
  CHECK_FALSE(size_split_limit(group, 0));
}

TEST_CASE("a split decided in another incarnation of its table is refused CONFLICT", "[reshape_plan]") {
  const auto t = range_table({});
  const middle_row_fn none = [](std::uint32_t) -> result<std::optional<std::string>> {
    return std::optional<std::string>();
  };
  reshape_call c{reshape_call::kind::split_region, "t", 0, "g"};
  REQUIRE_OK(plan_reshape(t, 2, c, none));  // no incarnation named: any
  c.uid = t.uid;
  auto planned = plan_reshape(t, 2, c, none);
  REQUIRE_OK(planned);
  CHECK(planned->bounds == std::vector<std::string>{"g", "m"});
  c.uid = t.uid + 1;
  REQUIRE_CODE(plan_reshape(t, 2, c, none), code::conflict);
}
