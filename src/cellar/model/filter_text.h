// model/filter_text.h: reading back the text to_string (cellar/filter.h) printed.
//
// Filters travel between nodes as their canonical text; this is how the receiving node
// turns it back into the filter the sender had.
#pragma once

#include <string_view>

#include "cellar/filter.h"

namespace cellar::detail {

// parse_filter, except that regexstring and substring comparators take every compare
// operator: the API builds such filters, and the language refuses them only because
// HBase's ParseFilter does.
result<filter> parse_printed_filter(std::string_view text);

}  // namespace cellar::detail
