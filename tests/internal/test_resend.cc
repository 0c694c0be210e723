// util/resend.h: the actions of a batch answered RESHAPING are sent again, alone, until
// none is or the wait has passed.
#include "util/resend.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>
#include <vector>

using namespace cellar;

namespace {

const std::string& row(const batch_op& op) { return std::get<put>(op).row; }

std::vector<batch_op> puts(std::initializer_list<const char*> rows) {
  std::vector<batch_op> ops;
  for (const char* r : rows) ops.push_back(put(r).add("f", "q", "v"));
  return ops;
}

}  // namespace

TEST_CASE("actions answered RESHAPING are sent again alone until they succeed", "[resend]") {
  // Row "b" is refused twice, "d" once; "c" fails for another reason and is not sent again.
  std::map<std::string, int> refusals{{"b", 2}, {"d", 1}};
  std::vector<std::vector<std::string>> sent;
  std::vector<int> attempts;
  auto out = detail::resend_while_reshaping(puts({"a", "b", "c", "d"}), [&](const std::vector<batch_op>& ops, int n) {
    attempts.push_back(n);
    sent.emplace_back();
    std::vector<op_result> r(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      sent.back().push_back(row(ops[i]));
      if (row(ops[i]) == "c") r[i].st = {code::invalid_argument, "bad"};
      if (refusals[row(ops[i])]-- > 0) r[i].st = {code::reshaping, "frozen"};
    }
    return r;
  });
  CHECK(sent == std::vector<std::vector<std::string>>{{"a", "b", "c", "d"}, {"b", "d"}, {"b"}});
  CHECK(attempts == std::vector<int>{0, 1, 2});
  REQUIRE(out.size() == 4);
  CHECK(out[0].st.is_ok());
  CHECK(out[1].st.is_ok());
  CHECK(out[2].st.code() == code::invalid_argument);
  CHECK(out[3].st.is_ok());
}

TEST_CASE("an action still answered RESHAPING when the wait ends keeps that answer", "[resend]") {
  int calls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto out = detail::resend_while_reshaping(
      puts({"a", "b"}),
      [&](const std::vector<batch_op>& ops, int) {
        ++calls;
        std::vector<op_result> r(ops.size());
        for (std::size_t i = 0; i < ops.size(); ++i)
          if (row(ops[i]) == "b") r[i].st = {code::reshaping, "frozen for good"};
        return r;
      },
      std::chrono::milliseconds(100));
  const auto took = std::chrono::steady_clock::now() - t0;
  CHECK(out[0].st.is_ok());
  CHECK(out[1].st.code() == code::reshaping);
  CHECK(calls >= 3);  // pauses of 5, 10, 20, 40 ms fit in the wait
  CHECK(took >= std::chrono::milliseconds(100));
  CHECK(took < std::chrono::seconds(10));
}

TEST_CASE("other refusals are never sent again", "[resend]") {
  int calls = 0;
  auto out = detail::resend_while_reshaping(puts({"a"}), [&](const std::vector<batch_op>& ops, int) {
    ++calls;
    std::vector<op_result> r(ops.size());
    r[0].st = {code::unavailable, "the connection was lost"};  // may have been applied
    return r;
  });
  CHECK(calls == 1);
  CHECK(out[0].st.code() == code::unavailable);
}
