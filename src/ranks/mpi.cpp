#include "mpi.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "strata/core/error.hpp"

#ifdef STRATA_HAVE_MPI
#include <mpi.h>
#endif

namespace strata::dist {
namespace {

// The launcher's word that this process is one of several: Open MPI's mpirun, PMI (MPICH, Slurm's
// srun --mpi=pmi2) or PMIx (srun --mpi=pmix, prterun).
int launched_size() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
        if (const char* s = std::getenv(v)) return std::max(1, std::atoi(s));
    return std::getenv("PMIX_RANK") ? 2 : 1;  // PMIx says the size only through MPI
}

#ifdef STRATA_HAVE_MPI
struct World {
    int rank = 0, size = 1, node_rank = 0, node_size = 1;
    bool mpi = false;
    MPI_Comm node = MPI_COMM_NULL;
};

#define STRATA_MPI(call) check((call), #call, __FILE__, __LINE__)

void check(int rc, const char* call, const char* file, int line);

World& world() {
    static World w = [] {
        World x;
        if (launched_size() <= 1) return x;
        int started = 0;
        MPI_Initialized(&started);
        if (!started) {
            int provided = 0;
            // Snapshots are written by threads, but only this one talks to MPI.
            if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
                throw Error("MPI_Init_thread failed: the launcher started this process but MPI would not start");
            std::atexit([] {
                int finalized = 0;
                MPI_Finalized(&finalized);
                if (!finalized) MPI_Finalize();
            });
        }
        x.mpi = true;
        // Errors come back as return codes (checked), not as MPI's default abort without a word.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &x.size);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, x.rank, MPI_INFO_NULL, &x.node);
        MPI_Comm_rank(x.node, &x.node_rank);
        MPI_Comm_size(x.node, &x.node_size);
        return x;
    }();
    return w;
}

void check(int rc, const char* call, const char* file, int line) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Error(std::string(call).substr(0, std::string(call).find('(')) + " failed: " + text + " (" + file + ":" +
                std::to_string(line) + ", " + where() + ")");
}

int count_of(std::size_t bytes, const char* what) {
    if (bytes > std::size_t(INT_MAX))
        throw Error(std::string(what) + " of " + std::to_string(bytes) +
                    " bytes is beyond one MPI message (2 GiB): use more ranks or a smaller grid");
    return int(bytes);
}
#endif

}  // namespace

#ifdef STRATA_HAVE_MPI
int rank() { return world().rank; }
int size() { return world().size; }
int node_rank() { return world().node_rank; }
int node_size() { return world().node_size; }

void sendrecv(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes, int from, int tag) {
    if (to < 0 && from < 0) return;
    const int ns = count_of(send_bytes, "a halo message"), nr = count_of(recv_bytes, "a halo message");
    STRATA_MPI(MPI_Sendrecv(send, to < 0 ? 0 : ns, MPI_BYTE, to < 0 ? MPI_PROC_NULL : to, tag, recv, from < 0 ? 0 : nr,
                            MPI_BYTE, from < 0 ? MPI_PROC_NULL : from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

void allreduce_max(double* v, int n) {
    if (size() > 1) STRATA_MPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
}
void allreduce_sum(double* v, int n) {
    if (size() > 1) STRATA_MPI(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
}
int allreduce_max(int v) {
    if (size() > 1) STRATA_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    return v;
}
std::int64_t allreduce_max(std::int64_t v) {
    if (size() > 1) STRATA_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD));
    return v;
}

void broadcast(void* data, std::size_t bytes) {
    if (size() > 1) STRATA_MPI(MPI_Bcast(data, count_of(bytes, "a broadcast"), MPI_BYTE, 0, MPI_COMM_WORLD));
}

std::vector<unsigned char> allgather(const void* data, std::size_t bytes, bool everywhere) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    if (size() == 1) return {p, p + bytes};
    const int n = count_of(bytes, "a rank's part");
    std::vector<int> counts(size()), displs(size());
    STRATA_MPI(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD));
    if (!everywhere) {
        std::size_t total = 0;
        for (int r = 0; r < size(); ++r) displs[r] = count_of(total, "a gathered field"), total += std::size_t(counts[r]);
        count_of(total, "a gathered field");
        std::vector<unsigned char> out(rank() == 0 ? total : 0);
        STRATA_MPI(MPI_Gatherv(p, n, MPI_BYTE, out.data(), counts.data(), displs.data(), MPI_BYTE, 0, MPI_COMM_WORLD));
        return out;
    }
    std::size_t total = 0;
    for (int r = 0; r < size(); ++r) {
        displs[r] = count_of(total, "a gathered field");
        total += std::size_t(counts[r]);
    }
    count_of(total, "a gathered field");
    std::vector<unsigned char> out(total);
    STRATA_MPI(MPI_Allgatherv(p, n, MPI_BYTE, out.data(), counts.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD));
    return out;
}

void abort(int code) {
    std::cout.flush();
    std::cerr.flush();
    // The launcher forwards a rank's output asynchronously and stops reading once the abort kills
    // the job: the line that says why needs a moment to reach the user first.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (world().mpi) MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}
#else
// A build without MPI: one rank, unless a launcher started several copies of this process.
namespace {
void single() {
    static const bool alone = [] {
        if (launched_size() > 1)
            throw Error("this strata was built without MPI, so it cannot run as one of several ranks: install "
                        "Open MPI (scripts/setup.sh installs libopenmpi-dev) and rebuild, or run without mpirun");
        return true;
    }();
    (void)alone;
}
}  // namespace
int rank() { return single(), 0; }
int size() { return single(), 1; }
int node_rank() { return 0; }
int node_size() { return 1; }
void sendrecv(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t, int from, int) {
    if (to == 0 && from == 0 && send_bytes) std::memcpy(recv, send, send_bytes);
}
void allreduce_max(double*, int) {}
void allreduce_sum(double*, int) {}
int allreduce_max(int v) { return v; }
std::int64_t allreduce_max(std::int64_t v) { return v; }
void broadcast(void*, std::size_t) {}
std::vector<unsigned char> allgather(const void* data, std::size_t bytes) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    return {p, p + bytes};
}
void abort(int code) {
    std::cerr.flush();
    std::_Exit(code);
}
#endif

std::vector<std::string> allgather_texts(const std::string& text) {
    const std::vector<unsigned char> all = allgather(text.c_str(), text.size() + 1);  // each with its NUL
    std::vector<std::string> out;
    for (std::size_t at = 0; at < all.size(); at += out.back().size() + 1)
        out.emplace_back(reinterpret_cast<const char*>(all.data() + at));
    return out;
}

namespace {
Phase g_phase = Phase::parse;
}
Phase phase() { return g_phase; }
void begin_setup() { g_phase = size() > 1 ? Phase::setup : Phase::run; }

// The failed rank of smallest number and its code, as one maximum: (size - rank) * 8 + code.
void setup_checkpoint() {
    if (g_phase != Phase::setup) return;
    const int v = allreduce_max(0);
    if (v == 0) return;
    g_phase = Phase::run;
    throw Silent{v % 8};
}

void end_setup() {
    setup_checkpoint();
    g_phase = Phase::run;
}

bool says_why(int& code) {
    switch (g_phase) {
        case Phase::parse: return rank() == 0;
        case Phase::setup: {
            const int v = allreduce_max((size() - rank()) * 8 + std::min(code, 7));
            g_phase = Phase::run;
            code = v % 8;
            return size() - v / 8 == rank();
        }
        case Phase::run: return true;
    }
    return true;
}

int size_or_one() {
    try {
        return size();
    } catch (const std::exception&) {
        return 1;
    }
}

std::string where() { return "rank " + std::to_string(rank()) + " of " + std::to_string(size()); }

}  // namespace strata::dist
