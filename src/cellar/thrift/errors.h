// thrift/errors.h: cellar's status codes as the Thrift services' exceptions.
//
// HBase's services declare few exception types (thrift2: TIOError everywhere, and
// TIllegalArgument for a bad scanner id; thrift1: IOError, and IllegalArgument on the
// mutations). A failed call throws the declared one whose meaning fits, its message the
// status text ("TABLE_NOT_FOUND: table 't' does not exist"), so a client sees cellar's code
// and reason whatever the type. Anything else a handler throws would reach the client as a
// TApplicationException, so handlers throw only these.
#pragma once

#include <string>

#include "cellar/status.h"

namespace cellar::thrift {

// `E` with its message set to the status text.
template <class E>
[[noreturn]] void raise(const status& s) {
  E e;
  e.__set_message(s.to_string());
  throw e;
}

// Whether the status is the caller's mistake (HBase's IllegalArgumentException) rather than
// the store's.
inline bool is_illegal_argument(const status& s) {
  return s.code() == code::invalid_argument || s.code() == code::too_large || s.code() == code::not_a_long;
}

// The value of `r`, or `E` raised with its error.
template <class E, class T>
T take(result<T> r) {
  if (!r) raise<E>(r.error());
  return std::move(r).value();
}

template <class E>
void check(const status& s) {
  if (!s) raise<E>(s);
}

}  // namespace cellar::thrift
