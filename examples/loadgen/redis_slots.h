// redis_slots.h: where a key lives among several redis servers, as Redis Cluster places it:
// its hash slot is CRC16 (XMODEM) of the key, or of its hash tag (the part between the
// first '{' and the next '}', when not empty), modulo 16384; the slots are split into even
// ranges, one per server, as `redis-cli --cluster create` assigns them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace loadgen {

inline constexpr std::uint32_t redis_slot_count = 16384;

// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis's crc16.c.
inline std::uint16_t crc16_xmodem(std::string_view data) {
  std::uint16_t crc = 0;
  for (unsigned char b : data) {
    crc = static_cast<std::uint16_t>(crc ^ (b << 8));
    for (int i = 0; i < 8; ++i) crc = static_cast<std::uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

// Redis Cluster's keyHashSlot.
inline std::uint32_t redis_slot(std::string_view key) {
  const auto open = key.find('{');
  if (open != std::string_view::npos) {
    const auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  return crc16_xmodem(key) % redis_slot_count;
}

// The server (0 .. servers-1) holding `key` when the slots are split evenly over `servers`.
inline std::size_t redis_shard(std::string_view key, std::size_t servers) {
  return servers <= 1 ? 0 : static_cast<std::size_t>(redis_slot(key)) * servers / redis_slot_count;
}

}  // namespace loadgen
