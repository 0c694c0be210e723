// Wire security end to end: the real cellar-server, cellar-shell and cellar-loadgen on a
// loopback port. The token from a file or the environment (never on the command line, so
// never in `ps`), TLS with --tls-cert/--tls-key and --tls-ca, and the flags' checks.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../rpc/test_certs.h"
#include "../shell/process.h"

namespace fs = std::filesystem;

namespace {

using temp_dir = testsupport::made_dir;

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string command_line(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// CELLAR_TOKEN set while it lives (for the processes started meanwhile).
struct env_token {
  explicit env_token(const std::string& t) { ::setenv("CELLAR_TOKEN", t.c_str(), 1); }
  ~env_token() { ::unsetenv("CELLAR_TOKEN"); }
};

testproc::output shell(const testproc::server& srv, std::vector<std::string> extra,
                       const std::string& script = "whoami\n") {
  std::vector<std::string> argv{CELLAR_SHELL, "--connect", srv.address(), "--json"};
  for (auto& e : extra) argv.push_back(e);
  return testproc::run(argv, script, /*with_stderr=*/true);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("the token comes from a file or CELLAR_TOKEN and never shows in ps", "[security]") {
  temp_dir dir;
  const auto file = write_file(dir.path + "/token", "t0ps3cret\n");  // the trailing line break is not part of it
  testproc::server srv(CELLAR_SERVER, dir.path + "/data", {"--token-file", file});
  CHECK_FALSE(has(command_line(srv.pid()), "t0ps3cret"));
  // The shell: from a file, from the environment; wrong or missing tokens refused.
  auto by_file = shell(srv, {"--token-file", file});
  CHECK(by_file.exit_code == 0);
  CHECK(has(by_file.out, "\"auth\":\"TOKEN\""));
  {
    env_token env("t0ps3cret");
    auto by_env = shell(srv, {});
    CHECK(by_env.exit_code == 0);
    CHECK(has(by_env.out, "\"auth\":\"TOKEN\""));
  }
  {
    env_token env("guess");
    auto wrong = shell(srv, {});
    CHECK(wrong.exit_code == 2);
    CHECK(has(wrong.out, "PERMISSION_DENIED: wrong token"));
  }
  auto none = shell(srv, {});
  CHECK(none.exit_code == 2);
  CHECK(has(none.out, "none was given (give it with --token-file or CELLAR_TOKEN)"));
  auto empty = shell(srv, {"--token-file", write_file(dir.path + "/empty", "\n")});
  CHECK(empty.exit_code == 2);
  CHECK(has(empty.out, "INVALID_ARGUMENT: the token file " + dir.path + "/empty is empty"));
  auto both = shell(srv, {"--token", "x", "--token-file", file});
  CHECK(both.exit_code == 2);
  CHECK(has(both.out, "give the token once: --token or --token-file, not both"));
  CHECK(srv.stop() == 0);

  // The server's token from its environment.
  temp_dir dir2;
  env_token env("fr0m-env");
  testproc::server by_env(CELLAR_SERVER, dir2.path, {});
  ::unsetenv("CELLAR_TOKEN");
  CHECK(shell(by_env, {"--token-file", write_file(dir2.path + "/t", "fr0m-env")}).exit_code == 0);
  CHECK(shell(by_env, {}).exit_code == 2);
}

TEST_CASE("the server refuses bad security settings at start", "[security]") {
  temp_dir dir;
  const auto& certs = test_certs::get();
  auto start = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{CELLAR_SERVER, "--listen", "127.0.0.1:0", "--data", ""};
    for (auto& e : extra) argv.push_back(e);
    return testproc::run(argv, "", /*with_stderr=*/true);
  };
  auto r = start({"--token-file", dir.path + "/missing"});
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "cannot read the token file " + dir.path + "/missing"));
  r = start({"--token", "a", "--token-file", write_file(dir.path + "/t", "b")});
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "give the token once"));
  r = start({"--tls-cert", certs.server_cert});
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "TLS needs both a certificate and its key (--tls-cert and --tls-key)"));
  r = start({"--tls-cert", certs.server_cert, "--tls-key", certs.other_key});
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "does not belong to the certificate"));
  r = start({"--idle-timeout", "-1"});
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--idle-timeout must be 0 to 1e7 seconds"));
  r = start({"--max-unsent", "12"});
  CHECK(r.exit_code == 2);
  CHECK(has(r.out, "--max-unsent: not a size of at least 1KiB: 12"));
  r = start({"--max-connections", "-3"});
  CHECK(r.exit_code == 2);
}

TEST_CASE("over TLS: the shell and the load generator with --tls-ca; without it, or with another CA, refused",
          "[security][tls]") {
  temp_dir dir;
  const auto& certs = test_certs::get();
  const auto token = write_file(dir.path + "/token", "s3cret");
  testproc::server srv(CELLAR_SERVER, dir.path + "/data",
                       {"--token-file", token, "--tls-cert", certs.server_cert, "--tls-key", certs.server_key,
                        "--max-connections", "64", "--idle-timeout", "30", "--max-unsent", "16MiB"});
  auto ok = shell(srv, {"--token-file", token, "--tls-ca", certs.ca},
                  "create 'tt', 'f'\nput 'tt', 'r1', 'f:q', 'over tls'\nget 'tt', 'r1'\n");
  CHECK(ok.exit_code == 0);
  CHECK(has(ok.out, "over tls"));
  auto plain = shell(srv, {"--token-file", token});
  CHECK(plain.exit_code == 2);
  CHECK(has(plain.out, "UNAVAILABLE: this server requires TLS: connect with its CA certificate (--tls-ca)"));
  auto other = shell(srv, {"--token-file", token, "--tls-ca", certs.other_ca});
  CHECK(other.exit_code == 2);
  CHECK(has(other.out, "certificate is not trusted"));
  // The load generator, over both protocols.
  for (const char* protocol : {"frames", "capnp"}) {
    auto lg = testproc::run({CELLAR_LOADGEN,
                             "--target",
                             "cellar-rpc",
                             "--protocol",
                             protocol,
                             "--port",
                             std::to_string(srv.port()),
                             "--token-file",
                             token,
                             "--tls-ca",
                             certs.ca,
                             "--workload",
                             "a",
                             "--phase",
                             "both",
                             "--records",
                             "200",
                             "--operations",
                             "400",
                             "--connections",
                             "2",
                             "--quiet",
                             "--json",
                             dir.path + "/lg.json"},
                            "", /*with_stderr=*/true);
    INFO(lg.out);
    CHECK(lg.exit_code == 0);
    auto summary = testproc::run({CELLAR_LOADGEN, "summary", dir.path + "/lg.json"}, "");
    INFO(summary.out);
    CHECK(summary.exit_code == 0);
    std::istringstream words(summary.out);
    double ops = 0, p99 = 0;
    long errors = -1, operations = 0;
    words >> ops >> p99 >> errors >> operations;
    CHECK(errors == 0);
    CHECK(operations == 400);
  }
  auto lg_plain = testproc::run({CELLAR_LOADGEN, "--target", "cellar-rpc", "--port", std::to_string(srv.port()),
                                 "--token-file", token, "--records", "10", "--operations", "10", "--quiet"},
                                "", true);
  CHECK(lg_plain.exit_code != 0);
  CHECK(has(lg_plain.out, "this server requires TLS"));
  CHECK(srv.stop() == 0);
}

TEST_CASE("the server's token from its TOML file; a token flag wins over both token keys", "[security][config]") {
  temp_dir dir;
  const auto key_file = write_file(dir.path + "/key-token", "fr0m-key-file");
  const auto flag_file = write_file(dir.path + "/flag-token", "fr0m-flag");
  {
    const auto cfg = write_file(dir.path + "/file.toml", "token_file = \"" + key_file + "\"\n");
    testproc::server srv(CELLAR_SERVER, dir.path + "/d1", {"--config", cfg});
    CHECK(shell(srv, {"--token-file", key_file}).exit_code == 0);
    CHECK(shell(srv, {"--token-file", flag_file}).exit_code == 2);
  }
  {
    // The file's `token` key and the --token-file flag: the flag is the token, given once
    // (had the key been taken too, the server would refuse two tokens).
    const auto cfg = write_file(dir.path + "/key.toml", "token = \"fr0m-key\"\n");
    testproc::server srv(CELLAR_SERVER, dir.path + "/d2", {"--config", cfg, "--token-file", flag_file});
    CHECK(shell(srv, {"--token-file", flag_file}).exit_code == 0);
    CHECK(shell(srv, {"--token-file", write_file(dir.path + "/t", "fr0m-key")}).exit_code == 2);
  }
  // Both keys in the file: refused as both flags are. A key of the wrong type: refused, named.
  const std::vector<std::pair<std::string, std::string>> bad{
      {"token = \"a\"\ntoken_file = \"" + key_file + "\"\n", "give the token once"},
      {"io_uring = 1\n", "key 'io_uring' must be a boolean"},
      {"idle_timeout = \"5\"\n", "key 'idle_timeout' must be a number"},
      {"max_batch = 1.5\n", "key 'max_batch' must be an integer"},
      {"durability = [1]\n", "key 'durability' must be a string"},
      {"listen = \n", "cannot read "},
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const auto cfg = write_file(dir.path + "/bad" + std::to_string(i) + ".toml", bad[i].first);
    // (Under `timeout`: a server that took the file for good would serve until stopped.)
    auto r = testproc::run({"/usr/bin/timeout", "20", CELLAR_SERVER, "--config", cfg, "--listen", "127.0.0.1:0",
                            "--data", ""},
                           "", /*with_stderr=*/true);
    INFO(bad[i].first << r.out);
    CHECK(r.exit_code == 2);
    CHECK(has(r.out, bad[i].second));
  }
}
