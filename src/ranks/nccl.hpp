#pragma once
// NCCL for the halos of CUDA ranks (`--halos nccl`): device memory to device memory, enqueued on
// the engine's stream, no host in between. The library is loaded at run time (libnccl.so.2) when a
// run asks for it, so a build or a machine without it runs everything else.
#include <cstddef>
#include <memory>

namespace strata::dist {

class Nccl {
public:
    // The communicator of this run's ranks on each rank's current device (after use_rank_device):
    // rank 0's id broadcast over MPI. Error naming the call and the rank when NCCL is missing or fails.
    static std::shared_ptr<Nccl> open();
    // Whether the library loads here (with every entry point open() needs).
    static bool loadable();
    ~Nccl();
    Nccl(const Nccl&) = delete;
    Nccl& operator=(const Nccl&) = delete;

    // A message each way: `send_bytes` to rank `to` and `recv_bytes` from rank `from` (-1: nobody).
    struct Peer {
        const void* send;
        std::size_t send_bytes;
        int to;
        void* recv;
        std::size_t recv_bytes;
        int from;
    };
    // Enqueues the `n` messages on `stream` (a cudaStream_t) as one group. Two ranks may exchange
    // several in a group (a field each, and each other's neighbours both ways around a periodic
    // grid): NCCL pairs a peer's sends and receives in their order, which is the same on both sides.
    void exchange(const Peer* p, int n, void* stream);

    struct Api;  // the library's entry points (nccl.cpp)

private:
    Nccl() = default;
    const Api* api_ = nullptr;
    void* comm_ = nullptr;
};

}  // namespace strata::dist
