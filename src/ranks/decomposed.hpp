#pragma once
// The decomposed engine (domain.hpp): one rank's engine on its window, behind the Engine
// interface of the whole grid. What returns a whole field (field, values, state, snapshots) is
// gathered from every rank; what sets one takes each rank's window of it.
#include <array>
#include <memory>

#include "strata/domain.hpp"
#include "strata/engine.hpp"

namespace strata::dist {

// The window of `rank` with halos `halo` cells deep toward its neighbours. UsageError when a part
// is thinner than the halo (naming the rank and the axis) or the process grid does not fit.
Window make_window(const Extent& global, const Decomposition& d, int rank, int halo, bool periodic);
// The neighbour ranks of `rank`: below and above along x, y, z (-1: none, the grid's edge).
std::array<int, 6> neighbours(const Decomposition& d, int rank, bool periodic, int dims);

// The GPU of this rank: the node-local rank's. UsageError when the node has more ranks than GPUs
// (unless STRATA_SHARE_GPUS=1, for tests).
void use_rank_device();
// Whether every rank of this run is on CUDA with a GPU of its own (no STRATA_SHARE_GPUS) and NCCL
// loads on it: where `--halos auto` takes NCCL. Collective (false on one rank).
bool nccl_halos(Backend backend);
// Whether the halos go over NCCL: as asked, or for `automatic`, nccl_halos. Collective then.
bool use_nccl(const Decomposition& d, Backend backend);

// The model's engine over the ranks of this process' run (`o.decomp`, which must match them).
template <class T>
std::unique_ptr<TypedEngine<T>> make_decomposed(const Problem& problem, Backend backend, const EngineOptions& o,
                                                const State<T>* initial);

}  // namespace strata::dist
