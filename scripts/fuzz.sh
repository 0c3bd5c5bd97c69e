#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/: clang, AddressSanitizer and UndefinedBehaviorSanitizer) into
# build-fuzz and runs each for SECONDS (default 60) on a fresh copy of its seed corpus, printing
# one line per target: the executions run and whether anything was found. What a target finds
# (crash-*, leak-*, timeout-*, oom-*: the input that does it) is kept in build-fuzz/findings/TARGET,
# its log in build-fuzz/TARGET.log; the script fails when any target found something.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=build-fuzz
targets=(checkpoint vti velocity receivers cli stencil)

scripts/setup.sh clang libclang-rt-dev libomp-dev
mkdir -p $build
{
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DSTRATA_WITH_CUDA=OFF -DSTRATA_FUZZ=ON -DSTRATA_BUILD_TESTS=OFF &&
    cmake --build $build -j 2 --target "${targets[@]/#/fuzz_}"
} > $build/build.log 2>&1 || { tail -30 $build/build.log; exit 1; }

found=0
for t in "${targets[@]}"; do
  corpus=$build/corpus/$t findings=$build/findings/$t log=$build/$t.log
  rm -rf "$corpus" "$findings"
  mkdir -p "$corpus" "$findings"
  cp fuzz/corpus/$t/* "$corpus"
  # -timeout: an input that takes 10 s is a hang. -rss_limit_mb (and with it the largest single
  # allocation): 2 GB, far beyond what inputs of a few KB justify. A target's dictionary holds the
  # words of its format, which random bytes seldom spell; value profiles let comparisons of
  # sizes and counts guide the search.
  dict=()
  [[ -f fuzz/$t.dict ]] && dict=(-dict=fuzz/$t.dict)
  status=0
  $build/fuzz/fuzz_$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -use_value_profile=1 \
    "${dict[@]}" -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" > "$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if ((status == 0)); then
    printf '%-10s %10s executions in %s s, nothing found\n' "$t" "${runs:-?}" "$seconds"
  else
    found=1
    printf '%-10s %10s executions, FOUND (exit %d): %s, see %s\n' "$t" "${runs:-?}" "$status" \
      "$(ls "$findings" | tr '\n' ' ')" "$log"
  fi
done
exit $found
