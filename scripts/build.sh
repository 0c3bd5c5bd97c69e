#!/usr/bin/env bash
# Installs what is missing, configures and builds Strata into ./build (or $STRATA_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build_dir=${STRATA_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" -j "$(nproc)"
