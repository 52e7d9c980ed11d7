// The message of the nova::Error a callable throws: tests check that bad input is refused with a message
// naming the problem.
#pragma once

#include <string>

#include "nova/error.hpp"

namespace nova::testing {

// The message of the nova::Error that f throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace nova::testing
