#include "partition/cell_stream.h"

#include <cstring>

namespace cellar::detail {

caf::error write_cells(caf::actor_system& sys, caf::binary_serializer& sink, std::vector<char>& buf,
                       const memtable& m) {
  // The count goes first but is known last: a placeholder of the same width, filled in.
  const std::size_t count_at = buf.size();
  std::uint64_t n = 0;
  if (auto err = sink(n)) return err;
  caf::error failed;
  m.visit_cells([&](std::string_view key, std::int64_t expires, std::string_view value) {
    if (failed) return;
    bool present = true;
    bool fresh = false;
    std::size_t key_size = key.size();
    std::size_t value_size = value.size();
    // A string is its length, then its bytes (CAF's serializer for std::string).
    failed =
        caf::error::eval([&] { return sink.begin_sequence(key_size); },
                         [&] { return sink.apply_raw(key.size(), const_cast<char*>(key.data())); },
                         [&] { return sink(present, fresh, expires); }, [&] { return sink.begin_sequence(value_size); },
                         [&] { return sink.apply_raw(value.size(), const_cast<char*>(value.data())); });
    ++n;
  });
  if (failed) return failed;
  std::vector<char> count;
  caf::binary_serializer count_sink(sys, count);
  if (auto err = count_sink(n)) return err;
  std::memcpy(buf.data() + count_at, count.data(), count.size());
  return caf::none;
}

}  // namespace cellar::detail
