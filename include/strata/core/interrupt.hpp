#pragma once
// Stopping a run cleanly. SIGINT or SIGTERM asks the run driver to stop after the steps in flight:
// it writes the checkpoint (with --checkpoint) and the pending snapshots, then throws Interrupted,
// which the CLI turns into one line and exit code 128 + the signal (130, 143). A second signal
// exits at once: checkpoints are written to a temporary and renamed, so the previous one is intact.
#include <memory>
#include <string>

#include "strata/core/error.hpp"

namespace strata {

// The signal that asked the current run to stop, 0 if none. Polled by the run driver between
// chunks of steps (about four a second).
int stop_requested();
// Asks the current run to stop as if `signal` had arrived (async-signal-safe); a binding can
// forward its own interrupt this way.
void request_stop(int signal);

// While alive: SIGINT and SIGTERM request a stop (the first) or end the process (the second);
// the handlers in place before are restored, and a pending request cleared, when it goes.
class StopOnSignals {
public:
    StopOnSignals();
    ~StopOnSignals();
    StopOnSignals(const StopOnSignals&) = delete;
    StopOnSignals& operator=(const StopOnSignals&) = delete;

private:
    struct Saved;
    std::unique_ptr<Saved> saved_;
};

// A run stopped by request_stop(): what was saved, and the exit code the shell expects.
class Interrupted : public Error {
public:
    Interrupted(int signal, const std::string& what) : Error(what), signal_(signal) {}
    int signal() const { return signal_; }
    int exit_code() const { return 128 + signal_; }

private:
    int signal_;
};

// A file being written that the second signal's immediate exit removes (AtomicFile's temporary),
// so an insisted interruption leaves no half-written files behind. Registered while alive; when
// more are in flight than the table holds (16), the rest are simply not removed.
class ExitRemoves {
public:
    explicit ExitRemoves(const std::string& path);
    ~ExitRemoves();
    ExitRemoves(const ExitRemoves&) = delete;
    ExitRemoves& operator=(const ExitRemoves&) = delete;

private:
    int slot_;
};

// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal);

}  // namespace strata
