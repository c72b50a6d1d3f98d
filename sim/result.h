#pragma once
// Result<T>: the answer of a boundary operation (file loading, scene parsing, factorization) that
// can fail in a way the user can act on. Either a value or a message; never both.
#include <optional>
#include <string>
#include <utility>

namespace clothlab {

struct Error {
  std::string message;  // names the file / line / key and what is wrong
};

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const std::string& error() const { return error_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  std::string error_;
};

}  // namespace clothlab
