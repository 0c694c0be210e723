// The load generator's RESP2 encoder and in-place reply parser (examples/loadgen/resp.h).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "resp.h"

using namespace loadgen;

TEST_CASE("commands are arrays of bulk strings", "[resp]") {
  std::string out;
  resp::append_command(out, {"HGETALL", "user42"});
  CHECK(out == "*2\r\n$7\r\nHGETALL\r\n$6\r\nuser42\r\n");
  // Appends; empty and binary arguments (with "\r\n" inside) go as they are.
  const std::string binary("a\r\nb\0c", 6);
  resp::append_command(out, {"SET", "", binary});
  CHECK(out == "*2\r\n$7\r\nHGETALL\r\n$6\r\nuser42\r\n*3\r\n$3\r\nSET\r\n$0\r\n\r\n$6\r\n" + binary + "\r\n");
  std::string many;
  std::vector<std::string_view> args(12, "x");
  resp::append_command(many, args.data(), args.size());
  CHECK(many.substr(0, 5) == "*12\r\n");
  CHECK(many.size() == 5 + 12 * 7);
}

TEST_CASE("each reply type parses, with its size", "[resp]") {
  resp::reply r;
  const std::string ok = "+OK\r\n";
  CHECK(resp::parse(ok.data(), ok.size(), r) == 5);
  CHECK(r.type == '+');
  CHECK(r.text == "OK");

  const std::string err = "-WRONGTYPE Operation against a key\r\n:1\r\n";  // a second reply follows
  CHECK(resp::parse(err.data(), err.size(), r) == 36);
  CHECK(r.type == '-');
  CHECK(r.text == "WRONGTYPE Operation against a key");

  const std::string num = ":-12345\r\n";
  CHECK(resp::parse(num.data(), num.size(), r) == num.size());
  CHECK(r.type == ':');
  CHECK(r.n == -12345);

  const std::string bulk("$5\r\na\r\nb\0\r\n", 11);  // "\r\n" inside a bulk string is data
  CHECK(resp::parse(bulk.data(), bulk.size(), r) == bulk.size());
  CHECK(r.type == '$');
  CHECK(r.text == std::string_view("a\r\nb\0", 5));

  const std::string nil = "$-1\r\n";
  CHECK(resp::parse(nil.data(), nil.size(), r) == 5);
  CHECK(r.type == '$');
  CHECK(r.n == -1);
  const std::string nil_array = "*-1\r\n";
  CHECK(resp::parse(nil_array.data(), nil_array.size(), r) == 5);
  CHECK(r.type == '*');
  CHECK(r.n == -1);
  const std::string empty = "*0\r\n";
  CHECK(resp::parse(empty.data(), empty.size(), r) == 4);
  CHECK(r.n == 0);
}

TEST_CASE("an array's bulk strings are its elements; nested arrays are skipped", "[resp]") {
  const std::string a = "*5\r\n$4\r\nuser\r\n:7\r\n*2\r\n$6\r\ninside\r\n+x\r\n$-1\r\n$0\r\n\r\n+next\r\n";
  resp::reply r;
  std::vector<std::string_view> elements{"kept"};
  const std::size_t n = resp::parse(a.data(), a.size(), r, &elements);
  CHECK(n == a.size() - 7);  // up to "+next\r\n"
  CHECK(r.type == '*');
  CHECK(r.n == 5);
  // Appended after what was there; the integer, the nested array and the nil are not.
  REQUIRE(elements.size() == 3);
  CHECK(elements[0] == "kept");
  CHECK(elements[1] == "user");
  CHECK(elements[2] == "");
}

TEST_CASE("a reply cut anywhere is not there yet, and leaves the elements as they were", "[resp]") {
  const std::string a = "*3\r\n$3\r\nabc\r\n:12\r\n$10\r\n0123456789\r\n";
  for (std::size_t cut = 0; cut < a.size(); ++cut) {
    resp::reply r;
    std::vector<std::string_view> elements{"kept"};
    INFO("cut at " << cut);
    CHECK(resp::parse(a.data(), cut, r, &elements) == 0);
    CHECK(elements.size() == 1);
  }
  resp::reply r;
  std::vector<std::string_view> elements;
  CHECK(resp::parse(a.data(), a.size(), r, &elements) == a.size());
  CHECK(elements == std::vector<std::string_view>{"abc", "0123456789"});
}

TEST_CASE("bytes that are not RESP2 are refused", "[resp]") {
  resp::reply r;
  for (std::string bad : {std::string("%1\r\n"),          // RESP3 map: not asked for
                          std::string(":12x\r\n"),        // not an integer
                          std::string(":\r\n"),           // no integer at all
                          std::string("+OK\rX"),          // '\r' without '\n'
                          std::string("$3\r\nabcd\r\n"),  // bulk longer than it says
                          std::string("$-2\r\n"),         // negative length other than nil
                          std::string("*-5\r\n")}) {
    INFO(bad);
    CHECK_THROWS_AS(resp::parse(bad.data(), bad.size(), r), std::runtime_error);
  }
  std::string deep;
  for (int i = 0; i < 17; ++i) deep += "*1\r\n";
  deep += ":1\r\n";
  CHECK_THROWS_AS(resp::parse(deep.data(), deep.size(), r), std::runtime_error);
  std::string sixteen;
  for (int i = 0; i < 16; ++i) sixteen += "*1\r\n";
  sixteen += ":1\r\n";
  CHECK(resp::parse(sixteen.data(), sixteen.size(), r) == sixteen.size());
  // A line that never ends is refused once it passes 64 KiB, not waited for forever.
  std::string endless = "+" + std::string(70 * 1024, 'x');
  CHECK_THROWS_AS(resp::parse(endless.data(), endless.size(), r), std::runtime_error);
}
