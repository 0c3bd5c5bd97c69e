#!/usr/bin/env bash
# Builds with warnings as errors and runs the CPU tests (the ones that need no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh -DSTRATA_WARNINGS_AS_ERRORS=ON
ctest --test-dir "${STRATA_BUILD_DIR:-build}" -L cpu --output-on-failure -j "$(nproc)"
