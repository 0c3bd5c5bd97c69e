#pragma once
// STRATA_HD marks code that runs on the host and, when compiled by nvcc, on the device:
// the models are written once and used by every backend.
#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__ __forceinline__
#else
#define STRATA_HD inline
#endif

namespace strata {

// a / b: the same bits as the `/` it stands for, on every input (±0, infinities and NaN alike),
// without the GPU's slow path for a zero numerator. An IEEE division on NVIDIA GPUs checks its
// operands after the fast reciprocal and takes a slow subroutine when the numerator is 0 or
// denormal: about 2.9x the fast path's time for 0 (H100, fp32: 648 against 1862 G divisions/s,
// docs/runs/56). The classic apf state is R = 0 over half the mesh, so the rank holding that
// half of a decomposed run was the slow one (its neighbour waited for it 25-35% of the run). Here a
// zero numerator divides 1 instead, and the result is made from it: for a = ±0 and a finite
// b != 0, a * b (±0 with a / b's sign: 1 / b would overflow for a denormal b); for b = 0 or ±inf
// (where b == 2 b), (1 / b) * a (NaN, or ±0 with the sign); for a NaN b, NaN either way. Exactly
// a / b. A denormal numerator still takes the slow path. Scaling it into the normal range,
// dividing and scaling back (exact where the quotient is above min, else divided as given) was
// tried against apf's 1-2% denormal R ahead of its fronts, and made apf 16383^2 temporal 38%
// slower on one H200 (0.761 against 0.551 ms/step, docs/runs/63): not kept.
template <class T>
STRATA_HD T divide(T a, T b) {
    const bool zero = a == T(0);
    const T q = (zero ? T(1) : a) / b;
    return zero ? (b == T(2) * b ? q * a : a * b) : q;
}

}  // namespace strata
