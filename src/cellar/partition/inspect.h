// partition/inspect.h: CAF `inspect` overloads for every value the partition protocol
// carries (partition/protocol.h), so that CAF can serialize them (to another node, through
// the middleman) and print them.
//
// The public types (include/cellar/ops.h, schema.h, status.h) know nothing of CAF; their
// overloads live here, in namespace cellar, where argument-dependent lookup finds them.
// std::optional and std::variant have no overloads in CAF 0.17: fields of those types are
// inspected through the `opt` and `alt` wrappers below.
//
// Deserializing hostile bytes fails with a CAF error (a bad variant index, an unknown enum
// value, a status code past the last one): it never builds a value the rest of cellar
// could not handle.
#pragma once

#include <caf/all.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cellar/filter.h"
#include "cellar/ops.h"
#include "cellar/schema.h"
#include "cellar/status.h"
#include "model/filter_text.h"

namespace cellar {

namespace wire_detail {

// An optional field: a presence flag, then the value when present.
template <class T>
struct opt_ref {
  std::optional<T>& x;
};

template <class T>
opt_ref<T> opt(std::optional<T>& x) {
  return {x};
}

template <class Inspector, class T>
typename Inspector::result_type inspect(Inspector& f, opt_ref<T>& o) {
  if constexpr (Inspector::reads_state) {
    bool present = o.x.has_value();
    if (present) return f(present, *o.x);
    return f(present);
  } else {
    bool present = false;
    if (auto err = f(present)) return err;
    if (!present) {
      o.x.reset();
      return caf::none;
    }
    T value{};
    if (auto err = f(value)) return err;
    o.x = std::move(value);
    return caf::none;
  }
}

// A variant field: the alternative's index, then the alternative.
template <class... Ts>
struct alt_ref {
  std::variant<Ts...>& x;
};

template <class... Ts>
alt_ref<Ts...> alt(std::variant<Ts...>& x) {
  return {x};
}

// Constructs alternative `i` of `v` (default-constructible alternatives), or returns false.
template <std::size_t I = 0, class... Ts>
bool emplace_index(std::variant<Ts...>& v, std::size_t i) {
  if constexpr (I < sizeof...(Ts)) {
    if (i == I) {
      v.template emplace<I>();
      return true;
    }
    return emplace_index<I + 1>(v, i);
  } else {
    return false;
  }
}

template <class Inspector, class... Ts>
typename Inspector::result_type inspect(Inspector& f, alt_ref<Ts...>& a) {
  if constexpr (Inspector::reads_state) {
    std::uint8_t index = static_cast<std::uint8_t>(a.x.index());
    return std::visit([&](auto& value) { return f(index, value); }, a.x);
  } else {
    std::uint8_t index = 0;
    if (auto err = f(index)) return err;
    if (!emplace_index(a.x, index)) return caf::make_error(caf::sec::invalid_argument, "bad variant index");
    return std::visit([&](auto& value) { return f(value); }, a.x);
  }
}

// An enum whose values run from 0 to `last`: loading anything else is an error.
template <class E>
struct enum_ref {
  E& x;
  E last;
};

template <class E>
enum_ref<E> en(E& x, E last) {
  return {x, last};
}

template <class Inspector, class E>
typename Inspector::result_type inspect(Inspector& f, enum_ref<E>& e) {
  using U = std::underlying_type_t<E>;
  if constexpr (Inspector::reads_state) {
    U v = static_cast<U>(e.x);
    return f(v);
  } else {
    U v = 0;
    if (auto err = f(v)) return err;
    if (v > static_cast<U>(e.last)) return caf::make_error(caf::sec::invalid_argument, "bad enum value");
    e.x = static_cast<E>(v);
    return caf::none;
  }
}

// An optional filter: a presence flag, then the filter as its canonical text (to_string in
// cellar/filter.h) and a status. A filter check() refuses travels as that status alone and
// arrives as filter::invalid, so the receiving node refuses it with the same error; text
// that does not parse fails.
struct filter_ref {
  std::optional<filter>& x;
};

inline filter_ref opt(std::optional<filter>& x) { return {x}; }

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, filter_ref& o) {
  if constexpr (Inspector::reads_state) {
    bool present = o.x.has_value();
    std::string text;
    status refused = present ? o.x->check() : status::ok();
    if (present && refused) text = to_string(*o.x);
    return f(present, text, refused);
  } else {
    bool present = false;
    std::string text;
    status refused;
    if (auto err = f(present, text, refused)) return err;
    if (!present) {
      o.x.reset();
      return caf::none;
    }
    if (!refused) {
      o.x = filter::invalid(std::move(refused));
      return caf::none;
    }
    auto parsed = detail::parse_printed_filter(text);
    if (!parsed) return caf::make_error(caf::sec::invalid_argument, "bad filter: " + parsed.error().message());
    o.x = std::move(parsed.value());
    return caf::none;
  }
}

}  // namespace wire_detail

// --- status.h --------------------------------------------------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, status& x) {
  if constexpr (Inspector::reads_state) {
    auto c = static_cast<std::uint16_t>(x.code());
    std::string m = x.message();
    return f(caf::meta::type_name("status"), c, m);
  } else {
    std::uint16_t c = 0;
    std::string m;
    if (auto err = f(caf::meta::type_name("status"), c, m)) return err;
    if (code_name(static_cast<code>(c)) == "UNKNOWN")
      return caf::make_error(caf::sec::invalid_argument, "bad status code");
    x = c == 0 ? status::ok() : status(static_cast<code>(c), std::move(m));
    return caf::none;
  }
}

// --- schema.h ---------------------------------------------------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, family_descriptor& x) {
  std::uint64_t value_bytes = x.max_value_bytes;
  if constexpr (Inspector::reads_state) {
    return f(caf::meta::type_name("family_descriptor"), x.name, x.max_versions, x.ttl_seconds, value_bytes,
             wire_detail::en(x.kind, family_kind::time_series), x.min_versions, x.attributes);
  } else {
    auto r = f(caf::meta::type_name("family_descriptor"), x.name, x.max_versions, x.ttl_seconds, value_bytes,
               wire_detail::en(x.kind, family_kind::time_series), x.min_versions, x.attributes);
    x.max_value_bytes = static_cast<std::size_t>(value_bytes);
    return r;
  }
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_spec& x) {
  return f(caf::meta::type_name("partition_spec"), wire_detail::en(x.how, partition_spec::method::range), x.partitions,
           x.prefix_bytes, x.bounds);
}

// --- ops.h ------------------------------------------------------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cell& x) {
  return f(caf::meta::type_name("cell"), x.row, x.family, x.qualifier, x.timestamp, x.value, x.ttl_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_result& x) {
  return f(caf::meta::type_name("row_result"), x.row, x.cells, x.exists, x.partial);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, time_range& x) {
  return f(caf::meta::type_name("time_range"), x.min, x.max);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, column_selection::family_columns& x) {
  return f(caf::meta::type_name("family_columns"), x.family, x.qualifiers);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, column_selection& x) {
  return f(caf::meta::type_name("column_selection"), x.families);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_options& x) {
  return f(caf::meta::type_name("read_options"), x.columns, x.max_versions, x.max_versions_given, x.range,
           x.max_per_family, x.offset_per_family, wire_detail::opt(x.filter), x.cell_ttls);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put::entry& x) {
  return f(caf::meta::type_name("put_entry"), x.family, x.qualifier, x.timestamp, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, put& x) {
  return f(caf::meta::type_name("put"), x.row, x.timestamp, x.entries, wire_detail::opt(x.ttl_ms_));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, deletion::entry& x) {
  return f(caf::meta::type_name("delete_entry"), wire_detail::en(x.what, deletion::scope::columns), x.family,
           x.qualifier, x.timestamp);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, deletion& x) {
  return f(caf::meta::type_name("delete"), x.row, x.timestamp, x.entries);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, get& x) {
  return f(caf::meta::type_name("get"), x.row, x.options, x.exists_only_);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, increment::entry& x) {
  return f(caf::meta::type_name("increment_entry"), x.family, x.qualifier, x.amount);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, increment& x) {
  return f(caf::meta::type_name("increment"), x.row, x.entries, wire_detail::opt(x.ttl_ms_), x.return_results_);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, append::entry& x) {
  return f(caf::meta::type_name("append_entry"), x.family, x.qualifier, x.value);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, append& x) {
  return f(caf::meta::type_name("append"), x.row, x.entries, wire_detail::opt(x.ttl_ms_), x.return_results_);
}

// A mutation of a row_mutations: a put or a delete.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, std::variant<put, deletion>& x) {
  return f(wire_detail::alt(x));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, row_mutations& x) {
  return f(caf::meta::type_name("row_mutations"), x.row, x.mutations);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, check_and_mutate& x) {
  return f(caf::meta::type_name("check_and_mutate"), x.row, x.family, x.qualifier,
           wire_detail::en(x.op, compare_op::no_op), wire_detail::opt(x.expected), x.range, x.mutation,
           wire_detail::opt(x.filter));
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, op_result& x) {
  return f(caf::meta::type_name("op_result"), x.st, x.row, x.processed);
}

// One action of a batch. ADL finds this for std::variant<cellar::...> through the
// variant's template arguments.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, batch_op& x) {
  return f(caf::meta::type_name("batch_op"), wire_detail::alt(x));
}

}  // namespace cellar
