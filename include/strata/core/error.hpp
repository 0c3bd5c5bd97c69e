#pragma once
#include <stdexcept>
#include <string>

namespace strata {

// Every failure that reaches the user is one of these; the CLI turns it into one line on
// stderr and a non-zero exit. UsageError is bad input (exit 2), Error anything else (exit 1).
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class UsageError : public Error {
public:
    using Error::Error;
};

}  // namespace strata
