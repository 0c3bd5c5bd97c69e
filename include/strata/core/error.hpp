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

// An error every rank of a run met at once, at a step they take together (a collective write whose
// failure on one rank every rank learns): rank 0 alone says why, and every rank exits with code 1
// where it is, without ending the others (they are all leaving).
class SharedError : public Error {
public:
    using Error::Error;
};

// A strategy asked for that cannot take the run's precision (wave3d's TMA kernels at 16 bits), or
// a temporal kernel asked for more steps per pass than its levels fit for the model (a radius-2
// file's deepest is 3): bad input to a run, and the one refusal `strata check` and `strata bench`
// list and go on past (any other error of a strategy is still a failure there).
class KernelRefused : public UsageError {
public:
    using UsageError::UsageError;
};

}  // namespace strata
