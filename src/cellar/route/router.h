// route/router.h: which partition holds a row, and which partitions a scan must visit.
//
// Pure functions of the table's partition_spec: routing takes no lock and sends no
// message, so every client thread routes on its own.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "cellar/schema.h"

namespace cellar::detail {

std::uint32_t partition_of(const partition_spec& spec, std::string_view row) noexcept;

// Partitions that may hold rows in [start, stop] (empty bounds are open). For hash rules
// that is every partition, unless both bounds share one KEY prefix.
std::vector<std::uint32_t> partitions_for_range(const partition_spec& spec, std::string_view start,
                                                std::string_view stop);

}  // namespace cellar::detail
