// The runner of the shell's fidelity tests (test_shell_hbase.cc, test_shell_fidelity.cc):
// a script through the real cellar-shell against a real cellar-server on a loopback port
// and against an embedded store, which must print the same JSON, and the helpers that check
// the JSON lines one by one.
#pragma once

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "process.h"

namespace shell_runner {

using json = nlohmann::json;

// What differs between the two paths by nature: server-assigned timestamps, where the
// commands ran, and timings.
inline std::string comparable(const std::string& s) {
  std::string out = std::regex_replace(s, std::regex("\"timestamp\":[0-9]+"), "\"timestamp\":T");
  out = std::regex_replace(out, std::regex("\"server\":\"[^\"]*\""), "\"server\":S");
  return std::regex_replace(out, std::regex("\"seconds\":[0-9.e-]+"), "\"seconds\":X");
}

inline testproc::output json_rpc(const testproc::server& srv, const std::string& script) {
  return testproc::run({CELLAR_SHELL, "--connect", srv.address(), "--json"}, script);
}

// Runs `script` with --json through a fresh server and a fresh embedded store; both must
// print the same objects. Returns them parsed, one per command.
inline std::vector<json> run_both(const std::string& script) {
  testproc::temp_dir data("cellar-shell-server"), emb("cellar-shell-embedded");
  testproc::server srv(CELLAR_SERVER, data.path);
  auto rpc = json_rpc(srv, script);
  auto local = testproc::run({CELLAR_SHELL, "--embedded", emb.path, "--json"}, script);
  INFO("rpc output:\n" << rpc.out);
  CHECK(comparable(rpc.out) == comparable(local.out));
  std::vector<json> out;
  for (const auto& l : testproc::lines(rpc.out)) out.push_back(json::parse(l));
  return out;
}

// The human output of `script` against an embedded store.
inline std::string human(const std::string& dir, const std::string& script) {
  return testproc::run({CELLAR_SHELL, "--embedded", dir, "--quiet"}, script).out;
}

inline json ok() { return json{{"ok", true}}; }

inline json cell(const std::string& row, const std::string& column, std::int64_t ts, const std::string& value) {
  return {{"row", row}, {"column", column}, {"timestamp", ts}, {"value", value}};
}

inline json cells(std::vector<json> cs, std::int64_t rows) { return {{"ok", true}, {"cells", cs}, {"rows", rows}}; }

// A refusal: the code, and a message holding `says`.
inline void check_error(const json& j, const std::string& code, const std::string& says) {
  INFO(j.dump());
  CHECK(j.value("ok", true) == false);
  CHECK(j.value("error", "") == code);
  CHECK(j.value("message", "").find(says) != std::string::npos);
}

}  // namespace shell_runner
