#include "info.hpp"

#include <ostream>

#include "strata/core/error.hpp"
#include "strata/core/memory.hpp"
#include "strata/io/h5.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef STRATA_HAVE_CUDA
#include "cuda/cuda_engines.hpp"
#endif

namespace strata::app {

void print_info(std::ostream& out) {
    out << "strata " << STRATA_VERSION << "\n"
        << "  compiler      : g++ " << __VERSION__ << "\n";
#ifdef _OPENMP
    out << "  OpenMP        : yes, up to " << omp_get_max_threads() << " threads\n";
#else
    out << "  OpenMP        : no (the omp backend runs on one thread)\n";
#endif
    const HostMemory m = host_memory();
    out << "  host memory   : " << format_bytes(double(m.available())) << " available to this process";
    if (m.cgroup >= 0 || m.limits >= 0 || m.assigned >= 0) {
        out << " (free " << format_bytes(double(m.free));
        if (m.cgroup >= 0) out << ", its cgroup's limit leaves " << format_bytes(double(m.cgroup));
        if (m.assigned >= 0) out << ", $STRATA_NODE_MEMORY " << format_bytes(double(m.assigned));
        if (m.limits >= 0) out << ", its ulimit -v leaves " << format_bytes(double(m.limits));
        out << ")";
    }
    out << "\n";
    out << "  HDF5          : "
        << (io::hdf5_parallel() ? "yes, parallel (checkpoints named *.h5: every rank writes its part at once)"
            : io::hdf5_available() ? "yes, serial (checkpoints named *.h5, from one process)"
                                   : "no (" + io::hdf5_missing() + ")")
        << "\n";
#ifdef STRATA_HAVE_CUDA
    out << "  CUDA          : yes, built for sm_" << STRATA_CUDA_ARCHS << "\n";
    cuda::print_devices(out);
#else
    out << "  CUDA          : no (built without nvcc; --backend cuda is unavailable)\n";
#endif
}

void run_probe_command(std::ostream& out) {
#ifdef STRATA_HAVE_CUDA
    const cuda::ProbeResult r = cuda::run_probe();
    cuda::print_probe(out, r);
    out << "cached in " << cuda::probe_cache_path() << "\n";
#else
    (void)out;
    throw Error("strata probe measures a GPU, and this strata was built without CUDA");
#endif
}

}  // namespace strata::app
