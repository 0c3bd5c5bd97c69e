#pragma once
// The few MPI calls Strata makes, each checked: a failure throws Error naming the call, the file,
// the line and the rank. Without MPI in the build, or outside a launcher, the process is rank 0
// of 1 and every call is the trivial one (a run launched by mpirun into a build without MPI is an
// error, never N copies of one run writing the same files).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::dist {

// MPI is started at the first call of any function here, when a launcher started the process.
int rank();
int size();
// The rank among those on this node (the GPU it takes); 0 outside a launcher.
int node_rank();
int node_size();
// "rank 2 of 4", for messages.
std::string where();

// Sends `send_bytes` to rank `to` (-1: nobody) while receiving `recv_bytes` from `from` (-1: nobody).
void sendrecv(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes, int from, int tag);
void allreduce_max(double* v, int n);
void allreduce_sum(double* v, int n);
int allreduce_max(int v);
// Every rank's `bytes` (they may differ), concatenated in rank order, on every rank (`everywhere`)
// or on rank 0 alone (the others get nothing).
std::vector<unsigned char> allgather(const void* data, std::size_t bytes, bool everywhere = true);
// Every rank's `text` (of any length, no NUL in it), in rank order, on every rank.
std::vector<std::string> allgather_texts(const std::string& text);

std::int64_t allreduce_max(std::int64_t v);
// Rank 0's `bytes` at `data` on every rank.
void broadcast(void* data, std::size_t bytes);

// How an error reaches the user from a run over several ranks, by where the ranks are:
//   parse  every rank reads the same command line, so every rank fails alike: rank 0 says why,
//          every rank exits with the code.
//   setup  a rank may fail alone (a file it cannot read, its memory): the ranks that got through
//          wait at end_setup() for the others, the first failed rank says why, all exit with its
//          code.
//   run    the ranks are in the time loop, where the others would wait for a failed one forever:
//          it says why (naming itself) and ends them all (abort).
enum class Phase { parse, setup, run };
Phase phase();
void begin_setup();
// Every rank got through setup: on to the run. Otherwise throws Silent with the failed one's code.
void end_setup();
// Every rank got this far (a collective step of the setup may follow: a rank that failed alone
// before it would leave the others waiting there), and the setup goes on. Otherwise throws Silent
// with the failed one's code, as end_setup().
void setup_checkpoint();
struct Silent {
    int code;
};
// For an error this rank met: whether it says why (and `code` becomes the code every rank exits
// with). In the setup phase this is the collective counterpart of end_setup().
bool says_why(int& code);
// size() that never throws: 1 where size() would.
int size_or_one();

// Ends every rank of the run (after this rank printed why): the way out of an error that only
// some ranks met, where the others would wait for them forever.
[[noreturn]] void abort(int code);

}  // namespace strata::dist
