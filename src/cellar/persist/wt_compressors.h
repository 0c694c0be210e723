// persist/wt_compressors.h: the block compressors WiredTiger may use for partition tables.
//
// WiredTiger compresses a table's pages with a named compressor chosen when the table is
// created (`block_compressor=`); Debian's libwiredtiger ships none built in, so cellar
// registers its own, over Debian's libsnappy and zlib. Every store registers both, so a
// home written with one setting opens under any other.
//
// On-disk block: u64 little-endian payload length, then the payload. WiredTiger hands
// decompress a source rounded up to its allocation size; the length says where the
// payload ends.
#pragma once

#include <string>

#include <wiredtiger.h>

namespace cellar::detail {

// Registers "snappy" and "zlib" on `conn`. Called while WiredTiger opens the home (the
// program's extension, persist/wt_file_system.h), before any table is read.
int add_compressors(WT_CONNECTION* conn);

// The `block_compressor=` value for a store's compression name ("none", "snappy", "zlib");
// false for another name.
bool block_compressor_of(const std::string& name, std::string* value);

}  // namespace cellar::detail
