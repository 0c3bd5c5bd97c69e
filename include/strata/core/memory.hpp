#pragma once
// Refusing a problem that does not fit, before anything is allocated: a grid too large for the
// host (or the GPU) must be one clear line with the bytes needed and available, not minutes of
// swapping or a bare std::bad_alloc.
#include <cstdint>
#include <string>

namespace strata {

// Bytes this process can still allocate without swapping: the kernel's MemAvailable, or less
// where a cgroup caps the process (a batch job's allocation, a container's limit; cgroup v2 or
// v1's memory controller, the process's own cgroup and those above it) or its address-space
// limit does (ulimit -v).
std::int64_t available_host_bytes();

// The host memory this process may take, and who says so: the kernel's MemAvailable (`free`), its
// cgroups (`cgroup`), $STRATA_NODE_MEMORY (`assigned`: what a scheduler allows the run on this node
// where no cgroup says so; bytes, or with K, M, G or T, powers of 1000) and its address-space limit
// (`limits`: ulimit -v); -1 where one sets none. A run of several ranks on one node shares the
// node's (share_host_memory): then `share` is this rank's.
struct HostMemory {
    std::int64_t free = -1, cgroup = -1, assigned = -1, limits = -1;
    std::int64_t share = -1;  // this rank's part of the node's, less what it took since
    int sharing = 1;          // the ranks on the node that share it
    // The least of them; with a share, the share and the limits alone (the node's free memory
    // falls as the other ranks take their parts, which their shares counted already).
    std::int64_t available() const;
};
HostMemory host_memory();

// The ranks of a run on one node take their parts from the node's memory together: each checking
// what the node has left would let them all take what only one may. Called on every rank of the
// node before any of them allocates its part (make_decomposed: between two checkpoints), it takes
// the node's memory now (the least of free, cgroup and assigned) and gives this rank 1/ranks of it;
// later checks count this process's growth since (its resident set) against that share.
void share_host_memory(int ranks_on_node);

// What the cgroups of a process leave it, the least over each cgroup above it of its limit less its
// usage, or -1 where none sets a limit: `root` is where the hierarchies are mounted
// (/sys/fs/cgroup), `self_cgroup` the text of /proc/self/cgroup.
std::int64_t cgroup_headroom(const std::string& root, const std::string& self_cgroup);

// Throws UsageError "WHAT: 432 GB of host memory needed, 21.7 GB available (try ...)" when
// `bytes` exceed what is available.
void require_host_memory(std::int64_t bytes, const std::string& what,
                         const std::string& hint = "try a smaller grid");

// The refusal's text, shared with the GPU's check: `where` is "host memory" or the device's name.
std::string memory_refusal(const std::string& what, std::int64_t bytes, std::int64_t available,
                           const std::string& where, const std::string& hint);

// This process's peak resident set so far (Linux's VmHWM, /proc/self/status), in bytes; -1 where
// the system does not say.
std::int64_t peak_resident_bytes();

// "1.5 GB", "512 MB", "16 KB" (powers of 1000, as free(1) -h and nvidia-smi's GB do not agree
// anyway; three significant digits).
std::string format_bytes(double bytes);

}  // namespace strata
