// Fuzz target: the frame protocol's request handler (schemas/cellar.capnp "frames",
// rpc/server.cc): the input is the byte stream a client sends after the frame magic and
// a correct login, i.e. `Request` messages in the stream framing; each goes through
// validation into the in-memory store of fuzz_server.h.
// Property: the server survives any stream (no crash, no sanitizer report) and closes
// the connection once the stream ends, whatever was in it.
#include <capnp/message.h>

#include <vector>

#include "cellar.capnp.h"
#include "fuzz_server.h"
#include "rpc/frames.h"

namespace {

std::string prologue() {
  std::vector<unsigned char> out(cellar::rpc::frame_magic, cellar::rpc::frame_magic + 8);
  capnp::MallocMessageBuilder m;
  auto req = m.initRoot<cellar::wire::Request>();
  req.setId(1);
  req.setLogin(cellar_fuzz::token);
  cellar::rpc::append_frame(out, m);
  return {out.begin(), out.end()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string login = prologue();
  cellar_fuzz::fuzz_server::get().exchange(login, data, size);
  return 0;
}
