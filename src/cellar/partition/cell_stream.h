// partition/cell_stream.h: a memtable's cells serialised as a delta of them would be.
//
// A replicated partition's Raft snapshot holds its cells in the bytes CAF writes for a
// delta_handle (partition/protocol.h: the count, then each cell's key, present, fresh,
// expires_at and value), and restore reads them back as one. write_cells writes those
// bytes straight from the memtable, without first copying the cells into a delta_map.
//
// Thread safety: as the memtable's const methods.
#pragma once

#include <caf/binary_serializer.hpp>
#include <caf/error.hpp>

#include <vector>

#include "partition/memtable.h"

namespace cellar::detail {

// Appends every cell of `m` to `buf` through `sink` (which writes to `buf`), in
// memtable::visit_cells order.
caf::error write_cells(caf::actor_system& sys, caf::binary_serializer& sink, std::vector<char>& buf, const memtable& m);

}  // namespace cellar::detail
