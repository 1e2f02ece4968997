#pragma once
// Library errors. Every message names the input, row/column, or option at fault; the CLI maps
// the type to an exit status (InputError -> 3, OptionError -> 2, others -> 1).
#include <stdexcept>
#include <string>

namespace kingman {

// Base of every error kingman throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The data, labels or another input file is malformed or unusable.
class InputError : public Error {
 public:
  using Error::Error;
};

// An option value is invalid or options contradict each other.
class OptionError : public Error {
 public:
  using Error::Error;
};

// A run would exceed a resource budget (memory) and was refused before allocating.
class ResourceError : public Error {
 public:
  using Error::Error;
};

// A numerical failure that would otherwise leak NaN or an infinite log-density into a result.
class NumericalError : public Error {
 public:
  using Error::Error;
};

}  // namespace kingman
