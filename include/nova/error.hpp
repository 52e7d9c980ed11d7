// nova's single exception type. Every failure that a user can cause (bad points, bad files,
// bad shapes) is reported as a nova::Error whose message names the problem in one line.
#pragma once

#include <stdexcept>
#include <string>

namespace nova {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nova
