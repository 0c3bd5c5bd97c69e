#pragma once
// A grid decomposed over processes (MPI ranks): which part of the grid each rank's engine holds,
// and what that engine needs from the others.
//
// Each rank's engine runs the model on a window of the global grid: the cells it owns, and
// toward each neighbouring rank a halo of cells that the neighbour owns. To the engine the halo
// cells are interior cells like the others: it updates them too, with the model's boundary at the
// window's edge. That boundary is wrong for a cell whose neighbour rank holds its neighbours, so
// the error creeps inward one radius per step; the halo is as deep as the radius times the steps
// between two exchanges, so it never reaches an owned cell. Before the steps an exchange fills
// the halos with their owners' values again. An owned cell thus sees exactly the values it sees in
// a run on one rank, and computes the same bits. Every strategy of every backend works inside a
// rank unchanged, and a kernel that advances k steps per pass exchanges k radii deep once per
// pass: the communication-avoiding form of temporal blocking.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/core/error.hpp"
#include "strata/core/field.hpp"
#include "strata/core/hd.hpp"
#include "strata/core/types.hpp"
#include "strata/core/window.hpp"
#include "strata/features.hpp"
#include "strata/model.hpp"

namespace strata {

// The process grid: parts along x, y and z, x fastest in the rank order.
struct Decomposition {
    int parts[3] = {1, 1, 1};
    bool exchange = true;  // false: the halos are never exchanged (apf's -k, for timing only)
    // CUDA: the halos over NCCL, device to device, or over MPI, staged through the host; `automatic`
    // takes NCCL where every rank has a GPU of its own and the library loads.
    enum class Halos { automatic, mpi, nccl } halos = Halos::automatic;
    bool overlap = true;  // over NCCL: the faces the neighbours need first, sent while the rest updates

    std::int64_t ranks() const { return std::int64_t(parts[0]) * parts[1] * parts[2]; }
    std::string text(int dims) const;  // "2x3" or "2x2x1"
};

// "2x3" (2D) or "2x2x2" (3D); UsageError for anything else.
Decomposition parse_decomposition(std::string_view text, int dims);
// What a run over `ranks` ranks does when not told: rows (2D) or planes (3D) split in slabs.
Decomposition default_decomposition(int dims, int ranks);

// The running process among the run's ranks: 0 and 1 unless launched by mpirun (or a batch
// system's launcher) into a build with MPI.
int process_rank();
int process_count();

// A field of the whole grid cut to a window (interior cells; the ghost layer is the engine's).
template <class T>
HostField<T> window_of(const HostField<T>& global, const Window& w) {
    HostField<T> u(w.local);
    for (int k = 0; k < w.local.nz; ++k)
        for (int j = 0; j < w.local.ny; ++j)
            for (int i = 0; i < w.local.nx; ++i)
                u.at(i, j, k) = global.at(w.global_index(0, i), w.global_index(1, j), w.global_index(2, k));
    return u;
}

// The point sources and receivers of a window, in its local indices: every source in the window
// (one in a halo keeps the halo's values those of the whole grid between exchanges), the receivers
// it owns (each is recorded once, by its owner).
inline PointFeatures localize(PointFeatures p, const Window& w) {
    auto local = [&](GridPoint g) {
        return GridPoint{w.local_index(0, g.i), w.local_index(1, g.j), w.global.dims == 3 ? w.local_index(2, g.k) : g.k};
    };
    std::vector<PointSource> sources;
    for (PointSource s : p.sources)
        if (s.at = local(s.at); w.holds(s.at.i, s.at.j, s.at.k)) sources.push_back(s);
    std::vector<GridPoint> receivers;
    for (GridPoint r : p.receivers)
        if (r = local(r); w.holds(r.i, r.j, r.k) && w.owns(r.i, r.j, r.k)) receivers.push_back(r);
    p.sources = std::move(sources);
    p.receivers = std::move(receivers);
    return p;
}

// A model whose update depends on the position (wave3d's sponge) says where its grid starts in
// the whole grid (`int origin[3]`, local index + origin = global index): an engine on a window
// sets it to the window's.
template <class Model, class Sub>
Model placed(Model m, const Sub* sub) {
    if constexpr (requires { m.origin[0]; })
        if (sub)
            for (int a = 0; a < 3; ++a) m.origin[a] = sub->window.offset[a];
    return m;
}

// What an engine of one rank's window needs from the other ranks: its halos filled, its
// reductions combined. Engines call transfer() and combine() in the same order on every rank
// (they are collective).
//
// An exchange goes axis after axis, each over the whole local extent of the others, so that the
// corners of the halos (which a box stencil reads) come from the diagonal neighbour through the
// one between. Along an axis, direction 0 sends this rank's last owned cells up to the rank above
// (whose lower halo they are) and receives its own lower halo from below; direction 1 the reverse.
class Subdomain {
public:
    Subdomain(const Window& w, const int (&neighbours)[6], int halo_cells, bool exchanging)
        : window(w), halo(halo_cells), exchanging_(exchanging) {
        std::copy_n(neighbours, 6, neighbour);
    }
    virtual ~Subdomain() = default;

    const Window window;
    int neighbour[6];  // the ranks below and above along x, y, z; -1: none (the grid's edge)
    const int halo;    // cells deep
    // Seconds the engine spent exchanging while it computed nothing (its exposed communication).
    double exposed_s = 0;
    // Whether an engine whose exchanges run on the device may overlap them with its update
    // (Decomposition::overlap).
    bool overlap = true;
    // The cells an engine chooses its default kernel by (the built-in defaults follow the grid's
    // size): the same on every rank, the largest part's, since ranks of uneven parts straddling a
    // threshold would otherwise choose different kernels and depths, whose halos do not pair up.
    std::int64_t choice_cells = 0;

    // Whether exchanges move anything (not with apf's -k).
    bool exchanges() const { return exchanging_; }
    int to(int axis, int dir) const { return neighbour[2 * axis + 1 - dir]; }
    int from(int axis, int dir) const { return neighbour[2 * axis + dir]; }
    // The cells sent and received along `axis` in direction `dir` (empty where no rank is), `deep`
    // cells of the halo nearest the owned ones (all of it by default: a kernel of fewer steps
    // per pass than the halo allows needs less).
    HaloBox sent(int axis, int dir, int deep = 0) const {
        const int lo = window.own_lo[axis], end = lo + window.own_n[axis], h = deep > 0 ? deep : halo;
        return to(axis, dir) < 0 ? HaloBox{} : slab(axis, dir == 0 ? end - h : lo, dir == 0 ? end : lo + h);
    }
    HaloBox received(int axis, int dir, int deep = 0) const {
        const int lo = window.own_lo[axis], end = lo + window.own_n[axis], h = deep > 0 ? deep : halo;
        return from(axis, dir) < 0 ? HaloBox{} : slab(axis, dir == 0 ? lo - h : end, dir == 0 ? lo : end + h);
    }

    // Sends `send_bytes` to to(axis, dir) while receiving `recv_bytes` from from(axis, dir) (host
    // memory; nothing where that rank is -1).
    virtual void transfer(int axis, int dir, const void* send, std::size_t send_bytes, void* recv,
                          std::size_t recv_bytes) = 0;
    // Whether this subdomain moves device memory (device_transfer); else the caller stages
    // through the host.
    virtual bool device_transfers() const { return false; }
    // Both directions of `axis` between device buffers at once (one NCCL group: one launch and one
    // latency for both), enqueued on `stream` (a cudaStream_t): each message as transfer()'s in its
    // direction `dir`. Several messages of one direction (a field each) are paired with the
    // neighbour's in their order, so every rank lists them in the same order.
    struct Message {
        int dir;
        const void* send;
        std::size_t send_bytes;
        void* recv;
        std::size_t recv_bytes;
    };
    virtual void device_transfer(int axis, const Message* m, int n, void* stream) {
        (void)axis, (void)m, (void)n, (void)stream;
        throw Error("this subdomain moves host memory only");
    }
    // Whether every rank's engine got built, called once by each, after anything it may refuse and
    // before its first message: `refusal` is this rank's UsageError ("" where it built). A launch
    // refused on one rank alone (its GPU's free memory) would otherwise leave the others waiting
    // at their first message for a rank that left. Over ranks a collective that throws the first
    // refusal's UsageError on every rank where any refused (each build of the tuner's relies on
    // it); later calls do nothing. One process: nothing to agree.
    virtual void all_built(const std::string& refusal) { (void)refusal; }
    // How the halos travel, for the report.
    virtual const char* transport() const { return "MPI"; }
    // The ranks' reductions of their owned cells, combined: the largest max_abs, the sums summed.
    virtual void combine(Reduced* r, int n) = 0;

    // Fills the halos of `n` host fields of the window's local extent (whole arrays with their
    // ghost layers), in place.
    template <class T>
    void exchange(T* const* fields, int n) {
        if (!exchanging_) return;
        const Extent& e = window.local;
        std::vector<T> out, in;
        for (int axis = 0; axis < e.dims; ++axis)
            for (int dir = 0; dir < 2; ++dir) {
                const HaloBox s = sent(axis, dir), r = received(axis, dir);
                if (s.cells() == 0 && r.cells() == 0) continue;
                out.resize(std::size_t(s.cells() * n));
                in.resize(std::size_t(r.cells() * n));
                T* o = out.data();
                for (int m = 0; m < n; ++m) each(s, [&](std::int64_t c) { *o++ = fields[m][c]; });
                transfer(axis, dir, out.data(), out.size() * sizeof(T), in.data(), in.size() * sizeof(T));
                const T* v = in.data();
                for (int m = 0; m < n; ++m) each(r, [&](std::int64_t c) { fields[m][c] = *v++; });
            }
    }

private:
    HaloBox slab(int axis, int from, int to) const {
        HaloBox b{{0, 0, 0}, {window.local.nx, window.local.ny, window.local.nz}};
        b.lo[axis] = from;
        b.hi[axis] = to;
        return b;
    }
    template <class F>
    void each(const HaloBox& b, const F& f) const {
        for (int k = b.lo[2]; k < b.hi[2]; ++k)
            for (int j = b.lo[1]; j < b.hi[1]; ++j)
                for (int i = b.lo[0]; i < b.hi[0]; ++i) f(window.local.index(i, j, k));
    }
    bool exchanging_;
};

}  // namespace strata
