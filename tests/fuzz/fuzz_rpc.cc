// Fuzz target: the Cap'n Proto RPC server (rpc/server.cc): the input is the raw byte
// stream of one client connection (Cap'n Proto RPC messages: bootstrap, login, calls on
// the Cellar and Scanner capabilities, ...) into the in-memory store of fuzz_server.h.
// Seeds are sessions of the real client, recorded (make_seeds.cc).
// Property: the server survives any stream and closes the connection once it ends.
#include "fuzz_server.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cellar_fuzz::fuzz_server::get().exchange({}, data, size);
  return 0;
}
