// route/murmur.h: the hash of KEY partitioning.
//
// cellar uses Austin Appleby's MurmurHash64A (64-bit, for 64-bit platforms) with seed 0,
// over the row key bytes (or the first n bytes for a KEY prefix rule); a row goes to
// partition hash % partitions. The function is fixed forever: changing it would move
// stored rows to other partitions.
#pragma once

#include <cstdint>
#include <string_view>

namespace cellar::detail {

std::uint64_t murmur_hash64a(std::string_view key, std::uint64_t seed = 0) noexcept;

}  // namespace cellar::detail
