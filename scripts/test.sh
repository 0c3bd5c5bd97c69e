#!/usr/bin/env bash
# Builds with warnings as errors and runs the CPU tests (the ones that need no GPU); then the same
# tests built with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan), and every fuzz
# target for a few seconds (scripts/fuzz.sh). STRATA_QUICK=1 skips the last two.
# Usage: scripts/test.sh [FUZZ_SECONDS]   (default 5 per target)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DSTRATA_WARNINGS_AS_ERRORS=ON
build=${STRATA_BUILD_DIR:-build}
ctest --test-dir "$build" -L cpu --output-on-failure -j "$(nproc)"

# The installed library is usable from another project: install, then build and run examples/cpp
# against the installed tree only.
echo "== cmake --install, and examples/cpp built against the installed package"
rm -rf "$build/install" "$build/consumer"
cmake --install "$build" --prefix "$build/install" > /dev/null
cmake -S examples/cpp -B "$build/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$PWD/$build/install" > /dev/null
cmake --build "$build/consumer" > /dev/null
(cd "$build/consumer" && STRATA_CACHE_DIR=$PWD/../test-cache ./heat_consumer omp "$OLDPWD/examples/stencils/jacobi.stencil")
[[ ${STRATA_QUICK:-0} == 1 ]] && exit 0

# The sanitized build is host code only (CUDA off) and without -Werror: g++ warns of
# uninitialised std::function members inside <regex> when ASan instruments it.
echo "== the CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer (build-asan)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_WITH_CUDA=OFF -DSTRATA_SANITIZE=ON \
  > /dev/null
cmake --build build-asan -j "$(nproc)" > build-asan/build.log 2>&1 || { tail -40 build-asan/build.log; exit 1; }
ctest --test-dir build-asan -L cpu --output-on-failure -j "$(nproc)"

echo "== the fuzz targets, ${1:-5} s each"
scripts/fuzz.sh "${1:-5}"
