// strata::divide on the device: the same bits as the host's `/` (an IEEE division, as the
// device's is) on every pair of divide_cases. The host test (test_apf.cpp) cannot see the device's
// code path: the zero and denormal numerators take other branches there, and the quotient is
// scaled back on the device's arithmetic.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <vector>

#include "cuda/check.hpp"
#include "divide_cases.hpp"
#include "strata/core/hd.hpp"

namespace strata {
namespace {

template <class T>
__global__ void divide_kernel(const T* a, const T* b, T* divided, T* slashed, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    divided[i] = divide(a[i], b[i]);
    slashed[i] = a[i] / b[i];
}

template <class T>
void expect_device_divide_is_the_division() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device here: GPU test skipped";
    const std::vector<std::pair<T, T>> cases = divide_cases<T>();
    const int n = int(cases.size());
    std::vector<T> a(n), b(n);
    for (int i = 0; i < n; ++i) a[i] = cases[i].first, b[i] = cases[i].second;
    T* d = nullptr;  // a, b, divide's quotients, `/`'s quotients
    STRATA_CUDA_CHECK(cudaMalloc(&d, 4 * n * sizeof(T)));
    STRATA_CUDA_CHECK(cudaMemcpy(d, a.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    STRATA_CUDA_CHECK(cudaMemcpy(d + n, b.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    STRATA_CUDA_CHECK(cudaMemset(d + 2 * n, 0xff, 2 * n * sizeof(T)));  // poison: NaNs, an unwritten quotient fails
    divide_kernel<<<(n + 255) / 256, 256>>>(d, d + n, d + 2 * n, d + 3 * n, n);
    STRATA_CUDA_CHECK_LAUNCH();
    std::vector<T> divided(n), slashed(n);
    STRATA_CUDA_CHECK(cudaMemcpy(divided.data(), d + 2 * n, n * sizeof(T), cudaMemcpyDeviceToHost));
    STRATA_CUDA_CHECK(cudaMemcpy(slashed.data(), d + 3 * n, n * sizeof(T), cudaMemcpyDeviceToHost));
    STRATA_CUDA_CHECK(cudaFree(d));
    int wrong = 0;
    for (int i = 0; i < n && wrong < 5; ++i) {
        const T want = a[i] / b[i];
        if (!same_quotient(want, slashed[i]))  // the device's `/` is the host's (else the premise fails)
            ++wrong, ADD_FAILURE() << std::hexfloat << a[i] << " / " << b[i] << ": the device's / gives " << slashed[i]
                                   << ", the host's " << want;
        if (!same_quotient(want, divided[i]))
            ++wrong, ADD_FAILURE() << std::hexfloat << a[i] << " / " << b[i] << ": divide gives " << divided[i]
                                   << " on the device, / " << want;
    }
}

TEST(DivideCuda, SameBitsAsTheDivisionFp32) { expect_device_divide_is_the_division<float>(); }
TEST(DivideCuda, SameBitsAsTheDivisionFp64) { expect_device_divide_is_the_division<double>(); }

}  // namespace
}  // namespace strata
