#pragma once
// STRATA_HD marks code that runs on the host and, when compiled by nvcc, on the device:
// the models are written once and used by every backend.
#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__ __forceinline__
#else
#define STRATA_HD inline
#endif

namespace strata {

// a / b: the same bits as the `/` it stands for, on every input (±0, denormals, infinities and
// NaN alike), without the GPU's slow path for a zero or denormal numerator. An IEEE division on
// NVIDIA GPUs checks its operands after the fast reciprocal and takes a slow subroutine when the
// numerator is 0 or denormal: about 2.9x the fast path's time for 0 and 7x for a denormal (H100,
// fp32: 648 and 262 against 1862 G divisions/s, docs/runs/56).
// - apf's classic state is R = 0 over half the mesh, so the rank holding that half of a decomposed
//   run was the slow one (its neighbour waited for it 25-35% of the run). A zero numerator divides
//   1 instead, and the result is made from it: for a = ±0 and a finite b != 0, a * b (±0 with
//   a / b's sign: 1 / b would overflow for a denormal b); for b = 0 or ±inf (where b == 2 b),
//   (1 / b) * a (NaN, or ±0 with the sign); for a NaN b, NaN either way.
// - Ahead of apf's fronts, E and then R pass through the denormals on their way to 0: 1-2% of
//   the cells of the half where R starts at 0, none of the other half (fp32, 2047^2, 500-3000
//   steps). A denormal numerator is scaled by 2^digits into the normal range (exact), divided,
//   and scaled back: exact where the quotient is above min, since scaling by a power of two
//   commutes with rounding there. Not at min itself: the scaled quotient's binade below
//   2^digits * min rounds on a grid twice as fine as the denormals below min, so a quotient just
//   under min may come out as min (the test caught it). A quotient of min or less, 0, or NaN is
//   divided again as given (the slow path: rare).
template <class T>
STRATA_HD T divide(T a, T b) {
    constexpr T min = sizeof(T) == 4 ? T(1.17549435e-38f) : T(2.2250738585072014e-308);  // the least normal
    constexpr T up = sizeof(T) == 4 ? T(16777216.0f) : T(9007199254740992.0);              // 2^digits
    constexpr T down = T(1) / up;
    const bool zero = a == T(0), tiny = !zero && a < min && a > -min;
    const T q = (zero ? T(1) : tiny ? a * up : a) / b;
    if (zero) return b == T(2) * b ? q * a : a * b;
    if (!tiny) return q;
    const T r = q * down;
    return r > min || r < -min ? r : a / b;
}

}  // namespace strata
