#include "persist/wt_compressors.h"

#include <snappy-c.h>
#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace cellar::detail {
namespace {

constexpr std::size_t header = sizeof(std::uint64_t);

void put_length(std::uint8_t* dst, std::uint64_t n) {
  for (std::size_t i = 0; i < header; ++i) dst[i] = static_cast<std::uint8_t>(n >> (8 * i));
}

// The payload's length from a block's header; false if the block cannot hold it.
bool get_length(const std::uint8_t* src, std::size_t src_len, std::size_t* n) {
  if (src_len < header) return false;
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < header; ++i) v |= std::uint64_t{src[i]} << (8 * i);
  if (v > src_len - header) return false;
  *n = static_cast<std::size_t>(v);
  return true;
}

int snappy_compress_block(WT_COMPRESSOR*, WT_SESSION*, std::uint8_t* src, std::size_t src_len, std::uint8_t* dst,
                          std::size_t dst_len, std::size_t* result_len, int* failed) {
  if (dst_len <= header) {
    *failed = 1;
    return 0;
  }
  std::size_t out = dst_len - header;
  const snappy_status st =
      snappy_compress(reinterpret_cast<const char*>(src), src_len, reinterpret_cast<char*>(dst + header), &out);
  if (st == SNAPPY_BUFFER_TOO_SMALL || (st == SNAPPY_OK && out + header >= src_len)) {
    *failed = 1;
    return 0;
  }
  if (st != SNAPPY_OK) return EIO;
  put_length(dst, out);
  *result_len = out + header;
  *failed = 0;
  return 0;
}

int snappy_decompress_block(WT_COMPRESSOR*, WT_SESSION*, std::uint8_t* src, std::size_t src_len, std::uint8_t* dst,
                            std::size_t dst_len, std::size_t* result_len) {
  std::size_t n = 0;
  if (!get_length(src, src_len, &n)) return EINVAL;
  std::size_t out = dst_len;
  if (snappy_uncompress(reinterpret_cast<const char*>(src + header), n, reinterpret_cast<char*>(dst), &out) !=
      SNAPPY_OK)
    return EINVAL;
  *result_len = out;
  return 0;
}

// snappy does not check its output's bounds: the destination must fit its worst case.
int snappy_pre_size(WT_COMPRESSOR*, WT_SESSION*, std::uint8_t*, std::size_t src_len, std::size_t* result_len) {
  *result_len = header + snappy_max_compressed_length(src_len);
  return 0;
}

int zlib_compress_block(WT_COMPRESSOR*, WT_SESSION*, std::uint8_t* src, std::size_t src_len, std::uint8_t* dst,
                        std::size_t dst_len, std::size_t* result_len, int* failed) {
  if (dst_len <= header) {
    *failed = 1;
    return 0;
  }
  uLongf out = static_cast<uLongf>(dst_len - header);
  // Level 6, zlib's default: most of level 9's ratio at a fraction of its time.
  const int ret = compress2(dst + header, &out, src, static_cast<uLong>(src_len), 6);
  if (ret == Z_BUF_ERROR || (ret == Z_OK && out + header >= src_len)) {
    *failed = 1;
    return 0;
  }
  if (ret != Z_OK) return EIO;
  put_length(dst, out);
  *result_len = out + header;
  *failed = 0;
  return 0;
}

int zlib_decompress_block(WT_COMPRESSOR*, WT_SESSION*, std::uint8_t* src, std::size_t src_len, std::uint8_t* dst,
                          std::size_t dst_len, std::size_t* result_len) {
  std::size_t n = 0;
  if (!get_length(src, src_len, &n)) return EINVAL;
  uLongf out = static_cast<uLongf>(dst_len);
  if (uncompress(dst, &out, src + header, static_cast<uLong>(n)) != Z_OK) return EINVAL;
  *result_len = out;
  return 0;
}

// Static: WiredTiger keeps the pointers for the connection's life and calls no terminate.
WT_COMPRESSOR snappy_compressor = {snappy_compress_block, snappy_decompress_block, snappy_pre_size, nullptr};
WT_COMPRESSOR zlib_compressor = {zlib_compress_block, zlib_decompress_block, nullptr, nullptr};

}  // namespace

int add_compressors(WT_CONNECTION* conn) {
  if (int ret = conn->add_compressor(conn, "snappy", &snappy_compressor, nullptr); ret != 0) return ret;
  return conn->add_compressor(conn, "zlib", &zlib_compressor, nullptr);
}

bool block_compressor_of(const std::string& name, std::string* value) {
  if (name == "none") {
    value->clear();
    return true;
  }
  if (name == "snappy" || name == "zlib") {
    *value = name;
    return true;
  }
  return false;
}

}  // namespace cellar::detail
