#pragma once
// The host side of the TMA loader (tma.cuh), free of device code.
#include <cuda.h>  // CUtensorMap (types only: the encoder comes through the runtime's entry point)

#include <cstdint>

namespace strata::cuda {

// The tensor map of a field's interior (the grid without its ghosts: what lies outside reads as
// zero), boxes of bx x by x 1 elements. Built once per buffer and kept (a launch only looks it up).
// Error when the driver cannot encode it.
const CUtensorMap& interior_tensor_map(const void* origin, int nx, int ny, int nz, std::int64_t pitch,
                                       std::int64_t plane, int elem_bytes, int bx, int by);
// The tensor map of a 1D array of n elements, boxes (runs) of `run` elements, at most 256 (the
// sequential pattern). Kept and looked up as the interior's.
const CUtensorMap& run_tensor_map(const void* origin, std::int64_t n, int elem_bytes, int run);
// The tensor map of a 2D array of ny rows of nx elements, `pitch` elements apart, boxes of bx x by
// elements (the strided pattern: rows of a plane). Kept and looked up as the interior's.
const CUtensorMap& rows_tensor_map(const void* origin, int nx, int ny, std::int64_t pitch, int elem_bytes, int bx,
                                   int by);
// UsageError unless the current device has a TMA (compute capability 9.0 or later): every TMA
// kernel's launch asks first.
void require_tma();

}  // namespace strata::cuda
