#include "strata/core/interrupt.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <iterator>
#include <memory>

namespace strata {
namespace {

// Lock-free, so the handler may touch it.
std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free);

// The files to remove on an immediate exit. A slot's path is copied in before it is marked
// ready and unmarked before it is reused, so the handler reads only complete paths (a slot
// freed while the handler runs at worst removes a temporary already renamed away: a no-op).
struct Temporary {
    std::atomic<int> state{0};  // 0 free, 1 being filled or emptied, 2 ready
    char path[4096];
};
Temporary g_temporaries[16];

extern "C" void on_stop_signal(int signal) {
    int none = 0;
    if (g_stop.compare_exchange_strong(none, signal)) return;
    // The second signal is the user insisting: leave now, with only async-signal-safe calls. The
    // files being written go; the ones they were to replace (checkpoints) stay intact.
    for (Temporary& t : g_temporaries)
        if (t.state.load() == 2) unlink(t.path);
    static const char message[] = "\nstrata: interrupted again: stopped at once (files being written removed; "
                                  "checkpoints written before are intact)\n";
    const ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    _exit(128 + signal);
}

}  // namespace

int stop_requested() { return g_stop.load(std::memory_order_relaxed); }

void request_stop(int signal) {
    int none = 0;
    g_stop.compare_exchange_strong(none, signal);
}

struct StopOnSignals::Saved {
    struct sigaction interrupt, terminate;
};

StopOnSignals::StopOnSignals() : saved_(std::make_unique<Saved>()) {
    g_stop = 0;
    struct sigaction sa = {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // a write or a wait under way carries on; the driver polls between chunks
    sigaction(SIGINT, &sa, &saved_->interrupt);
    sigaction(SIGTERM, &sa, &saved_->terminate);
}

StopOnSignals::~StopOnSignals() {
    sigaction(SIGINT, &saved_->interrupt, nullptr);
    sigaction(SIGTERM, &saved_->terminate, nullptr);
    g_stop = 0;
}

ExitRemoves::ExitRemoves(const std::string& path) : slot_(-1) {
    if (path.size() >= sizeof g_temporaries[0].path) return;
    for (int i = 0; i < int(std::size(g_temporaries)); ++i) {
        int free = 0;
        if (!g_temporaries[i].state.compare_exchange_strong(free, 1)) continue;
        std::memcpy(g_temporaries[i].path, path.c_str(), path.size() + 1);
        g_temporaries[i].state = 2;
        slot_ = i;
        return;
    }
}

ExitRemoves::~ExitRemoves() {
    if (slot_ < 0) return;
    g_temporaries[slot_].state = 1;
    g_temporaries[slot_].state = 0;
}

std::string signal_name(int signal) {
    switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "signal " + std::to_string(signal);
    }
}

}  // namespace strata
