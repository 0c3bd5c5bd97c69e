#!/usr/bin/env bash
# On the GPU machine: build, run the GPU tests, probe the device and benchmark, then print a
# short table. Usage: scripts/gpu-check.sh [MODE[,MODE...]] (default all: tests, bench, io; also
# heat2d, half, half-stencil, variants, cells-cached, half-temporal, stencil, grayscott, cells, general (general2d, general3d: its halves), mpi, sanitize-mpi, scaling, scaling4, jacobi4, radius2, nccl-channels, faces, tune-ranks, nccl-socket, python, tune, tune-exhaustive, tma, ncu-tma, ab, ebisu, sanitize, profile, ncu, wave, wave-ncu, temporal, sweep; a name of none of these, e.g. build-only, builds and stops). Logs go to $OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
# want MODE: MODE was asked for (all counts for tests, bench and io)
want() { [[ ",$what," == *",$1,"* ]] || { [[ ",$what," == *",all,"* ]] && [[ $1 == tests || $1 == bench || $1 == io ]]; }; }
out=${OUT:-/tmp/strata-out}
mkdir -p "$out"
build=build-gpu
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$PWD/$build/cache}
# Every ctest here with a limit per test: a kernel that hangs fails its test in 300 s (the slowest,
# which compile stencil files, take about 70), instead of holding the device to the call's end.
ctest() { command ctest --timeout 300 "$@"; }

# Few files come back from the device: one log, one test log, one benchmark text, one JSON folder.
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$out/log.txt"
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release >> "$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
# BUILD_TARGETS: only those (e.g. strata, for the modes that run no test binary)
cmake --build $build -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} >> "$out/log.txt" 2>&1 || { tail -50 "$out/log.txt"; exit 1; }

if want tests; then
  ctest --test-dir $build -L gpu --output-on-failure -j 4 > "$out/tests.txt" 2>&1 || true
  ctest --test-dir $build -L cpu -j 8 >> "$out/tests.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failed|\*\*\*|Failure|Expected|Actual|Which is|differs" "$out/tests.txt" | head -60
fi
bench() {  # the command, then its output, as docs/performance.md quotes them
  echo "\$ strata bench $*" | tee -a "$out/bench.txt"
  $build/strata bench "$@" | tee -a "$out/bench.txt"
  echo | tee -a "$out/bench.txt"
}
heat2d_rows() {  # heat2d: every kernel, then EBISU's problems (8192^2 x 120 steps, and its own sizes)
  bench heat2d --precision fp32,fp64 --depth 4,6,8,10 --json "${JSON_DIR:-/tmp}/heat2d.json"
  bench heat2d --steps 120 --precision fp32,fp64 --kernels temporal --depth 6,8 --repeats 9
  bench heat2d -n 8568 --steps 9 --precision fp32 --kernels temporal --depth 3,9 --repeats 9
  bench heat2d -n 8352 --steps 12 --precision fp64 --kernels temporal --depth 4,6,12 --repeats 9
}
if want bench; then
  json=${JSON_DIR:-/tmp/strata-json}; mkdir -p "$json"
  $build/strata probe | tee -a "$out/bench.txt"
  echo | tee -a "$out/bench.txt"
  echo "\$ strata-patterns" | tee -a "$out/bench.txt"
  $build/strata-patterns | tee -a "$out/bench.txt"
  echo | tee -a "$out/bench.txt"
  bench apf --precision fp32,fp64 --depth 2,4,8 --json "$json/apf.json"
  bench heat3d --stencil 7pt --precision fp32,fp64 --depth 2,3,4 --json "$json/heat-7pt.json"
  for s in 19pt 27pt; do
    bench heat3d --stencil $s --precision fp32,fp64 --json "$json/heat-$s.json"
  done
  bench wave3d --precision fp32,fp64 --json "$json/wave.json"
  heat2d_rows
  bench apf -n 256 --precision fp32 --graphs both --depth 4,16 --json "$json/apf-256.json"
fi
if want half; then  # 16-bit storage (#41): its GPU tests, then each model's kernels at fp32, bf16 and fp16, and torch.compile's
  ctest --test-dir $build -R 'Half' --output-on-failure -j 2 > "$out/tests-half.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failure|Expected|Which is|differs|FAILED" "$out/tests-half.txt" | head -40
  json=${JSON_DIR:-/tmp/strata-json}; mkdir -p "$json"
  bench heat3d --stencil 7pt --precision fp32,bf16,fp16 --kernels planes,async,cached,temporal --depth 2,3,4 --json "$json/half-heat7.json"
  bench heat3d --stencil 27pt --precision fp32,bf16 --kernels async,cached,tma,temporal --json "$json/half-heat27.json"
  bench wave3d --precision fp32,bf16,fp16 --kernels planes,async --json "$json/half-wave.json"
  bench heat2d --precision fp32,bf16,fp16 --kernels planes,multi4,temporal --depth 1,4,8 --json "$json/half-heat2d.json"
  bench apf --precision fp32,bf16,fp16 --kernels planes,multi4,temporal --depth 1,4,8 --json "$json/half-apf.json"
  if [ -f .peers/anchors.py ]; then
    echo "\$ python3 ../shared/peers/anchors.py copy lowp" | tee -a "$out/bench.txt"
    python3 .peers/anchors.py copy lowp 2>&1 | grep -v Warning | tee -a "$out/bench.txt"
  fi
fi
if want half-temporal; then  # the temporal kernels at 16 bits (#41: their levels and runs held in fp32) beside fp32, and the box stencils' own plane sums (#40: heat3d's BoxSums)
  bench heat3d --stencil 7pt --precision fp32,bf16,fp16 --kernels cached,temporal --depth 2,3,4 --repeats 5
  bench heat3d --stencil 27pt --precision fp32,fp64,bf16 --kernels async,tma,temporal --depth 1,2,3 --repeats 5
  bench heat3d --stencil 19pt --precision fp32,fp64 --kernels async,tma,temporal --depth 2,3 --repeats 5
  bench heat2d --precision fp32,bf16,fp16 --kernels multi4,temporal --depth 1,4,8 --repeats 5
  bench apf --precision fp32,bf16 --kernels multi4,temporal --depth 1,4 --repeats 5
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  bench bench/stencils/aniso9-2d.stencil --precision fp32,bf16 --kernels cached,temporal --depth 4,8 --repeats 5
  unset STRATA_CACHE_DIR
fi
if want stencil; then  # stencil files (#18): their GPU tests, the first and a cached run, each against the built-in
  ctest --test-dir $build -R 'Stencil' --output-on-failure -j 2 > "$out/tests-stencil.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failure|Expected|Which is|differs" "$out/tests-stencil.txt" | head -30
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  for f in heat2d barkley; do
    rm -rf "$STRATA_CACHE_DIR"
    for run in first cached; do
      echo "\$ strata run examples/stencils/$f.stencil -n 64 --steps 1 --backend cuda   # $run" | tee -a "$out/bench.txt"
      TIMEFORMAT="wall %R s"; { time $build/strata run examples/stencils/$f.stencil -n 64 --steps 1 --backend cuda 2>&1 \
        | grep -E "model:|error"; } 2>&1 | tee -a "$out/bench.txt"
    done
  done
  echo | tee -a "$out/bench.txt"
  for m in examples/stencils/heat2d.stencil examples/stencils/apf.stencil examples/stencils/barkley.stencil examples/stencils/jacobi.stencil; do
    echo "\$ strata check $m" | tee -a "$out/bench.txt"
    $build/strata check $m | tee -a "$out/bench.txt" || true
    echo | tee -a "$out/bench.txt"
  done
  bench heat2d --precision fp32,fp64 --depth 4,8
  bench examples/stencils/heat2d.stencil --precision fp32,fp64 --depth 4,8
  bench heat2d --precision fp32 --depth 4,8 --kernels planes,multi4,temporal
  bench examples/stencils/heat2d.stencil --precision fp32 --depth 4,8 --kernels planes,multi4,temporal
  bench apf --precision fp32,fp64 --depth 2,4
  bench examples/stencils/apf.stencil -n 8193 --precision fp32,fp64 --depth 2,4
  bench examples/stencils/barkley.stencil --precision fp32,fp64 --depth 4,8
  unset STRATA_CACHE_DIR
fi
if want cells; then  # 3D stencil files (#18): heat7 (heat3d's plane sums), wave8 (wave3d's interface), the cells-only: their GPU tests, the built-in kernels they touch, rates against the built-ins
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  $build/tests/strata_gpu_tests --gtest_filter='StencilCuda.Heat7*:StencilCuda.Wave8*:StencilCuda.CellsOnly*:*Strategy*/naive*:*Strategy*/smem*' \
    > "$out/tests-cells.txt" 2>&1 || true
  grep -E "^\[  PASSED|^\[  FAILED|tests ran|Failure|Expected|Which is|rel err" "$out/tests-cells.txt" | head -30
  bench heat3d --stencil 7pt --precision fp32,fp64
  bench examples/stencils/heat7.stencil --precision fp32,fp64
  bench wave3d --precision fp32,fp64
  bench examples/stencils/wave8.stencil --precision fp32,fp64
  unset STRATA_CACHE_DIR
fi
if want general || want general2d || want general3d; then  # #40: the kinds of file the issue measures (bench/stencils/), each beside its nearest built-in; torch.compile's 3D Gray-Scott (carry .peers)
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  $build/strata probe > /dev/null
  if want general || want general2d; then
    bench bench/stencils/aniso9-2d.stencil --precision fp32,fp64 --kernels naive,cached,temporal --depth 2,4,6,8 --repeats 5
    bench heat2d --precision fp32,fp64 --kernels multi4,temporal --depth 4,8 --repeats 5
    bench bench/stencils/rd-coef2d.stencil --precision fp32,fp64 --kernels naive,cached,temporal --depth 2,4,6 --repeats 5
  fi
  if want general || want general3d; then
    bench bench/stencils/heat-lap3d.stencil --precision fp32,fp64 --kernels cached,temporal --depth 2,4 --repeats 5
    bench heat3d --stencil 7pt --precision fp32,fp64 --kernels cached,temporal --depth 2,4 --repeats 5
    bench tests/stencils/pairs3d.stencil --precision fp32,fp64 --kernels cached,temporal --depth 2,3,4,5 --repeats 5
    bench bench/stencils/heat-box27.stencil --precision fp32,fp64 --kernels async,cached,tma,tmasync,temporal --depth 1,2,3 --repeats 5
    bench tests/stencils/upwind3d.stencil --precision fp32,fp64 --kernels async,cached,temporal --depth 2,3,4 --repeats 5
    bench heat3d --stencil 27pt --precision fp32,fp64 --kernels async,tma,temporal --depth 1,2,3 --repeats 5
    bench bench/stencils/gray-scott3d.stencil -n 384 --precision fp32,fp64 --kernels stream,cached,temporal --depth 1,2,3,4 --repeats 5
    bench examples/stencils/apf3d.stencil --precision fp32,fp64 --kernels stream,cached,temporal --depth 1,2,3 --repeats 5
    bench examples/stencils/variable-wave.stencil --precision fp32,fp64 --kernels stream,cached --repeats 5
    if [ -f .peers/anchors.py ]; then
      echo "\$ python3 ../shared/peers/anchors.py copy gs3d" | tee -a "$out/bench.txt"
      python3 .peers/anchors.py copy gs3d 2>&1 | grep -v Warning | tee -a "$out/bench.txt"
    fi
  fi
  unset STRATA_CACHE_DIR
fi
if want cells-cached; then  # the cells-only cached sweep (#40): its GPU tests, then every cells-only kind of file on it beside its other single sweeps
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  if [[ ${SKIP_TESTS:-0} != 1 ]]; then  # (SKIP_TESTS=1: after `ctest -L gpu` on the same build)
    $build/tests/strata_gpu_tests --gtest_filter='StencilCuda.CellsOnly*' > "$out/tests-cells-cached.txt" 2>&1 || true
    grep -E "^\[  PASSED|^\[  FAILED|tests ran|Failure|Expected|Which is|rel err" "$out/tests-cells-cached.txt" | head -30
  fi
  bench bench/stencils/aniso9-2d.stencil --precision fp32,fp64,bf16 --kernels naive,cached --repeats 5
  bench bench/stencils/rd-coef2d.stencil --precision fp32,fp64,bf16 --kernels naive,cached --repeats 5
  bench bench/stencils/gray-scott3d.stencil -n 384 --precision fp32,fp64,bf16 --kernels stream,cached --repeats 5
  bench examples/stencils/apf3d.stencil --precision fp32,fp64 --kernels stream,cached --repeats 5
  bench examples/stencils/variable-wave.stencil --precision fp32,fp64 --kernels stream,cached --repeats 5
  unset STRATA_CACHE_DIR
fi
if want variants; then  # A/B of patches (not for the docs): VARIANTS="P1 P2 ..." (patch files, e.g. in an untracked folder) are undone from the tree in turn, giving binaries v0 (none of them) .. vN (the tree); VARIANT_BENCH: bench arguments, ';' between rows, each run by v0..vN then vN..v0
  read -ra pats <<< "${VARIANTS:?VARIANTS: the patches, in the order they apply}"
  n=${#pats[@]}
  cp $build/strata $build/strata.v$n
  for ((i = n - 1; i >= 0; i--)); do
    patch -R -p1 -s < "${pats[$i]}"
    cmake --build $build -j "$(nproc)" --target strata >> "$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
    cp $build/strata $build/strata.v$i
  done
  for p in "${pats[@]}"; do patch -p1 -s < "$p"; done
  cmake --build $build -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} >> "$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  IFS=';' read -ra rows <<< "${VARIANT_BENCH:?VARIANT_BENCH: bench arguments, ';' between rows}"
  for r in "${rows[@]}"; do
    for i in $(seq 0 $n) $(seq $n -1 0); do
      echo "\$ [v$i] strata bench $r" | tee -a "$out/variants.txt"
      $build/strata.v$i bench $r | tee -a "$out/variants.txt"
    done
  done
  unset STRATA_CACHE_DIR
fi
if want half-stencil; then  # stencil files at 16 bits (#41): their GPU tests, the first compile, each kind of file at fp32, bf16 and fp16
  if [[ ${SKIP_TESTS:-0} != 1 ]]; then  # (SKIP_TESTS=1: after `ctest -L gpu` on the same build)
    ctest --test-dir $build -R 'Half|StencilCuda' --output-on-failure -j 4 > "$out/tests-half-stencil.txt" 2>&1 || true
    grep -E "tests passed|tests failed|Failure|Expected|Which is|differs|FAILED" "$out/tests-half-stencil.txt" | head -40
  fi
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache-first
  for f in examples/stencils/heat7.stencil examples/stencils/gray-scott.stencil bench/stencils/gray-scott3d.stencil examples/stencils/wave8.stencil; do
    rm -rf "$STRATA_CACHE_DIR"
    for run in first cached; do
      echo "\$ strata run $f -n 64 --steps 1 --backend cuda   # $run" | tee -a "$out/bench.txt"
      TIMEFORMAT="wall %R s"; { time $build/strata run $f -n 64 --steps 1 --backend cuda 2>&1 | grep -E "model:|error"; } 2>&1 | tee -a "$out/bench.txt"
    done
    grep -h "NVRTC:" "$STRATA_CACHE_DIR"/kernels/*.log | tee -a "$out/bench.txt"
  done
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  bench examples/stencils/heat7.stencil --precision fp32,bf16,fp16 --kernels cached,temporal --depth 2,4 --repeats 5
  bench bench/stencils/heat-box27.stencil --precision fp32,bf16 --kernels stream,cached,temporal --depth 1,2 --repeats 5
  bench bench/stencils/gray-scott3d.stencil -n 384 --precision fp32,bf16,fp16 --kernels stream,cached,temporal --depth 1,2,3 --repeats 5
  bench examples/stencils/gray-scott.stencil --precision fp32,bf16,fp16 --kernels planes,multi4,temporal --depth 1,4,8 --repeats 5
  bench bench/stencils/aniso9-2d.stencil --precision fp32,bf16 --kernels naive,cached,temporal --depth 1,4,8 --repeats 5
  bench examples/stencils/wave8.stencil --precision fp32,bf16,fp16 --kernels planes,async --repeats 5
  if [ -f .peers/anchors.py ]; then
    echo "\$ python3 ../shared/peers/anchors.py copy gs3d lowp" | tee -a "$out/bench.txt"
    python3 .peers/anchors.py copy gs3d lowp 2>&1 | grep -v Warning | tee -a "$out/bench.txt"
  fi
  unset STRATA_CACHE_DIR
fi
if want sanitize-mpi; then  # compute-sanitizer on each of two ranks (#19): over NCCL, one GPU each (on a machine of two), then sharing a GPU, halos through the host
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  sanitize_ranks() {  # HALOS (nccl: a GPU per rank; mpi: the ranks share one), then the cases on stdin: TOOL ARGS
    local halos=$1 tool args log rc summaries
    local share=(env STRATA_SHARE_GPUS=1) quiet=()
    # (NCCL's initialisation asks for kernels of other architectures and handles the refusals:
    # API errors not reported there; every memory, race or initialisation error still is.)
    [ "$halos" = nccl ] && share=(env -u STRATA_SHARE_GPUS) quiet=(--report-api-errors no)
    while read -r tool args; do
      log=$(mktemp)
      rc=0
      timeout 150 mpirun -np 2 -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS \
        "${share[@]}" compute-sanitizer --tool "$tool" "${quiet[@]}" --error-exitcode 99 $build/strata run $args \
        --backend cuda --halos "$halos" --quiet --out "$(mktemp -d)" < /dev/null > "$log" 2>&1 || rc=$?  # (mpirun would read the cases on stdin)
      summaries=$(grep -cE "ERROR SUMMARY: 0 errors|\(0 errors" "$log")
      printf '%-9s %-70s rc=%d clean ranks=%s of 2\n' "$tool" "$args --halos $halos" "$rc" "$summaries" | tee -a "$out/sanitize-mpi.txt"
      [[ $rc -ne 0 || $summaries -ne 2 ]] && grep -E "=========|error" "$log" | head -12 || true
      rm -f "$log"
    done
  }
  # Over NCCL: the slowest axis straight from and into the fields, overlapped.
  [ "$(nvidia-smi -L | wc -l)" -ge 2 ] && sanitize_ranks nccl <<'CASES'
memcheck heat3d -n 37 --steps 9 --decomp 1x1x2 --kernel temporal --depth 3
initcheck heat3d -n 37 --steps 9 --decomp 1x1x2 --kernel temporal --depth 3
memcheck apf -n 70 -i 7 -x 1 -y 2 --kernel temporal --depth 3
memcheck wave3d -n 29 --steps 5 --decomp 1x1x2 --kernel async --receiver-line 0.2,0.5,0.5,0.8,0.5,0.5,5
memcheck examples/stencils/gray-scott.stencil -n 67 --steps 7 --decomp 1x2 --kernel temporal --depth 3
CASES
  # Through the host: the halo pack and unpack kernels.
  sanitize_ranks mpi <<'CASES'
memcheck heat3d -n 37 --steps 5 --stencil 27pt --decomp 1x1x2 --kernel cached
racecheck heat3d -n 37 --steps 5 --stencil 27pt --decomp 1x1x2 --kernel cached
memcheck apf -n 70 -i 7 -x 1 -y 2 --kernel temporal --depth 3
initcheck apf -n 70 -i 7 -x 2 -y 1 --kernel multi4
memcheck wave3d -n 29 --steps 5 --decomp 1x2x1 --kernel async --receiver-line 0.2,0.5,0.5,0.8,0.5,0.5,5
memcheck examples/stencils/gray-scott.stencil -n 67 --steps 7 --decomp 2x1 --kernel temporal --depth 3
memcheck examples/stencils/heat7.stencil -n 29 --steps 5 --decomp 1x1x2 --kernel temporal --depth 3
CASES
fi
if want grayscott; then  # two neighbourhood fields (#18): the GPU test, every strategy against the CPU, the rate against torch.compile (carry .peers)
  ctest --test-dir $build -R 'TwoNeighbourhood' --output-on-failure > "$out/tests-grayscott.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failure|Expected|Which is" "$out/tests-grayscott.txt" | head -20
  gs=examples/stencils/gray-scott.stencil
  echo "\$ strata check $gs" | tee -a "$out/bench.txt"
  $build/strata check $gs | tee -a "$out/bench.txt" || true
  bench $gs -n 8192 --precision fp32,fp64 --depth 4,6,8
  bench heat2d -n 8192 --precision fp32 --kernels naive,smem,planes,multi2,multi4
  [ -f .peers/anchors.py ] && OUT=$out python3 .peers/anchors.py copy grayscott 2>/dev/null | tee -a "$out/bench.txt"
  $build/strata run $gs -n 512 --steps 10000 --backend cuda --every 2500 --out "$out/gray-scott" --snapshot-format png | tail -4
fi
if want mpi; then  # runs over MPI ranks (#19): the CPU backends', then CUDA's strategy by strategy (ranks share the GPUs)
  bash tests/mpi_runs.sh $build/strata examples/stencils > "$out/mpi-cpu.txt" 2>&1 || true
  grep -E "FAIL|failures" "$out/mpi-cpu.txt" | head -20
  bash tests/mpi_runs_cuda.sh $build/strata examples/stencils > "$out/mpi-cuda.txt" 2>&1 || true
  grep -E "FAIL|passed" "$out/mpi-cuda.txt" | head -40
  if [ "$(nvidia-smi -L | wc -l)" -ge 2 ]; then  # one GPU per rank: the halos over NCCL too
    HALOS=nccl bash tests/mpi_runs_cuda.sh $build/strata examples/stencils > "$out/mpi-cuda-nccl.txt" 2>&1 || true
    grep -E "FAIL|passed" "$out/mpi-cuda-nccl.txt" | head -40
  fi
fi
# on N ROW ARGS...: `strata run ARGS` on N GPUs, as the scaling modes print it for perf-doc.py (N > 1:
# under mpirun, the halos over NCCL before each pass, then overlapped; SCALING_MPI=1: over MPI first).
on() {  # N ROW ARGS...: a run on 1 GPU, else on N under mpirun (ON_ENV: names of more variables to pass the ranks)
  local n=$1 row=$2 how extra=() v; shift 2
  for v in ${ON_ENV:-}; do extra+=(-x "$v"); done
  if [ "$n" = 1 ]; then
    echo "\$ strata run $*   # $row, 1 GPU" | tee -a "$out/bench.txt"
    timeout 300 $build/strata run "$@" --backend cuda --quiet 2>&1 | grep -E "error|kernel|Time per step|GCells/s" | tee -a "$out/bench.txt" || true
    return
  fi
  for how in ${SCALING_MPI:+"--halos mpi"} "--halos nccl --no-overlap" "--halos nccl"; do
    echo "\$ mpirun -np $n strata run $* $how   # $row, $n GPUs" | tee -a "$out/bench.txt"
    timeout 300 mpirun -np "$n" --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS \
      "${extra[@]}" $build/strata run "$@" --backend cuda $how --quiet < /dev/null 2>&1 \
      | grep -E "error|ranks|Time per step|GCells/s|Per rank|Exposed|Halos sent" | tee -a "$out/bench.txt" || true
  done
}
if want scaling; then  # #19 on nvidia-h200-x2: one GPU against two, the same strategy (the halos before each pass, then overlapped); the link; the peer (carry .peers)
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpi=(mpirun -np 2 --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS)
  echo "\$ strata-peer" | tee -a "$out/bench.txt"
  $build/strata-peer | tee -a "$out/bench.txt" || true  # (one GPU: it says so)
  scale() {  # ROW ONE_GPU_ARGS -- TWO_GPU_ARGS: the run on one GPU, then on two
    local row=$1; shift
    local one=()
    while [ "$1" != -- ]; do one+=("$1"); shift; done
    shift
    on 1 "$row" "${one[@]}"
    on 2 "$row" "$@"
  }
  # Runs of 1-2 s each, so that what a run pays once (starting, capturing its graph) weighs little.
  scale "weak heat3d 7pt fp32 (512^3 per GPU)" heat3d -n 512 --steps 8000 --precision fp32 -- heat3d -n 512 --nz 1024 --steps 8000 --precision fp32
  scale "weak wave3d fp32" wave3d -n 512 --steps 1500 --precision fp32 -- wave3d --nx 512 --ny 512 --nz 1024 --steps 1500 --precision fp32
  scale "strong wave3d fp32" wave3d --nx 1024 --ny 1024 --nz 512 --steps 400 --precision fp32 -- wave3d --nx 1024 --ny 1024 --nz 512 --steps 400 --precision fp32
  scale "strong apf 16384^2 fp32 temporal" apf -n 16383 -i 3000 --precision fp32 --kernel temporal -- apf -n 16383 -i 3000 --precision fp32 --kernel temporal -x 1 -y 2
  # apf with -k (no exchange at all): what the ranks take without communication, imbalance included
  echo "\$ mpirun -np 2 strata run apf -n 16383 -i 3000 --precision fp32 --kernel temporal -x 1 -y 2 -k --halos nccl   # strong apf, 2 GPUs, no exchange" | tee -a "$out/bench.txt"
  timeout 300 "${mpi[@]}" $build/strata run apf -n 16383 -i 3000 --precision fp32 --kernel temporal -x 1 -y 2 -k --backend cuda --halos nccl --quiet 2>&1 \
    | grep -E "error|ranks|Time per step|GCells/s" | tee -a "$out/bench.txt" || true
  scale "strong heat2d 20480^2 fp32, 1000 steps" heat2d -n 20480 --steps 1000 --precision fp32 --kernel temporal -- heat2d -n 20480 --steps 1000 --precision fp32 --kernel temporal
  scale "strong heat2d 20480^2 fp32, 5000 steps" heat2d -n 20480 --steps 5000 --precision fp32 --kernel temporal -- heat2d -n 20480 --steps 5000 --precision fp32 --kernel temporal
  [ -d .peers/mgpm ] && bash .peers/mgpm-jacobi.sh 2>&1 | tee -a "$out/bench.txt"
fi
if want tune-ranks; then  # #42 on nvidia-h200-x2 / -x4: --tune over ranks chooses per link (BUILD_TARGETS=strata will do): the NCCL suite's tune and narrow cases, then heat3d weak on 2 GPUs over NVLink and over sockets (as-another-node.sh's settings), each the built-in default, then tuned
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  ONLY=${TUNE_ONLY:-tune,narrow} HALOS=nccl bash tests/mpi_runs_cuda.sh $build/strata examples/stencils > "$out/mpi-cuda-nccl.txt" 2>&1 || true
  grep -E "FAIL|ok   tune|passed" "$out/mpi-cuda-nccl.txt" | head -20
  export STRATA_WISDOM_DIR=$PWD/$build/wisdom-ranks
  rm -rf "$STRATA_WISDOM_DIR"
  socket=(-x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_NET=Socket -x NCCL_SOCKET_IFNAME=lo)
  for link in ${SKIP_ROWS:-nvlink sockets}; do  # (SKIP_ROWS=1: the suite's cases alone)
    [ "$link" = 1 ] && break
    for how in --no-wisdom --tune; do
      args=(heat3d -n 512 --nz 1024 --steps 2000 --precision fp32 --decomp 1x1x2 --backend cuda --halos nccl $how --quiet)
      echo "\$ mpirun -np 2 strata run ${args[*]}   # weak heat3d 7pt fp32 (512^3 per GPU), 2 GPUs over $link" | tee -a "$out/bench.txt"
      extra=(); [ $link = sockets ] && extra=("${socket[@]}")
      timeout 300 mpirun -np 2 --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS \
        -x STRATA_WISDOM_DIR "${extra[@]}" $build/strata run "${args[@]}" < /dev/null 2>&1 \
        | grep -E "error|launch|tuning|ranks|Time per step|GCells/s|Exposed" | tee -a "$out/bench.txt" || true
    done
  done
  unset STRATA_WISDOM_DIR
fi
if want nccl-socket; then  # #42 on nvidia-h100-x2 / -x4: the NCCL suite bitwise against one process over NCCL's socket transport (../shared/peers/as-another-node.sh: the code paths of GPUs on different nodes)
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo HALOS=nccl \
    bash tests/mpi_runs_cuda.sh $build/strata examples/stencils > "$out/mpi-cuda-nccl-socket.txt" 2>&1 || true
  grep -E "FAIL|passed" "$out/mpi-cuda-nccl-socket.txt" | head -40
fi
if want scaling4; then  # #24 on nvidia-h200-x4 / -x8 (or h100): 1, 2, 4 and, on a machine of 8, 8 GPUs, weak and strong, slabs against pencils or bricks
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo "\$ strata-peer" | tee -a "$out/bench.txt"
  $build/strata-peer | tee -a "$out/bench.txt" || true
  # Runs of 1-2 s each (the 2-GPU mode's steps), so that what a run pays once weighs little.
  # SKIP_TWO=1: the rows of 1 and 4 GPUs alone. ROWS=heat,wave,strong,apf: those groups alone.
  rows() { [ -z "${ROWS:-}" ] || [[ ",$ROWS," == *",$1,"* ]]; }
  h="weak heat3d 7pt fp32 (512^3 per GPU)"
  if rows heat; then
    on 1 "$h" heat3d -n 512 --steps 8000 --precision fp32
    [ -n "${SKIP_TWO:-}" ] || on 2 "$h" heat3d -n 512 --nz 1024 --steps 8000 --precision fp32 --decomp 1x1x2
    on 4 "$h" heat3d -n 512 --nz 2048 --steps 8000 --precision fp32 --decomp 1x1x4
    on 4 "$h" heat3d -n 1024 --nz 512 --steps 8000 --precision fp32 --decomp 2x2x1
  fi
  w="weak wave3d fp32 (512^3 per GPU)"
  if rows wave; then
    on 1 "$w" wave3d -n 512 --steps 1500 --precision fp32
    [ -n "${SKIP_TWO:-}" ] || on 2 "$w" wave3d --nx 512 --ny 512 --nz 1024 --steps 1500 --precision fp32 --decomp 1x1x2
    on 4 "$w" wave3d --nx 512 --ny 512 --nz 2048 --steps 1500 --precision fp32 --decomp 1x1x4
    on 4 "$w" wave3d --nx 1024 --ny 1024 --nz 512 --steps 1500 --precision fp32 --decomp 2x2x1
  fi
  s="strong wave3d fp32 (1024^3)"
  if rows strong; then
    on 1 "$s" wave3d -n 1024 --steps 200 --precision fp32
    [ -n "${SKIP_TWO:-}" ] || on 2 "$s" wave3d -n 1024 --steps 200 --precision fp32 --decomp 1x1x2
    on 4 "$s" wave3d -n 1024 --steps 200 --precision fp32 --decomp 1x1x4
    on 4 "$s" wave3d -n 1024 --steps 200 --precision fp32 --decomp 2x2x1
  fi
  a="weak apf fp32 temporal (16384^2 per GPU)"
  if rows apf; then
    on 1 "$a" apf -n 16383 -i 3000 --precision fp32 --kernel temporal
    on 4 "$a" apf -n 32767 -i 3000 --precision fp32 --kernel temporal -x 1 -y 4
    on 4 "$a" apf -n 32767 -i 3000 --precision fp32 --kernel temporal -x 2 -y 2
  fi
  if [ "$(nvidia-smi -L | wc -l)" -ge 8 ]; then  # the issue's 8 GPUs, where a machine of 8 is lent
    on 8 "$h" heat3d -n 512 --nz 4096 --steps 8000 --precision fp32 --decomp 1x1x8
    on 8 "$h" heat3d -n 1024 --steps 8000 --precision fp32 --decomp 2x2x2
    on 8 "$w" wave3d --nx 512 --ny 512 --nz 4096 --steps 1500 --precision fp32 --decomp 1x1x8
    on 8 "$w" wave3d -n 1024 --steps 1500 --precision fp32 --decomp 2x2x2
    on 8 "$s" wave3d -n 1024 --steps 200 --precision fp32 --decomp 1x1x8
    on 8 "$s" wave3d -n 1024 --steps 200 --precision fp32 --decomp 2x2x2
    on 8 "$s" wave3d -n 1024 --steps 200 --precision fp32 --decomp 2x4x1
    # apf's grid is square: 46340^2 is 8 x 16384^2 within 0.01%
    on 8 "$a" apf -n 46339 -i 3000 --precision fp32 --kernel temporal -x 1 -y 8
    on 8 "$a" apf -n 46339 -i 3000 --precision fp32 --kernel temporal -x 2 -y 4
  fi
fi
if want nccl-channels; then  # #42 on nvidia-h200-x4 / h100-x4: NCCL's channels per peer against the exchange's rate (slabs moved 129 GB/s of the link's 397, pencils 58: run 162), heat3d weak on 4 GPUs before each pass and overlapped
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  h="weak heat3d 7pt fp32 (512^3 per GPU)"
  on 1 "$h" heat3d -n 512 --steps 4000 --precision fp32
  for c in default 4 8 16; do
    echo "== NCCL_NCHANNELS_PER_PEER=$c NCCL_MIN_P2P_NCHANNELS=$c" | tee -a "$out/bench.txt"
    if [ "$c" = default ]; then unset NCCL_NCHANNELS_PER_PEER NCCL_MIN_P2P_NCHANNELS ON_ENV
    else export NCCL_NCHANNELS_PER_PEER=$c NCCL_MIN_P2P_NCHANNELS=$c ON_ENV="NCCL_NCHANNELS_PER_PEER NCCL_MIN_P2P_NCHANNELS"; fi
    on 4 "$h, channels $c" heat3d -n 512 --nz 2048 --steps 4000 --precision fp32 --decomp 1x1x4
    on 4 "$h, channels $c" heat3d -n 1024 --nz 512 --steps 4000 --precision fp32 --decomp 2x2x1
  done
  unset NCCL_NCHANNELS_PER_PEER NCCL_MIN_P2P_NCHANNELS ON_ENV
fi
if want radius2; then  # #40: the single sweeps of every radius-2 3D file at 512^3 (the default: cached in fp32 and at 16 bits, stream in fp64) and the defaults' test
  export STRATA_CACHE_DIR=$PWD/$build/stencil-cache
  ctest --test-dir $build -R 'StencilCuda.DefaultKernels' --output-on-failure > "$out/tests.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failure|Expected|Which is" "$out/tests.txt" | head -20
  for f in examples/stencils/variable-wave.stencil tests/stencils/mixed3d.stencil tests/stencils/fixed3d-r2.stencil; do
    bench $f --precision fp32,bf16,fp64 --kernels stream,cached --repeats 3
  done
  unset STRATA_CACHE_DIR
fi
if want jacobi4; then  # #42 on nvidia-h200-x4 / h100-x4: heat2d strong on 1, 2 and 4 GPUs beside NVIDIA's multi-GPU Jacobi on the same GPUs (NPS="1 2 4"; carry .peers). Its rows join scaling4's table.
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  j="strong heat2d 20480^2 fp32 temporal, 1000 steps"
  on 1 "$j" heat2d -n 20480 --steps 1000 --precision fp32 --kernel temporal
  on 2 "$j" heat2d -n 20480 --steps 1000 --precision fp32 --kernel temporal --decomp 1x2
  on 4 "$j" heat2d -n 20480 --steps 1000 --precision fp32 --kernel temporal --decomp 1x4
  on 4 "$j" heat2d -n 20480 --steps 1000 --precision fp32 --kernel temporal --decomp 2x2
  [ -d .peers/mgpm ] && NPS="1 2 4" bash .peers/mgpm-jacobi.sh 2>&1 | tee -a "$out/bench.txt"
fi
if want faces; then  # #42 on nvidia-h100-x2 / -x4: grids cut across x or y overlapped as slabs are: the span tests, the NCCL suite's cases (FACES_ONLY: a list of names; the whole suite by default), then 2 GPUs cut along each axis, before each pass and overlapped
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  ctest --test-dir $build -R "^Spans[.]" --output-on-failure > "$out/tests.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failed|differs" "$out/tests.txt" | head -30
  if [ -z "${SKIP_SUITE:-}" ]; then
    ONLY=${FACES_ONLY:-} HALOS=nccl bash tests/mpi_runs_cuda.sh $build/strata examples/stencils > "$out/mpi-cuda-nccl.txt" 2>&1 || true
    grep -E "FAIL|passed" "$out/mpi-cuda-nccl.txt" | head -40
  fi
  if [ -z "${SKIP_ROWS:-}" ]; then
    h="weak heat3d 7pt fp32 (512^3 per GPU)"
    on 1 "$h" heat3d -n 512 --steps 4000 --precision fp32
    on 2 "$h" heat3d -n 512 --nz 1024 --steps 4000 --precision fp32 --decomp 1x1x2
    on 2 "$h" heat3d --nx 1024 --ny 512 --nz 512 --steps 4000 --precision fp32 --decomp 2x1x1
    on 2 "$h" heat3d --nx 512 --ny 1024 --nz 512 --steps 4000 --precision fp32 --decomp 1x2x1
    w="weak wave3d fp32 (512^3 per GPU)"
    on 1 "$w" wave3d -n 512 --steps 1000 --precision fp32
    on 2 "$w" wave3d --nx 512 --ny 512 --nz 1024 --steps 1000 --precision fp32 --decomp 1x1x2
    on 2 "$w" wave3d --nx 1024 --ny 512 --nz 512 --steps 1000 --precision fp32 --decomp 2x1x1
    on 2 "$w" wave3d --nx 512 --ny 1024 --nz 512 --steps 1000 --precision fp32 --decomp 1x2x1
    a="strong apf fp32 temporal (16384^2)"
    on 1 "$a" apf -n 16383 -i 2000 --precision fp32 --kernel temporal
    on 2 "$a" apf -n 16383 -i 2000 --precision fp32 --kernel temporal -x 1 -y 2
    on 2 "$a" apf -n 16383 -i 2000 --precision fp32 --kernel temporal -x 2 -y 1
  fi
fi
if want python; then  # the Python bindings on the GPU: their tests, and what a call costs against the CLI
  ctest --test-dir $build -R '^python' --output-on-failure > "$out/tests-python.txt" 2>&1 || true
  grep -E "passed|failed|skipped|Error|assert" "$out/tests-python.txt" | head -40
  echo "\$ python3 bench/python_overhead.py" | tee -a "$out/bench.txt"
  PYTHONPATH=$build/python python3 bench/python_overhead.py $build/strata | tee -a "$out/bench.txt"
  echo | tee -a "$out/bench.txt"
fi
# The tuner's problems (the issue's table): MODEL OPTIONS|PRECISION each.
tune_problems=("apf -n 8192|fp32" "apf -n 8192|fp64" "heat3d -n 512 --stencil 7pt|fp32" "heat3d -n 512 --stencil 7pt|fp64"
               "heat3d -n 512 --stencil 27pt|fp32" "heat3d -n 512 --stencil 27pt|fp64" "wave3d -n 512|fp32")
if want tune || want tune-exhaustive; then
  # Each problem tuned (against the built-in default, the tuning time); with tune-exhaustive, then
  # every candidate measured, the tuner's choice beside the best in the same final round.
  # TUNE_ONLY=N,M: those problems alone. Then a tuned run against the same launch by hand.
  export STRATA_WISDOM_DIR=$out/wisdom
  i=0
  for p in "${tune_problems[@]}"; do
    i=$((i + 1))
    [[ -n ${TUNE_ONLY:-} && ",$TUNE_ONLY," != *",$i,"* ]] && continue
    echo "\$ strata tune ${p%|*} --precision ${p#*|}" | tee -a "$out/bench.txt"
    $build/strata tune ${p%|*} --precision ${p#*|} --quiet | tee -a "$out/bench.txt"
    echo | tee -a "$out/bench.txt"
    want tune-exhaustive || continue
    echo "\$ strata tune ${p%|*} --precision ${p#*|} --exhaustive --no-save" | tee -a "$out/bench.txt"
    $build/strata tune ${p%|*} --precision ${p#*|} --exhaustive --no-save --quiet | tee -a "$out/bench.txt"
    echo | tee -a "$out/bench.txt"
  done
  # Bitwise: the run that takes its launch from the wisdom, and the same launch given by hand.
  args="heat3d -n 512 --stencil 7pt --precision fp32 --steps 200 --backend cuda"
  $build/strata run $args --checkpoint $out/wisdom.ck > $out/wisdom-run.txt
  launch=$(sed -n 's/^launch: from wisdom ([^)]*): //p' $out/wisdom-run.txt)
  if [[ -n $launch ]]; then
    flags=$(echo "$launch" | sed -E 's/^([a-z0-9]+)/--kernel \1/; s/depth /--depth /; s/chunk /--chunk /; s/ graphs$//; s/ no-graphs$/ --no-graphs/')
    $build/strata run $args $flags --checkpoint $out/by-hand.ck > /dev/null
    cmp -s $out/wisdom.ck $out/by-hand.ck && same=bitwise-identical || same=DIFFERENT
    echo "tuned run ($launch) against the same launch by hand ($flags): checkpoints $same" | tee -a "$out/bench.txt"
    echo | tee -a "$out/bench.txt"
  fi
  rm -f $out/*.ck
fi
if want tma; then  # the TMA kernels (heat3d's and wave3d's): their GPU tests, and the A/B rows at 512^3
  $build/tests/strata_gpu_tests --gtest_filter='Tma.*:TmaPatterns.*:WaveTma.*:*HeatStrategy*tma*:*WaveStrategy*tma*:*WaveChunks*tma*:*HeatGroups*:WaveAsync.*:Cuda.Relaunch*' \
    > "$out/tests-tma.txt" 2>&1 || true
  grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |Failure|Expected|Which is|differs|error" "$out/tests-tma.txt" | head -40
  for st in 7pt 19pt 27pt; do bench heat3d --stencil $st --precision fp32,fp64 --kernels vec,async,tmasync,tma; done
  bench wave3d --precision fp32,fp64 --kernels planes,async,tmasync,tma
fi
if want heat2d; then  # heat2d's tests and rows alone
  ctest --test-dir $build -R "Heat2d" --output-on-failure > "$out/tests-heat2d.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failed|Failure|Expected|Which is|depth" "$out/tests-heat2d.txt" | head -30
  heat2d_rows
fi
if want ab; then  # the same benchmarks from the commit in .base (built to $build-base) and this one, ABBA
  cmake -S .base -B $build-base -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_BUILD_TESTS=OFF >> "$out/log.txt" 2>&1
  cmake --build $build-base -j 16 --target strata_cli >> "$out/log.txt" 2>&1 || { tail -30 "$out/log.txt"; exit 1; }
  ab() {  # bench the headline workloads with one binary
    local bin=$1 tag=$2
    for w in "apf --kernels multi4,naive,temporal" "heat2d --kernels multi4,temporal" "heat3d --stencil 7pt --kernels cached,vec,temporal" \
             "heat3d --stencil 27pt --kernels async,temporal" "wave3d --kernels planes,async"; do
      echo "\$ [$tag] strata bench $w --precision fp32,fp64 --repeats 7" | tee -a "$out/ab.txt"
      $bin bench $w --precision fp32,fp64 --repeats 7 | tail -n +5 | tee -a "$out/ab.txt"
    done
  }
  ab $build-base/strata before; ab $build/strata after; ab $build/strata after; ab $build-base/strata before
fi
if want heat2d-ncu; then  # what limits heat2d's temporal kernels (Nsight Compute, one launch each)
  sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
  for prec in fp32 fp64; do
    for k in ${NCU_KERNELS:-temporal}; do
      ncu --clock-control none $sections --kernel-name regex:"temporal2d" --launch-skip 3 --launch-count 1 \
        $build/strata run heat2d -n 8192 --steps 64 --backend cuda --precision $prec --kernel $k --depth ${DEPTH:-8} --no-graphs > "$out/ncu-heat2d-$k-$prec.txt" 2>&1
      echo "== heat2d $k $prec depth ${DEPTH:-8}"
      grep -E "^ +(Duration|DRAM Throughput|Memory Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Executed Ipc Active|Issue Slots Busy|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Shared Memory|Warp Cycles Per Issued|Block Limit Registers|Dynamic Shared)" "$out/ncu-heat2d-$k-$prec.txt" | sed 's/^ *//' | cut -c1-110
      grep -E "Shared|MIO|stall" "$out/ncu-heat2d-$k-$prec.txt" | grep -iE "^ *(Shared Memory +|smsp__pcsamp|Stall)" | head -5
    done
  done
fi
if want sanitize; then  # compute-sanitizer over every CUDA strategy of every model, small odd grids
  # One case per line: tool, model, kernel, precision and the run's arguments (temporal at depth 3,
  # so passes end partway through the steps). Cases run 8 at a time; each prints one line.
  cases=$out/sanitize-cases.txt; : > "$cases"
  # SANITIZE_MODELS: the models (default the built-ins and three stencil files: a pointwise field with
  # the mirror boundary, the periodic boundary, two neighbourhood fields), compiled here once first.
  for model in ${SANITIZE_MODELS:-apf heat2d heat3d wave3d examples/stencils/barkley.stencil examples/stencils/heat-periodic.stencil examples/stencils/gray-scott.stencil}; do
    [[ $model == *.stencil ]] && $build/strata run $model -n 8 --steps 1 > /dev/null
    case $model in
      apf) sizes=("-n 70 -i 7") ;; heat2d) sizes=("-n 67 --steps 7") ;;
      *.stencil) if grep -q "^dims 3" "$model"; then sizes=("-n 29 --steps 5"); else sizes=("-n 67 --steps 7"); fi ;;
      heat3d) sizes=("-n 37 --steps 5 --stencil 7pt" "-n 37 --steps 5 --stencil 19pt" "-n 37 --steps 5 --stencil 27pt") ;;
      wave3d) sizes=("-n 29 --steps 5 --receiver-line 0.2,0.5,0.5,0.8,0.5,0.5,5") ;;
    esac
    for k in $($build/strata run $model --kernel list --backend cuda | awk 'NR > 1 && $1 != "(not" {print $1}'); do
      [[ -n ${SANITIZE_KERNELS:-} && ",$SANITIZE_KERNELS," != *",$k,"* ]] && continue
      depth=""; [[ $k == temporal ]] && depth="--depth 3"
      [[ $model == wave3d && $k == temporal ]] && continue  # no temporal kernel takes sources
      for size in "${sizes[@]}"; do
        for prec in fp32 fp64; do
          for tool in memcheck racecheck initcheck synccheck; do
            echo "$tool $model $k $prec $size${depth:+ $depth}" >> "$cases"
          done
        done
      done
    done
  done
  run_case() {  # TOOL MODEL KERNEL PRECISION ARGS...
    local tool=$1 model=$2 kernel=$3 prec=$4; shift 4
    local log; log=$(mktemp)
    compute-sanitizer --tool "$tool" --error-exitcode 99 "$build/strata" run "$model" "$@" --backend cuda \
      --kernel "$kernel" --precision "$prec" --quiet --out "$(mktemp -d)" > "$log" 2>&1
    local rc=$? errors
    # memcheck/initcheck/synccheck: "ERROR SUMMARY: N errors"; racecheck: "(N errors, M warnings)"
    errors=$(grep -oE "ERROR SUMMARY: [0-9]+ error|\([0-9]+ errors" "$log" | grep -oE "[0-9]+" | head -1)
    printf '%-9s %-6s %-9s %s %-40s rc=%d errors=%s\n' "$tool" "$model" "$kernel" "$prec" "$*" "$rc" "${errors:-?}"
    if [[ $rc -ne 0 || ${errors:-1} -ne 0 ]]; then grep -E "=========" "$log" | head -20; fi
    rm -f "$log"
  }
  export -f run_case; export build
  xargs -d '\n' -n 1 -P 8 bash -c 'run_case $1' _ < "$cases" > "$out/sanitize.txt"  # $1 unquoted: its words
  total=$(wc -l < "$cases"); clean=$(grep -c "rc=0 errors=0" "$out/sanitize.txt" || true)
  grep -v "rc=0 errors=0" "$out/sanitize.txt" | head -40 || true
  echo "sanitize: $clean of $total cases clean" | tee -a "$out/sanitize.txt"
fi
if want ebisu; then  # the peer: EBISU's 2D 5-point (carry .peers; ../shared/peers/prepare.sh makes it)
  OUT=$out bash .peers/ebisu-2d.sh 2> "$out/ebisu-stderr.txt" | tee -a "$out/bench.txt"
fi
if want profile; then  # DRAM traffic and occupancy of the streaming kernels (ncu)
  metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed
  for k in vec async planes; do
    ncu --clock-control none --kernel-name regex:"planes3d|async3d" --launch-skip 2 --launch-count 1 --metrics $metrics \
      $build/strata run heat3d -n 512 --steps 4 --backend cuda --precision fp32 --kernel $k --no-graphs 2>&1 | grep -E "planes3d|async3d|dram__|lts__|gpu__|warps" | sed 's/^ *//' | cut -c1-110
  done
  ncu --clock-control none --kernel-name regex:"rows2d|naive2d" --launch-skip 2 --launch-count 1 --metrics $metrics \
    $build/strata run apf -n 8192 -i 4 --backend cuda --precision fp32 --kernel multi4 --no-graphs 2>&1 | grep -E "rows2d|dram__|lts__|gpu__|warps" | sed 's/^ *//' | cut -c1-110
fi
if want io; then  # the disk and each writer stage apart, then the snapshot overhead of a run
  echo "\$ strata-io" | tee -a "$out/bench.txt"
  $build/strata-io /tmp/strata-io 60 | tee -a "$out/bench.txt"
  echo | tee -a "$out/bench.txt"
  for frames in 20 100; do  # 20: within the pinned buffers' reach; 100: the sustained rate
    for prec in fp32 fp64; do
      echo "\$ strata bench apf -n 4096 --snapshot-every 100 --frames $frames --precision $prec" | tee -a "$out/bench.txt"
      $build/strata bench apf -n 4096 --snapshot-every 100 --frames $frames --precision $prec --out /tmp/strata-frames | tee -a "$out/bench.txt"
      echo | tee -a "$out/bench.txt"
    done
  done
fi
if want temporal; then  # the temporal strategies alone: tests, then MODEL's rows (apf or heat3d)
  ctest --test-dir $build -R "Temporal|Strategy|Chunk" --output-on-failure > "$out/tests.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failed|Failure|Expected|Which is|differs|depth" "$out/tests.txt" | head -40
  if [[ ${MODEL:-apf} == apf ]]; then
    $build/strata bench apf --precision fp32,fp64 --kernels ${KERNELS:-multi4,temporal} --depth ${DEPTHS:-1,2,3,4,6,8,12} --repeats 5
    $build/strata bench apf -n 256 --precision fp32 --kernels naive,temporal --graphs both --depth 4,8,16
  else
    $build/strata bench heat3d --stencil ${STENCIL:-7pt} --precision fp32,fp64 --kernels ${KERNELS:-vec,temporal} --depth ${DEPTHS:-1,2,3,4,5,6,8} --repeats 5
    for c in ${CHUNKS:-}; do
      echo "chunk $c"; $build/strata bench heat3d --stencil ${STENCIL:-7pt} --precision fp32,fp64 --kernels temporal --depth ${DEPTHS:-4} --chunk $c --repeats 5 | tail -n +2
    done
  fi
fi
if want sweep; then  # launch-shape experiments, not for the docs
  for c in 32 64 128 256; do
    echo "chunk $c"
    $build/strata bench heat3d --stencil 7pt --precision fp32,fp64 --kernels vec,async --chunk $c --repeats 5 | tail -4
    $build/strata bench heat3d --stencil 27pt --precision fp32,fp64 --kernels vec,async --chunk $c --repeats 5 | tail -4
  done
  for c in 8 16; do
    echo "rows $c"
    $build/strata bench apf --precision fp32,fp64 --kernels naive,multi4 --chunk $c --repeats 5 | tail -4
  done
fi
if want wave; then  # the wave model alone: its GPU tests, then its rows (KERNELS: a subset)
  ctest --test-dir $build -R "Wave" --output-on-failure > "$out/tests.txt" 2>&1 || true
  grep -E "tests passed|tests failed|Failed|Failure|Expected|Which is|differs|chunk" "$out/tests.txt" | head -40
  cmd="wave3d --precision fp32,fp64 ${KERNELS:+--kernels $KERNELS} --repeats 5"
  echo "\$ strata bench $cmd" | tee -a "$out/bench.txt"
  $build/strata bench $cmd | tee -a "$out/bench.txt"
fi
if want wave-ncu; then  # the wave kernels: why they stop near 70% of the copy bandwidth
  sections="--section SpeedOfLight --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats --section SchedulerStats --metrics dram__bytes_read.sum,dram__bytes_write.sum"
  for k in ${NCU_KERNELS:-naive planes}; do
    for prec in ${NCU_PRECISIONS:-fp32}; do
      kernel=wave_$k; [[ $k == tmasync ]] && kernel=wave_tma  # tmasync is wave_tma without the DMA warp
      ncu --clock-control none $sections --kernel-name regex:$kernel --launch-skip 3 --launch-count 1 \
        $build/strata run wave3d -n 512 --steps 6 --backend cuda --precision $prec --kernel $k --no-graphs > "$out/ncu-wave-$k-$prec.txt" 2>&1
      echo "== wave $k $prec"; grep -E "Duration|DRAM Throughput|L2 Cache Throughput|No Eligible|Issued Warp|Eligible Warps|L1/TEX Cache Throughput|Compute \(SM\)|dram__bytes|Memory Throughput|L1/TEX Hit|L2 Hit|Issue Slots|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Mem Busy|Max Bandwidth|Block Limit|dram__" "$out/ncu-wave-$k-$prec.txt" | sed 's/^ *//' | cut -c1-140 | head -30
    done
  done
fi
if want ncu-tma; then  # what limits tma against async: one launch each, heat3d 27pt fp32 and 19pt fp64, 512^3
  sections="--section SpeedOfLight --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis"
  for k in async tma; do
    for sp in "27pt fp32" "19pt fp64"; do
      set -- $sp
      ncu --clock-control none $sections --kernel-name regex:${k}3d --launch-skip 3 --launch-count 1 \
        $build/strata run heat3d -n 512 --steps 6 --stencil $1 --precision $2 --backend cuda --kernel $k --no-graphs \
        > "$out/ncu-$k-$1-$2.txt" 2>&1
      echo "== ncu $k heat3d $1 $2"
      grep -E "Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit (Registers|Shared)|Stall|Warp Cycles Per Issued|Issued Warp|L2 Hit|Mem Busy" \
        "$out/ncu-$k-$1-$2.txt" | sed 's/^ *//' | cut -c1-120 | head -30
    done
  done | tee -a "$out/bench.txt"
fi
if want ncu; then  # one launch of each kernel under study, with ncu's main sections
  sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis"
  ncu --clock-control none $sections --kernel-name regex:temporal2d --launch-skip 3 --launch-count 1 \
    $build/strata run apf -n 8192 -i 40 --backend cuda --precision fp32 --kernel temporal --depth 4 --no-graphs > "$out/ncu-temporal.txt" 2>&1
  ncu --clock-control none $sections --kernel-name regex:temporal3d --launch-skip 3 --launch-count 1 \
    $build/strata run heat3d -n 512 --steps 18 --backend cuda --precision fp32 --kernel temporal --depth 3 --no-graphs > "$out/ncu-heat-temporal.txt" 2>&1
  ncu --clock-control none $sections --kernel-name regex:planes3d --launch-skip 3 --launch-count 1 \
    $build/strata run heat3d -n 512 --steps 6 --backend cuda --precision fp32 --kernel vec --no-graphs > "$out/ncu-vec.txt" 2>&1
  for f in "$out"/ncu-*.txt; do
    echo "== $f"; grep -E "Duration|Throughput|Pipe|Issue Slots|Issued Ipc|Executed Ipc|Achieved Occupancy|Theoretical Occupancy|Registers|Stall|Warp Cycles|L2 Hit|Mem Busy|Max Bandwidth|Block Limit|OPT" "$f" | sed 's/^ *//' | cut -c1-140 | head -45
  done
fi
