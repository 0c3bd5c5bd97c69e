#include "nccl.hpp"

#include <dlfcn.h>

#include <span>
#include <string>
#include <type_traits>

#include "mpi.hpp"
#include "strata/core/error.hpp"

#if defined(STRATA_HAVE_CUDA) && __has_include(<nccl.h>)
#include <nccl.h>
#define STRATA_NCCL_TYPES 1
#endif

namespace strata::dist {

#ifdef STRATA_NCCL_TYPES
// The entry points, resolved from the library once.
struct Nccl::Api {
    decltype(&ncclGetUniqueId) get_unique_id;
    decltype(&ncclCommInitRank) init_rank;
    decltype(&ncclCommDestroy) destroy;
    decltype(&ncclGroupStart) group_start;
    decltype(&ncclGroupEnd) group_end;
    decltype(&ncclSend) send;
    decltype(&ncclRecv) recv;
    decltype(&ncclGetErrorString) error_string;
};

namespace {

const Nccl::Api* load() {
    static const Nccl::Api* api = []() -> const Nccl::Api* {
        void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!lib) lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return nullptr;
        static Nccl::Api a;
        auto sym = [&](auto& f, const char* name) {
            f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, name));
            return f != nullptr;
        };
        if (!(sym(a.get_unique_id, "ncclGetUniqueId") && sym(a.init_rank, "ncclCommInitRank") &&
              sym(a.destroy, "ncclCommDestroy") && sym(a.group_start, "ncclGroupStart") &&
              sym(a.group_end, "ncclGroupEnd") && sym(a.send, "ncclSend") && sym(a.recv, "ncclRecv") &&
              sym(a.error_string, "ncclGetErrorString")))
            return nullptr;
        return &a;
    }();
    return api;
}

}  // namespace

// Every NCCL call checked: Error naming the call, the file, the line and the rank.
#define STRATA_NCCL(name, call) check(api_, (api_->call), name, __FILE__, __LINE__)
namespace {
void check(const Nccl::Api* api, ncclResult_t rc, const char* call, const char* file, int line) {
    if (rc == ncclSuccess) return;
    throw Error(std::string(call) + " failed: " + api->error_string(rc) + " (" + file + ":" + std::to_string(line) +
                ", " + where() + ")");
}
}  // namespace

bool Nccl::loadable() { return load() != nullptr; }

std::shared_ptr<Nccl> Nccl::open() {
    const Api* api = load();
    if (!api)
        throw Error("--halos nccl: NCCL (libnccl.so.2) is not on this machine's library path (" + where() +
                    "): install NCCL, or use --halos mpi");
    std::shared_ptr<Nccl> n(new Nccl);
    n->api_ = api;
    ncclUniqueId id{};
    if (rank() == 0) {
        const ncclResult_t rc = api->get_unique_id(&id);
        if (rc != ncclSuccess)
            throw Error(std::string("ncclGetUniqueId failed: ") + api->error_string(rc) + " (" + where() + ")");
    }
    broadcast(&id, sizeof id);
    ncclComm_t comm = nullptr;
    const ncclResult_t rc = api->init_rank(&comm, size(), id, rank());
    if (rc != ncclSuccess)
        throw Error(std::string("ncclCommInitRank failed: ") + api->error_string(rc) + " (" + where() +
                    "; NCCL takes one GPU per rank)");
    n->comm_ = comm;
    return n;
}

Nccl::~Nccl() {
    if (api_ && comm_) api_->destroy(static_cast<ncclComm_t>(comm_));
}

void Nccl::exchange(const Peer* p, int n, void* stream) {
    const ncclComm_t comm = static_cast<ncclComm_t>(comm_);
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    STRATA_NCCL("ncclGroupStart", group_start());
    for (const Peer& m : std::span(p, std::size_t(n))) {
        if (m.to >= 0 && m.send_bytes) STRATA_NCCL("ncclSend", send(m.send, m.send_bytes, ncclChar, m.to, comm, s));
        if (m.from >= 0 && m.recv_bytes) STRATA_NCCL("ncclRecv", recv(m.recv, m.recv_bytes, ncclChar, m.from, comm, s));
    }
    STRATA_NCCL("ncclGroupEnd", group_end());
}
#else
struct Nccl::Api {};
bool Nccl::loadable() { return false; }
std::shared_ptr<Nccl> Nccl::open() {
    throw Error("--halos nccl needs a build with CUDA and NCCL's header (nccl.h): use --halos mpi");
}
Nccl::~Nccl() = default;
void Nccl::exchange(const Peer*, int, void*) {}
#endif

}  // namespace strata::dist
