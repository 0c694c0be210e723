#include "rpc/frame_replies.h"

#include <capnp/message.h>
#include <kj/debug.h>

#include <algorithm>
#include <cstring>

#include "partition/memtable.h"
#include "rpc/convert.h"
#include "rpc/frames.h"

namespace cellar::rpc {

void fill_batch_reply(wire::Reply::Builder out, std::uint64_t id, const status& s, const std::vector<op_result>& r) {
  out.setId(id);
  to_wire(s, out.initError());
  if (!s) return;
  auto results = out.initResults(static_cast<unsigned>(r.size()));
  for (unsigned i = 0; i < results.size(); ++i) to_wire(r[i], results[i]);
}

namespace {

std::vector<unsigned char> framed_plain_ok(std::uint64_t id) {
  capnp::MallocMessageBuilder b;
  fill_batch_reply(b.initRoot<wire::Reply>(), id, status::ok(), std::vector<op_result>(1));
  std::vector<unsigned char> out;
  append_frame(out, b);
  return out;
}

// The template and where its id sits, made once for the process: every connection's
// plain_ok_reply starts as a copy. {} when the layout is not the expected one.
struct ok_template {
  std::vector<unsigned char> bytes;
  std::size_t id_at = 0;
};

ok_template make_ok_template() {
  constexpr std::uint64_t probe = 0x0123456789abcdefull;
  auto zero = framed_plain_ok(0);
  auto other = framed_plain_ok(probe);
  if (zero.size() != other.size()) return {};
  std::size_t first = zero.size(), last = 0, differ = 0;
  for (std::size_t i = 0; i < zero.size(); ++i)
    if (zero[i] != other[i]) {
      first = std::min(first, i);
      last = i;
      ++differ;
    }
  // Every byte of the probe is non-zero, so the id's eight bytes are exactly the ones that
  // differ; they must hold the probe as the message stores it (little-endian).
  std::uint64_t at = 0;
  if (differ != sizeof at || last - first + 1 != sizeof at) return {};
  std::memcpy(&at, other.data() + first, sizeof at);
  if (at != probe || first == 0) return {};
  return {std::move(zero), first};
}

}  // namespace

plain_ok_reply::plain_ok_reply() {
  static const ok_template shared = make_ok_template();
  bytes_ = shared.bytes;
  id_at_ = shared.id_at;
}

bool plain_ok_reply::fits(const status& s, const std::vector<op_result>& r) {
  if (!s || !s.message().empty() || r.size() != 1) return false;
  const auto& x = r[0];
  return x.st && x.st.message().empty() && !x.processed && x.row.row.empty() && !x.row.exists && !x.row.partial &&
         x.row.cells.empty();
}

const std::vector<unsigned char>& plain_ok_reply::bytes(std::uint64_t id) {
  std::memcpy(bytes_.data() + id_at_, &id, sizeof id);
  return bytes_;
}

namespace {

// Cap'n Proto's wire format (encoding spec): a segment of 64-bit little-endian words;
// pointers hold a signed word offset from the word after the pointer.
constexpr std::uint8_t byte_elements = 2, composite_elements = 7;

std::uint64_t struct_pointer(std::size_t at, std::size_t target, std::uint16_t data, std::uint16_t pointers) {
  const auto offset = static_cast<std::int32_t>(target - at - 1);
  return static_cast<std::uint32_t>(offset * 4) | std::uint64_t{data} << 32 | std::uint64_t{pointers} << 48;
}

std::uint64_t list_pointer(std::size_t at, std::size_t target, std::uint8_t element, std::uint32_t count) {
  const auto offset = static_cast<std::int32_t>(target - at - 1);
  return static_cast<std::uint32_t>(offset * 4 + 1) | std::uint64_t{count << 3 | element} << 32;
}

std::size_t words_for(std::size_t bytes) { return (bytes + 7) / 8; }

// memcpy for the short blobs of a reply (families, qualifiers, row keys: mostly under 17
// bytes) without a call into libc: two fixed-size copies that overlap in the middle.
// Reads and writes exactly [0, n) of each side.
inline void copy_bytes(unsigned char* to, const char* from, std::size_t n) {
  if (n > 16) {
    std::memcpy(to, from, n);
  } else if (n >= 8) {
    std::memcpy(to, from, 8);
    std::memcpy(to + n - 8, from + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(to, from, 4);
    std::memcpy(to + n - 4, from + n - 4, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) to[i] = static_cast<unsigned char>(from[i]);
  }
}

// A segment written in allocation order, as a builder allocates.
class segment {
 public:
  // Room for `words` words, counted by the caller from what it will write.
  segment(std::vector<unsigned char>& out, std::size_t words) : out_(out), base_(out.size() + 8), words_(words) {
    out_.resize(base_ + words * 8, 0);  // the frame's segment table first, written by done()
    words_at_ = out_.data() + base_;
  }
  std::size_t allocate(std::size_t words) {
    KJ_REQUIRE(next_ + words <= words_, "a reply's words were miscounted", next_, words, words_);
    const auto at = next_;
    next_ += words;
    return at;
  }
  void set(std::size_t word, std::uint64_t v) { std::memcpy(words_at_ + word * 8, &v, 8); }
  // A byte blob (Text with its NUL when `nul`) in words of its own, pointed to from `from`.
  void blob(std::size_t from, std::string_view bytes, bool nul) {
    const auto n = bytes.size() + (nul ? 1 : 0);
    const auto at = allocate(words_for(n));
    copy_bytes(words_at_ + at * 8, bytes.data(), bytes.size());
    set(from, list_pointer(from, at, byte_elements, static_cast<std::uint32_t>(n)));
  }
  // An Error struct {code, name, message} pointed to from `from`.
  void error(std::size_t from, std::uint16_t code, std::string_view name, std::string_view message) {
    const auto at = allocate(3);
    set(from, struct_pointer(from, at, 1, 2));
    set(at, code);
    blob(at + 1, name, true);
    blob(at + 2, message, true);
  }
  void done() {
    const std::uint32_t head[2] = {0, static_cast<std::uint32_t>(next_)};
    std::memcpy(words_at_ - 8, head, 8);
    out_.resize(base_ + next_ * 8);
  }

 private:
  std::vector<unsigned char>& out_;
  std::size_t base_;
  // The segment's first word in out_, which does not move until done(): kept here, not
  // read from the vector after every byte written (a store of bytes may alias the vector).
  unsigned char* words_at_ = nullptr;
  std::size_t words_;
  std::size_t next_ = 0;
};

}  // namespace

bool append_get_reply(std::vector<unsigned char>& out, std::uint64_t id, std::string_view row, bool exists,
                      const std::vector<detail::read_cell_view>& cells) {
  if (row.empty()) return false;
  const auto ok = code_name(code::ok);
  std::size_t words = 1 + 6 + 2 * (3 + words_for(ok.size() + 1) + 1) + 4 + 4 + words_for(row.size()) + 1;
  for (const auto& c : cells) {
    if (c.qualifier.empty() || c.value.empty()) return false;
    words += 5 + words_for(c.family->size() + 1) + words_for(c.qualifier.size()) + words_for(c.value.size());
  }
  segment seg(out, words);
  // The builder's order: Reply, its error, the results list, the result's error, its row,
  // the row's key, the cells list, each cell's family, qualifier and value.
  const auto root = seg.allocate(1);
  const auto reply = seg.allocate(2 + 4);  // id, done; error, results, rows, filterEnd
  seg.set(root, struct_pointer(root, reply, 2, 4));
  seg.set(reply, id);
  seg.error(reply + 2, 0, ok, {});
  const auto tag = seg.allocate(1 + 3);  // one ActionResult: processed; error, row
  seg.set(reply + 3, list_pointer(reply + 3, tag, composite_elements, 3));
  seg.set(tag, std::uint64_t{1} << 2 | std::uint64_t{1} << 32 | std::uint64_t{2} << 48);
  const auto result = tag + 1;
  seg.error(result + 1, 0, ok, {});
  const auto rr = seg.allocate(4);  // exists, partial; row, cells, ttls (none: a get has no cell TTLs)
  seg.set(result + 2, struct_pointer(result + 2, rr, 1, 3));
  seg.blob(rr + 1, row, false);
  seg.set(rr, exists ? 1 : 0);
  const auto n = static_cast<std::uint32_t>(cells.size());
  const auto list = seg.allocate(1 + 5 * std::size_t{n});  // each Cell: timestamp; row, family, qualifier, value
  seg.set(rr + 2, list_pointer(rr + 2, list, composite_elements, 5 * n));
  seg.set(list, std::uint64_t{n} << 2 | std::uint64_t{1} << 32 | std::uint64_t{4} << 48);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto& c = cells[i];
    const auto cell = list + 1 + 5 * std::size_t{i};
    seg.blob(cell + 2, *c.family, true);
    seg.blob(cell + 3, c.qualifier, false);
    seg.set(cell, static_cast<std::uint64_t>(c.timestamp));
    seg.blob(cell + 4, c.value, false);
  }
  seg.done();
  return true;
}

}  // namespace cellar::rpc
