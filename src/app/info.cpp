#include "info.hpp"

#include <ostream>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef STRATA_HAVE_CUDA
#include "../cuda/cuda_engines.hpp"
#endif

namespace strata::app {

void print_info(std::ostream& out) {
    out << "strata " << STRATA_VERSION << "\n"
        << "  compiler      : " << __VERSION__ << "\n";
#ifdef _OPENMP
    out << "  OpenMP        : yes, up to " << omp_get_max_threads() << " threads\n";
#else
    out << "  OpenMP        : no (the omp backend runs on one thread)\n";
#endif
#ifdef STRATA_HAVE_CUDA
    out << "  CUDA          : yes, built for sm_" << STRATA_CUDA_ARCHS << "\n";
    cuda::print_devices(out);
#else
    out << "  CUDA          : no (built without nvcc; --backend cuda is unavailable)\n";
#endif
}

}  // namespace strata::app
