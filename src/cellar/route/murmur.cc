#include "route/murmur.h"

#include <cstring>

namespace cellar::detail {

// MurmurHash64A by Austin Appleby (public domain), reading little-endian blocks.
std::uint64_t murmur_hash64a(std::string_view key, std::uint64_t seed) noexcept {
  constexpr std::uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const auto len = key.size();
  std::uint64_t h = seed ^ (len * m);
  const auto* data = reinterpret_cast<const unsigned char*>(key.data());
  const auto* end = data + (len / 8) * 8;
  for (; data != end; data += 8) {
    std::uint64_t k;
    std::memcpy(&k, data, 8);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7: h ^= std::uint64_t(data[6]) << 48; [[fallthrough]];
    case 6: h ^= std::uint64_t(data[5]) << 40; [[fallthrough]];
    case 5: h ^= std::uint64_t(data[4]) << 32; [[fallthrough]];
    case 4: h ^= std::uint64_t(data[3]) << 24; [[fallthrough]];
    case 3: h ^= std::uint64_t(data[2]) << 16; [[fallthrough]];
    case 2: h ^= std::uint64_t(data[1]) << 8; [[fallthrough]];
    case 1: h ^= std::uint64_t(data[0]); h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

}  // namespace cellar::detail
