#include "decomposed.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "mpi.hpp"
#include "nccl.hpp"
#ifdef STRATA_HAVE_CUDA
#include "cuda/cuda_engines.hpp"
#endif
#include "description/state_scale.hpp"
#include "strata/core/error.hpp"
#include "strata/core/field_ops.hpp"
#include "strata/core/memory.hpp"

namespace strata {

std::string Decomposition::text(int dims) const {
    std::string s = std::to_string(parts[0]) + "x" + std::to_string(parts[1]);
    return dims == 3 ? s + "x" + std::to_string(parts[2]) : s;
}

Decomposition parse_decomposition(std::string_view text, int dims) {
    Decomposition d;
    int axis = 0;
    std::string_view rest = text;
    const std::string form = dims == 3 ? "PxQxR, e.g. 2x2x1" : "PxQ, e.g. 2x1";
    while (true) {
        const std::size_t x = rest.find('x');
        const std::string_view part = rest.substr(0, x);
        int v = 0;
        bool ok = !part.empty() && part.size() <= 6 && axis < dims;
        for (char c : part) ok = ok && c >= '0' && c <= '9', v = v * 10 + (c - '0');
        if (!ok || v < 1)
            throw UsageError("--decomp '" + std::string(text) + "' is not a process grid of this " +
                             std::to_string(dims) + "D model: " + form + " (ranks along each axis, each >= 1)");
        d.parts[axis++] = v;
        if (x == std::string_view::npos) break;
        rest = rest.substr(x + 1);
    }
    if (axis != dims)
        throw UsageError("--decomp '" + std::string(text) + "' names " + std::to_string(axis) + " axes; this " +
                         std::to_string(dims) + "D model needs " + form);
    return d;
}

Decomposition default_decomposition(int dims, int ranks) {
    Decomposition d;
    d.parts[dims == 3 ? 2 : 1] = ranks;
    return d;
}

int process_rank() { return dist::rank(); }
int process_count() { return dist::size(); }

namespace dist {
namespace {

constexpr char kAxis[] = "xyz";

int axis_n(const Extent& e, int a) { return a == 0 ? e.nx : a == 1 ? e.ny : e.nz; }

std::array<int, 3> coords(const Decomposition& d, int rank) {
    return {rank % d.parts[0], rank / d.parts[0] % d.parts[1], rank / (d.parts[0] * d.parts[1])};
}
int rank_of(const Decomposition& d, std::array<int, 3> c) { return c[0] + d.parts[0] * (c[1] + d.parts[1] * c[2]); }

// Part c of n cells split in p: the first n % p parts have one cell more.
std::pair<int, int> split(int n, int p, int c) {
    const int q = n / p, r = n % p;
    return {c * q + std::min(c, r), q + (c < r ? 1 : 0)};
}

// A halo either side of a cut: along an axis of several parts, toward each neighbour (around the
// grid too when it wraps).
std::pair<int, int> halos(const Decomposition& d, int a, int c, int halo, bool periodic) {
    const int p = d.parts[a];
    if (p == 1) return {0, 0};
    return {c > 0 || periodic ? halo : 0, c < p - 1 || periodic ? halo : 0};
}

// The halos over MPI: host memory, straight from the engine (CPU) or staged (CUDA). With NCCL
// (`--halos nccl`), a CUDA engine's halos go device to device instead.
class MpiSubdomain final : public Subdomain {
public:
    MpiSubdomain(const Window& w, const int (&nb)[6], int halo, bool exchanging, std::shared_ptr<Nccl> nccl)
        : Subdomain(w, nb, halo, exchanging), nccl_(std::move(nccl)) {}
    void transfer(int axis, int dir, const void* send, std::size_t send_bytes, void* recv,
                  std::size_t recv_bytes) override {
        sendrecv(send, send_bytes, to(axis, dir), recv, recv_bytes, from(axis, dir), 2 * axis + dir);
    }
    bool device_transfers() const override { return nccl_ != nullptr; }
    void device_transfer(int axis, const Message* m, int n, void* stream) override {
        std::vector<Nccl::Peer> peers;
        for (int i = 0; i < n; ++i)
            peers.push_back({m[i].send, m[i].send_bytes, to(axis, m[i].dir), m[i].recv, m[i].recv_bytes, from(axis, m[i].dir)});
        nccl_->exchange(peers.data(), n, stream);
    }
    void all_built(const std::string& refusal) override {
        if (agreed_) return;
        agreed_ = true;
        setup_checkpoint();  // (a rank that failed otherwise says why, and every rank ends)
        const std::vector<std::string> all =
            allgather_texts(refusal.empty() ? refusal : refusal + " (rank " + std::to_string(rank()) + ")");
        for (const std::string& r : all)
            if (!r.empty()) throw UsageError(r);
    }
    const char* transport() const override { return nccl_ ? "NCCL" : "MPI"; }
    void combine(Reduced* r, int n) override {
        std::vector<double> mx(n), sums(2 * std::size_t(n));
        for (int i = 0; i < n; ++i) mx[i] = r[i].max_abs, sums[2 * i] = r[i].sum, sums[2 * i + 1] = r[i].sum_sq;
        allreduce_max(mx.data(), n);
        allreduce_sum(sums.data(), 2 * n);
        for (int i = 0; i < n; ++i) r[i].max_abs = mx[i], r[i].sum = sums[2 * i], r[i].sum_sq = sums[2 * i + 1];
    }

private:
    std::shared_ptr<Nccl> nccl_;  // null: MPI
    bool agreed_ = false;         // all_built done
};

// A whole field's interior on the host, for snapshots.
template <class T>
class GatheredCopy final : public FieldCopy<T> {
public:
    explicit GatheredCopy(std::vector<T> v) : values_(std::move(v)) {}
    const T* wait() override { return values_.data(); }

private:
    std::vector<T> values_;
};

template <class T>
class DecomposedEngine final : public TypedEngine<T> {
public:
    DecomposedEngine(std::unique_ptr<TypedEngine<T>> local, std::shared_ptr<Subdomain> sub,
                     const ModelInfo& m, const Extent& global, std::vector<Window> windows,
                     PointFeatures points, bool on_device, double scale)
        : on_device_(on_device),
          scale_(scale),
          local_(std::move(local)),
          sub_(std::move(sub)),
          model_(&m),
          global_(global),
          windows_(std::move(windows)),
          points_(std::move(points)) {
        for (const GridPoint& g : points_.receivers) owner_.push_back(owner(g));
    }

    const ModelInfo& model() const override { return *model_; }
    void advance(std::int64_t steps) override { local_->advance(steps); }
    std::int64_t step() const override { return local_->step(); }
    Observables observables() override { return local_->observables(); }
    std::vector<std::string> arrays() const override { return local_->arrays(); }
    KernelInfo kernel_info() const override { return local_->kernel_info(); }
    void synchronize() override { local_->synchronize(); }
    std::string halo_schedule() const override {
        if (!sub_->exchanges()) return "never exchanged (-k)";
        if (sub_->device_transfers()) return "over NCCL, device to device, " + local_->halo_schedule();
        return on_device_ ? "over MPI, staged through the host, before each pass" : "over MPI every step";
    }
    void wait_for(void* stream) override { local_->wait_for(stream); }
    void signal_to(void* stream) override { local_->signal_to(stream); }
    // Exchanges timed on the host (the subdomain's) and on the device (the engine's).
    double exposed_communication_s() const override { return sub_->exposed_s + local_->exposed_communication_s(); }
    double halo_bytes_per_step() const override { return local_->halo_bytes_per_step(); }
    void relaunch(const EngineOptions&) override {
        throw UsageError("a run over several ranks keeps the launch it started with (tune on one rank first)");
    }

    std::vector<double> values(std::string_view name) override {
        if (name == "traces") return unscaled(array(name), scale_);
        const bool state = holds_state(model_->fields[std::size_t(model_->field_index(name))].role);
        return unscaled(interior_values(field(name)), state ? scale_ : 1);
    }

    // Every rank's owned cells, gathered on every rank; the ghost layer is the model's boundary.
    HostField<T> field(std::string_view name) override { return gather(name, true); }
    // Checkpoints and snapshots need the whole grid on rank 0 alone.
    State<T> state() override {
        State<T> s;
        s.step = step();
        const bool root = rank() == 0;
        for (const FieldDecl& f : model().fields)
            if (holds_state(f.role)) {
                HostField<T> u = gather(f.name, false);
                if (root) s.fields.emplace_back(f.name, std::move(u));
            }
        for (const std::string& a : arrays()) {
            std::vector<T> v = gather_array(a, false);
            if (root) s.arrays.emplace_back(a, std::move(v));
        }
        return s;
    }
    // This rank's own cells, nothing gathered: what every rank writes at once into one file.
    PartField<T> part_field(std::string_view name) override {
        PartField<T> p;
        const Window& me = windows_[rank()];
        for (int a = 0; a < 3; ++a) p.lo[a] = me.global_index(a, me.own_lo[a]), p.n[a] = me.own_n[a];
        p.values.reserve(std::size_t(me.own_n[0]) * me.own_n[1] * me.own_n[2]);
        const FieldView<T> v = local_->view(name);
        if (v.device < 0) {  // host memory: the own cells straight from it, no copy of the window
            for_owned(me, [&](int i, int j, int k) {
                p.values.push_back(v.data[i + j * v.stride_y + k * v.stride_z]);
            });
            return p;
        }
        const HostField<T> mine = local_->field(name);
        for_owned(me, [&](int i, int j, int k) { p.values.push_back(mine.at(i, j, k)); });
        return p;
    }
    std::unique_ptr<FieldCopy<T>> snapshot(std::string_view name) override {
        const HostField<T> u = gather(name, false);
        return std::make_unique<GatheredCopy<T>>(rank() == 0 ? interior_values(u) : std::vector<T>{});
    }

private:
    HostField<T> gather(std::string_view name, bool everywhere) {
        const HostField<T> mine = local_->field(name);
        const Window& me = windows_[rank()];
        std::vector<T> own;
        own.reserve(std::size_t(me.own_n[0]) * me.own_n[1] * me.own_n[2]);
        for_owned(me, [&](int i, int j, int k) { own.push_back(mine.at(i, j, k)); });
        const std::vector<unsigned char> all = allgather(own.data(), own.size() * sizeof(T), everywhere);
        if (!everywhere && rank() != 0) return {};
        HostField<T> u(global_);
        std::size_t at = 0;
        for (const Window& w : windows_)
            for_owned(w, [&](int i, int j, int k) {
                T v;
                std::memcpy(&v, all.data() + sizeof(T) * at++, sizeof(T));
                u.at(w.global_index(0, i), w.global_index(1, j), w.global_index(2, k)) = v;
            });
        if (model_->mirror) mirror_ghosts(u);
        if (model_->periodic) periodic_ghosts(u);
        return u;
    }

public:
    void set_field(std::string_view name, const HostField<T>& values) override {
        const Extent& e = values.extent;
        if (e.nx != global_.nx || e.ny != global_.ny || e.nz != global_.nz || e.ghost != global_.ghost)
            throw Error("field '" + std::string(name) + "' differs from the problem's grid in extent");
        local_->set_field(name, window_of(values, windows_[rank()]));
    }
    // Rows of one value per receiver, as on one rank: each receiver's column from its owner.
    std::vector<T> array(std::string_view name) override { return gather_array(name, true); }
    std::vector<T> gather_array(std::string_view name, bool everywhere) {
        const std::vector<T> mine = local_->array(name);
        const std::vector<unsigned char> all = allgather(mine.data(), mine.size() * sizeof(T), everywhere);
        if (!everywhere && rank() != 0) return {};
        const std::size_t nr = points_.receivers.size();
        const std::int64_t rows = points_.rows(step());
        std::vector<T> out(std::size_t(rows) * nr);
        std::vector<std::size_t> start(windows_.size() + 1, 0), count(windows_.size(), 0), column(nr);
        for (std::size_t r = 0; r < nr; ++r) column[r] = count[owner_[r]]++;
        for (std::size_t w = 0; w < windows_.size(); ++w) start[w + 1] = start[w] + count[w] * std::size_t(rows);
        if (start.back() * sizeof(T) != all.size()) throw Error("the ranks' traces do not add up to the run's receivers");
        for (std::int64_t row = 0; row < rows; ++row)
            for (std::size_t r = 0; r < nr; ++r) {
                const int o = owner_[r];
                std::memcpy(&out[std::size_t(row) * nr + r],
                            all.data() + sizeof(T) * (start[o] + std::size_t(row) * count[o] + column[r]), sizeof(T));
            }
        return out;
    }
    FieldView<T> view(std::string_view) override {
        throw UsageError("a run over several ranks has no view of a whole field in one place (take field() instead)");
    }
    void copy_in(std::string_view, const T*, std::int64_t, std::int64_t) override {
        throw UsageError("a run over several ranks takes whole fields through set_field()");
    }

private:
    template <class F>
    static void for_owned(const Window& w, const F& f) {
        for (int k = w.own_lo[2]; k < w.own_lo[2] + w.own_n[2]; ++k)
            for (int j = w.own_lo[1]; j < w.own_lo[1] + w.own_n[1]; ++j)
                for (int i = w.own_lo[0]; i < w.own_lo[0] + w.own_n[0]; ++i) f(i, j, k);
    }
    int owner(const GridPoint& g) const {
        for (std::size_t r = 0; r < windows_.size(); ++r) {
            const Window& w = windows_[r];
            if (w.owns(w.local_index(0, g.i), w.local_index(1, g.j), w.local_index(2, g.k))) return int(r);
        }
        throw Error("a receiver outside the grid");
    }

    bool on_device_;  // a CUDA engine's (else a CPU engine's) halos
    double scale_;    // Problem::state_scale
    std::unique_ptr<TypedEngine<T>> local_;
    std::shared_ptr<Subdomain> sub_;
    const ModelInfo* model_;
    Extent global_;
    std::vector<Window> windows_;  // every rank's, in rank order
    PointFeatures points_;         // the whole grid's
    std::vector<int> owner_;       // each receiver's rank
};

// A box of cells (x fastest) into `u` from its cell `at` on.
template <class T>
void place_box(HostField<T>& u, const int (&at)[3], const std::array<int, 3>& n, const std::vector<T>& values) {
    if (values.size() != std::size_t(n[0]) * n[1] * n[2])
        throw Error("a part of the state read has another size than the cells asked for");
    std::size_t v = 0;
    for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
            for (int i = 0; i < n[0]; ++i) u.at(at[0] + i, at[1] + j, at[2] + k) = values[v++];
}

// A state of the whole grid cut to a window: its fields' cells, the rows of its receivers' traces.
template <class T>
State<T> window_state(const State<T>& whole, const Window& me, const Extent& global,
                      const PointFeatures& points, bool exchanged) {
    State<T> part;
    part.step = whole.step;
    // -k: halos never exchanged, so every rank reads the whole grid (its halos' cells too).
    if (whole.read_box && whole.fields.empty() && !exchanged) {
        State<T> all = whole;
        all.read_box = nullptr;
        const std::array<int, 3> n{global.nx, global.ny, global.nz};
        for (auto& [name, values] : whole.read_box({0, 0, 0}, n)) {
            HostField<T> u(global);
            place_box(u, {0, 0, 0}, n, values);
            all.fields.emplace_back(name, std::move(u));
        }
        return window_state(all, me, global, points, exchanged);
    }
    if (whole.read_box && whole.fields.empty()) {
        // This rank's own cells alone (a checkpoint read in parts): its halos start at 0, and the
        // first pass takes them from their owners, as every pass does (the engines exchange before
        // computing), so the run goes on bitwise as from the whole state.
        std::array<int, 3> lo{0, 0, 0}, n{1, 1, 1};
        for (int a = 0; a < global.dims; ++a) lo[a] = me.global_index(a, me.own_lo[a]), n[a] = me.own_n[a];
        for (auto& [name, values] : whole.read_box(lo, n)) {
            HostField<T> u(me.local);
            place_box(u, me.own_lo, n, values);
            part.fields.emplace_back(name, std::move(u));
        }
    }
    for (const auto& [name, f] : whole.fields) {
        if (f.extent.nx != global.nx || f.extent.ny != global.ny || f.extent.nz != global.nz)
            throw Error("the state's field '" + name + "' differs from the problem's grid in extent");
        part.fields.emplace_back(name, window_of(f, me));
    }
    for (const auto& [name, a] : whole.arrays) {
        if (name != "traces") throw Error("a run over several ranks does not take the array '" + name + "'");
        const std::size_t nr = points.receivers.size();
        std::vector<std::size_t> cols;
        for (std::size_t r = 0; r < nr; ++r) {
            const GridPoint g = points.receivers[r];
            if (me.owns(me.local_index(0, g.i), me.local_index(1, g.j), me.local_index(2, g.k))) cols.push_back(r);
        }
        std::vector<T> local;
        for (std::size_t row = 0; nr && row < a.size() / nr; ++row)
            for (std::size_t c : cols) local.push_back(a[row * nr + c]);
        part.arrays.emplace_back(name, std::move(local));
    }
    return part;
}

}  // namespace

namespace {
bool sharing_gpus() {
    const char* share = std::getenv("STRATA_SHARE_GPUS");
    return share && std::string(share) == "1";
}
}  // namespace

bool nccl_halos(Backend backend) {
    if (size() <= 1) return false;
    // Every rank decides alike (one on NCCL and one on MPI would wait for each other forever).
    const bool here = backend == Backend::cuda && !sharing_gpus() && Nccl::loadable();
    return allreduce_max(here ? 0 : 1) == 0;
}

bool use_nccl(const Decomposition& d, Backend backend) {
    using H = Decomposition::Halos;
    return d.halos == H::automatic ? nccl_halos(backend) : d.halos == H::nccl;
}

void use_rank_device() {
#ifdef STRATA_HAVE_CUDA
    cuda::require_device();
    const int gpus = cuda::device_count();
    if (node_size() > gpus && !sharing_gpus())
        throw UsageError(std::to_string(node_size()) + " ranks on this node but " + std::to_string(gpus) +
                         " GPU" + (gpus > 1 ? "s" : "") + ": a run takes one rank per GPU (mpirun -np " +
                         std::to_string(gpus) + " per node; STRATA_SHARE_GPUS=1 lets ranks share a GPU, for tests: "
                         "it is no faster)");
    cuda::use_device(node_rank() % gpus);
#else
    throw Error("the cuda backend is not available: this strata was built without CUDA");
#endif
}

Window make_window(const Extent& global, const Decomposition& d, int rank, int halo, bool periodic) {
    for (int a = 0; a < 3; ++a) {
        const int p = d.parts[a], n = a < global.dims ? axis_n(global, a) : 1;
        if (a >= global.dims && p != 1)
            throw UsageError("the process grid " + d.text(3) + " splits z, which a 2D model does not have");
        if (p > 1 && n / p < halo) {
            std::array<int, 3> c = {0, 0, 0};
            c[a] = p - 1;  // the last parts are the thinnest
            throw UsageError("rank " + std::to_string(rank_of(d, c)) + "'s part of the grid along " + kAxis[a] + " is " +
                             std::to_string(n / p) + " cells (" + std::to_string(n) + " split in " +
                             std::to_string(p) + "), thinner than the halo of " + std::to_string(halo) +
                             " cells it must send its neighbours: use fewer ranks along " + kAxis[a] +
                             " or a larger grid");
        }
    }
    Window w;
    w.global = global;
    const std::array<int, 3> c = coords(d, rank);
    int n[3] = {global.nx, global.ny, global.nz};
    for (int a = 0; a < global.dims; ++a) {
        const auto [start, own] = split(n[a], d.parts[a], c[a]);
        const auto [lo, hi] = halos(d, a, c[a], halo, periodic);
        w.own_lo[a] = lo;
        w.own_n[a] = own;
        w.offset[a] = start - lo;
        w.periodic[a] = periodic;
        n[a] = own + lo + hi;
    }
    w.local = Extent{n[0], n[1], global.dims == 3 ? n[2] : 1, global.ghost, global.dims};
    return w;
}

std::array<int, 6> neighbours(const Decomposition& d, int rank, bool periodic, int dims) {
    std::array<int, 6> nb;
    nb.fill(-1);
    if (!d.exchange) return nb;  // -k: nobody to exchange with
    const std::array<int, 3> c = coords(d, rank);
    for (int a = 0; a < dims; ++a) {
        const int p = d.parts[a];
        if (p == 1) continue;
        std::array<int, 3> lo = c, hi = c;
        lo[a] = c[a] > 0 ? c[a] - 1 : periodic ? p - 1 : -1;
        hi[a] = c[a] < p - 1 ? c[a] + 1 : periodic ? 0 : -1;
        if (lo[a] >= 0) nb[2 * a] = rank_of(d, lo);
        if (hi[a] >= 0) nb[2 * a + 1] = rank_of(d, hi);
    }
    return nb;
}

template <class T>
std::unique_ptr<TypedEngine<T>> make_decomposed(const Problem& problem, Backend backend, const EngineOptions& o,
                                                const State<T>* initial) {
    const ModelInfo& m = problem.model();
    const Decomposition& d = o.decomp;
    if (d.ranks() != size())
        throw UsageError("the process grid " + d.text(m.dims) + " has " + std::to_string(d.ranks()) +
                         " parts but the run has " + std::to_string(size()) +
                         " ranks (mpirun -np): they must be equal");
    setup_checkpoint();  // (NCCL's id below is broadcast: a rank that failed before says why instead)
    // The node's memory is its ranks' together: taken now, when every rank has got here and none
    // has allocated its part, and shared; the checkpoint after it keeps the first to build its
    // engine from shrinking what a slower one measures.
    share_host_memory(node_size());
    setup_checkpoint();
    if (backend == Backend::cuda) use_rank_device();
    if (d.halos == Decomposition::Halos::nccl && backend != Backend::cuda)
        throw UsageError(
            "--halos nccl moves device memory: it takes --backend cuda (the CPU backends' halos go over "
            "MPI)");
    const Extent global = problem.extent();
    const PointFeatures points = problem.points();
    // A window's halo is a radius deep for a kernel of one step per pass; a temporal kernel's
    // K steps need K radii. The depth comes first, from the strategy the engine picks by the
    // largest window's cells at one radius (every rank the same: Subdomain::choice_cells), so
    // that the engine is built once, on windows that deep.
    std::int64_t choice_cells = 0;
    for (int r = 0; r < size(); ++r)
        choice_cells = std::max(choice_cells, make_window(global, d, r, m.radius, m.periodic).local.cells());
    const DepthQuery depth_of = m.depth(precision_of<T>());
    const int halo = m.radius * depth_of(problem, backend, o, choice_cells);
    std::vector<Window> windows;
    for (int r = 0; r < size(); ++r) windows.push_back(make_window(global, d, r, halo, m.periodic));
    const Window& me = windows[rank()];
    // After the depth and the windows, which every rank refuses alike: a refused launch (the
    // tuner's deeper candidates) opens no communicator.
    const std::shared_ptr<Nccl> nccl = d.exchange && use_nccl(d, backend) ? Nccl::open() : nullptr;
    std::optional<State<T>> part;
    if (initial) part = window_state(*initial, me, global, points, d.exchange);
    EngineOptions lo = o;
    lo.decomp = {};
    const std::array<int, 6> nb = neighbours(d, rank(), m.periodic, m.dims);
    const int around[6] = {nb[0], nb[1], nb[2], nb[3], nb[4], nb[5]};
    lo.subdomain = std::make_shared<MpiSubdomain>(me, around, halo, d.exchange, nccl);
    lo.subdomain->overlap = d.overlap;
    lo.subdomain->choice_cells = choice_cells;
    std::unique_ptr<TypedEngine<T>> local;
    try {
        local = m.engine<T>()(problem, backend, lo, part ? &*part : nullptr);
    } catch (const UsageError& e) {
        lo.subdomain->all_built(e.what());  // (throws the first refusal, on every rank)
        throw;
    }
    lo.subdomain->all_built("");  // (an engine that sends in its constructor agreed before)
    return std::make_unique<DecomposedEngine<T>>(std::move(local), lo.subdomain, m, global,
                                                 std::move(windows), points, backend == Backend::cuda,
                                                 problem.state_scale());
}

template std::unique_ptr<TypedEngine<float>> make_decomposed(const Problem&, Backend, const EngineOptions&,
                                                             const State<float>*);
template std::unique_ptr<TypedEngine<f16>> make_decomposed(const Problem&, Backend, const EngineOptions&,
                                                           const State<f16>*);
template std::unique_ptr<TypedEngine<bf16>> make_decomposed(const Problem&, Backend, const EngineOptions&,
                                                            const State<bf16>*);
template std::unique_ptr<TypedEngine<double>> make_decomposed(const Problem&, Backend, const EngineOptions&,
                                                              const State<double>*);

}  // namespace dist
}  // namespace strata
