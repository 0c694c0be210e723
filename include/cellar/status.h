// cellar/status.h: the one error type of cellar.
//
// Every interface (embedded API, RPC, shell) reports failures with a `status`: a stable
// numeric `code` plus a human-readable message. Codes never change meaning once shipped;
// new codes are only appended. Errors are values, never exceptions: a call that can fail
// returns `status` or `result<T>`.
//
// Thread safety: plain values, safe to copy between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace cellar {

// Stable error codes shared by every interface. The numbers are part of the wire
// contract (RPC and shell `--json` print the name, RPC also carries the number).
enum class code : std::uint16_t {
  ok = 0,
  table_not_found = 1,   // no such table group
  family_not_found = 2,  // no such column family in the table group
  invalid_argument = 3,  // malformed request (empty row key, bad time range, ...)
  too_large = 4,         // a row key, qualifier or value above its limit
  unsupported = 5,       // a valid request cellar does not do (yet)
  memory_limit = 6,      // the store's memory limit would be exceeded; nothing was written
  already_exists = 7,    // DDL: table group or family exists
  not_a_long = 8,        // increment on a value that is not 8 bytes
  aborted = 9,           // an operation of the same atomic unit failed; this one was undone
  io_error = 10,         // the disk refused (persistence)
  corruption = 11,       // stored data failed a check
  internal = 12,         // a bug: please report
  permission_denied = 13,
  unavailable = 14,      // store closed or shutting down; a cluster service (ZooKeeper, a node) unreachable
  table_disabled = 15,   // the table is disabled (HBase's TableNotEnabledException): enable it first
  not_found = 16,        // a named object that is not a table or family is missing (a znode, a cluster node)
  conflict = 17,         // a compare-and-set lost: the object changed since it was read (version, epoch)
  not_owner = 18,        // cluster: this node does not own the partition; the message names the map's epoch
  table_read_only = 19,  // a write to a table whose READONLY attribute is true
  not_leader =
      20,  // cluster: this replica of the partition is not its Raft leader; the message names the leader it knows
  table_not_disabled = 21,  // the call needs the table disabled (HBase's TableNotDisabledException)
  // cluster: the partition is frozen by a split or merge of its table, or was just replaced
  // by one; nothing was applied. Send it again (routed to the new partitions once the
  // split commits); cellar's clients do so themselves (connection.h).
  reshaping = 22,
};
// The highest code in use (a reader of the wire refuses numbers above it).
inline constexpr code last_code = code::reshaping;

// Upper-case stable name of a code, e.g. "TABLE_NOT_FOUND".
std::string_view code_name(code c) noexcept;

class [[nodiscard]] status {
 public:
  status() noexcept = default;
  status(cellar::code c, std::string message) : code_(c), message_(std::move(message)) {}

  static status ok() noexcept { return {}; }

  bool is_ok() const noexcept { return code_ == code::ok; }
  explicit operator bool() const noexcept { return is_ok(); }
  cellar::code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  // "TABLE_NOT_FOUND: table 'x' does not exist"
  std::string to_string() const;

  friend bool operator==(const status& a, const status& b) { return a.code_ == b.code_ && a.message_ == b.message_; }

 private:
  cellar::code code_ = cellar::code::ok;
  std::string message_;
};

// Either a value or a non-ok status.
template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  result(status s) : v_(std::move(s)) {}     // NOLINT: implicit by design

  bool is_ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return is_ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  // By value, so `for (auto& x : f().value())` does not dangle.
  T value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // The error; status::ok() when there is a value.
  status error() const { return is_ok() ? status::ok() : std::get<1>(v_); }
  cellar::code code() const noexcept { return is_ok() ? cellar::code::ok : std::get<1>(v_).code(); }

 private:
  std::variant<T, status> v_;
};

}  // namespace cellar
