// loadgen/resp.h: the Redis protocol (RESP2) as the redis engine needs it: commands
// appended to an output buffer, replies parsed in place from an input buffer without
// allocating (hiredis's reader allocates an object per element: 21 for an HGETALL of a
// YCSB record). Replies to commands sent without HELLO 3 are RESP2, which is all this
// parses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace loadgen::resp {

// Appends a command, an array of bulk strings, to `out`.
void append_command(std::string& out, std::initializer_list<std::string_view> args);
void append_command(std::string& out, const std::string_view* args, std::size_t n);

struct reply {
  char type = 0;          // '+' status, '-' error, ':' integer, '$' bulk string, '*' array
  std::int64_t n = 0;     // ':' the integer; '$' the length; '*' the element count; -1: nil
  std::string_view text;  // '+', '-', '$': the text (a view into the parsed buffer)
};

// Parses the reply at the start of [p, p + len) into `r`. Returns its size in bytes, or 0
// when the buffer does not hold all of it yet. The bulk strings that are elements of a
// top-level array are appended to `elements` when it is given (views into the buffer);
// nested arrays are walked and skipped. Throws std::runtime_error when the bytes are not
// RESP2 (or nest deeper than 16 arrays).
std::size_t parse(const char* p, std::size_t len, reply& r, std::vector<std::string_view>* elements = nullptr);

}  // namespace loadgen::resp
