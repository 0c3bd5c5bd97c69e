#!/usr/bin/env bash
# The CUDA backend over several MPI ranks against one process, strategy by strategy: the same
# kernel on each rank's window (its halos staged through the host over MPI) must give the bits of
# the same kernel on the whole grid. Ranks share the GPUs there are (STRATA_SHARE_GPUS=1), so it
# runs on a machine of one GPU. HALOS=nccl: the halos over NCCL instead (one GPU per rank: the
# cases of more ranks than GPUs are skipped). ONLY=NAME,...: only the cases of those names. Usage: tests/mpi_runs_cuda.sh STRATA EXAMPLES_DIR
source "$(dirname "$0")/mpi_common.sh" "$@"
export STRATA_SHARE_GPUS=1
passed=0
kernels() { "$strata" run "$1" --backend cuda --kernel list | awk '/^  [a-z]/ {print $1}'; }
halos=${HALOS:-mpi}
gpus=$(nvidia-smi -L | wc -l)

# case NAME GRID KERNEL ARGS...: one process and the ranks of GRID, same kernel, same bits
case_() {
  local name=$1 grid=$2 kernel=$3; shift 3
  local tag="$name.$kernel.$grid.$halos"
  [[ -n ${ONLY:-} && ",$ONLY," != *",$name,"* ]] && return  # ONLY=NAME,...: those cases alone
  if [ "$halos" = nccl ] && [ "$(ranks "$grid")" -gt "$gpus" ]; then return; fi
  "$strata" run "$@" --backend cuda --kernel "$kernel" --quiet --out "$work/$tag.1" \
    --checkpoint "$work/$tag.1.chk" > "$work/$tag.1.txt" 2>&1 || { fail "$tag on one process: $(grep -m1 error "$work/$tag.1.txt")"; return; }
  timeout 300 mpirun -np "$(ranks "$grid")" -x STRATA_SHARE_GPUS "${nvls[@]}" "$strata" run "$@" --decomp "$grid" --backend cuda --kernel "$kernel" --halos "$halos" --quiet \
    --out "$work/$tag" --checkpoint "$work/$tag.chk" > "$work/$tag.txt" 2>&1 \
    || { fail "$tag: $(grep -m1 error "$work/$tag.txt")"; return; }
  if cmp -s "$work/$tag.1.chk" "$work/$tag.chk"; then
    passed=$((passed + 1))
    echo "ok   $tag ($(grep -m1 -o 'Temporal blocking[^|]*' "$work/$tag.txt" | head -c 60))"
  else
    fail "$tag: the state differs from one process' ($(grep -m1 -iE 'norm|energy|error' "$work/$tag.1.txt") vs $(grep -m1 -iE 'norm|energy|error' "$work/$tag.txt"))"
  fi
}

for k in $(kernels apf); do
  case_ apf 1x2 "$k" apf -n 300 -i 60 --precision fp32
  case_ apf64 2x1 "$k" apf -n 300 -i 60 --precision fp64
done
case_ apf 2x3 temporal apf -n 300 -i 60 --precision fp32 --depth 4   # uneven, 6 ranks, deep halos
case_ apf 1x3 temporal apf -n 300 -i 61 --precision fp64 --depth 5   # a remainder pass
for k in $(kernels heat2d); do case_ heat2d 1x2 "$k" heat2d -n 301 --steps 40 --precision fp32; done
case_ heat2d 2x2 temporal heat2d -n 301 --steps 40 --precision fp32 --depth 8
for k in $(kernels heat3d); do case_ heat3d 1x1x2 "$k" heat3d -n 67 --steps 12 --precision fp32; done
for k in naive smem planes temporal; do case_ heat27 2x1x2 "$k" heat3d -n 67 --steps 12 --stencil 27pt --precision fp64; done
wave=(wave3d --nx 72 --ny 64 --nz 80 --steps 30 --source 0.5,0.5,0.5 --receiver-line 0.1,0.1,0.1,0.85,0.85,0.85,9)
for k in $(kernels wave3d); do
  case_ wave 1x1x2 "$k" "${wave[@]}" --precision fp32
  case_ wave64 2x1x1 "$k" "${wave[@]}" --precision fp64
done
# Passes enough for graph replays (64 passes each): the halos inside captured graphs (over NCCL,
# the exchange is captured with the kernels), and a remainder after them.
case_ graphs 1x2 multi4 apf -n 300 -i 150 --precision fp32
case_ graphs 1x1x2 cached heat3d -n 67 --steps 150 --precision fp32
case_ graphs 2x1x1 temporal heat3d -n 67 --steps 290 --precision fp64 --depth 4
# Grids cut across another axis than the slowest (over NCCL, packed, the halos before each pass) in
# graphs: with the slowest axis cut too (2x2), and with sources and receivers (1x2x1).
case_ graphs 2x2 multi4 apf -n 300 -i 150 --precision fp32
case_ graphs 1x2x1 async wave3d --nx 72 --ny 64 --nz 80 --steps 150 --source 0.5,0.5,0.5 \
  --receiver-line 0.1,0.1,0.1,0.85,0.85,0.85,9 --precision fp32
for k in $(kernels "$examples/heat-periodic.stencil"); do
  case_ periodic 2x2 "$k" "$examples/heat-periodic.stencil" -n 99 --steps 30 --precision fp32
done

for k in $(kernels "$examples/gray-scott.stencil"); do  # two neighbourhood fields, periodic
  case_ grayscott 2x1 "$k" "$examples/gray-scott.stencil" -n 99 --steps 30 --precision fp64
done

mixed="$(dirname "$0")/stencils/mixed3d.stencil"  # cells-only: radius 2, a box offset, periodic
for k in $(kernels "$mixed"); do case_ mixed 1x1x2 "$k" "$mixed" -n 45 --steps 12 --precision fp64; done
box2d="$(dirname "$0")/stencils/box2d.stencil"  # cells-only in 2D: the 9-point box (cached's rows)
for k in $(kernels "$box2d"); do case_ box2d 2x1 "$k" "$box2d" -n 131 --steps 20 --precision fp32; done
# The 2D cells-only temporal kernel on a 2x2 grid and on slabs (1x2: over NCCL the slabs' rows are
# updated first and sent while the rest updates, spans of rows): the mirror boundary with two
# fields, a pointwise field and a coefficient; radius 2 with the fixed boundary; two boxes on a
# torus (halos 2R deep).
for f in mirror2d fixed2d periodic2d; do
  for grid in 2x2 1x2; do
    case_ "$f" "$grid" temporal "$(dirname "$0")/stencils/$f.stencil" -n 131 --steps 20 --precision fp32
  done
done
# The 3D cells-only temporal kernel cut along each axis (at its default depth 2, halos 2 deep): the
# mirror boundary with a pointwise field, a box of two fields on a torus with a coefficient, a box
# with the fixed boundary.
case_ mirror3d 2x1x2 temporal "$(dirname "$0")/stencils/mirror3d.stencil" -n 45 --steps 12 --precision fp64
case_ periodic3d 1x2x2 temporal "$(dirname "$0")/stencils/periodic3d.stencil" -n 45 --steps 12 --precision fp32
case_ fixed3d 1x1x2 temporal "$(dirname "$0")/stencils/fixed3d.stencil" -n 45 --steps 12 --precision fp64
for k in $(kernels "$examples/wave8.stencil"); do
  case_ wave8 2x1x1 "$k" "$examples/wave8.stencil" -n 41 --steps 12 --precision fp32
done

# Grids cut across x or y, which over NCCL update the columns or rows beside their neighbours first
# and send them while the interior updates (faces of whole tiles of the kernel: DevGrid::xlo), as
# slabs do: every kernel, wide enough that each one's tiles leave an interior, and the report
# must say that the exchange was overlapped. Sources and receivers in the faces and inside.
# (The temporal kernels update no span of x or y: not overlapped across them, and the report says so.)
faces_() {
  case_ "$@"
  local tag="$1.$3.$2.$halos" want="sent while the interior updates"
  [[ $3 == temporal ]] && want="not overlapped: the temporal kernel updates no span of x"
  if [ "$halos" = nccl ] && [ -f "$work/$tag.txt" ] && ! grep -q "$want" "$work/$tag.txt"; then
    fail "$tag: the halos not as expected ($(grep -m1 -o 'halos over [^|]*' "$work/$tag.txt"))"
  fi
}
for k in $(kernels heat3d); do
  faces_ xfaces 2x1x1 "$k" heat3d --nx 600 --ny 40 --nz 20 --steps 12 --precision fp32
  faces_ yfaces 1x2x1 "$k" heat3d --nx 70 --ny 160 --nz 20 --steps 12 --precision fp64
done
for k in async cached temporal; do
  faces_ xfaces27 2x1x1 "$k" heat3d --nx 600 --ny 40 --nz 20 --steps 12 --stencil 27pt --precision fp64
done
for k in $(kernels wave3d); do
  faces_ xfaceswave 2x1x1 "$k" wave3d --nx 300 --ny 40 --nz 40 --steps 30 --source 0.5,0.065,0.065 \
    --receiver-line 0.02,0.02,0.02,0.98,0.11,0.11,9 --precision fp32  # (the domain is 1 x 0.13 x 0.13)
  faces_ yfaceswave 1x2x1 "$k" wave3d --nx 40 --ny 200 --nz 40 --steps 30 --source 0.5,0.45,0.5 \
    --receiver-line 0.1,0.02,0.1,0.85,0.98,0.85,9 --precision fp64
  # fp64 across x: the second rank's first own column (4 in) on 128 bytes, 16 elements on (DeviceLayout)
  faces_ xfaceswave64 2x1x1 "$k" wave3d --nx 300 --ny 40 --nz 40 --steps 30 --source 0.5,0.065,0.065 \
    --receiver-line 0.02,0.02,0.02,0.98,0.11,0.11,9 --precision fp64
done
for k in $(kernels apf); do faces_ xfacesapf 2x1 "$k" apf -n 600 -i 30 --precision fp32; done
faces_ xfacesgraphs 2x1x1 cached heat3d --nx 600 --ny 40 --nz 20 --steps 150 --precision fp64  # in graphs
faces_ xfacesgraphs 2x1 multi4 apf -n 600 -i 150 --precision fp32
for k in $(kernels "$box2d"); do faces_ xfacesbox2d 2x1 "$k" "$box2d" --nx 600 --ny 50 --steps 20 --precision fp32; done
for k in $(kernels "$mixed"); do
  faces_ xfacesmixed 2x1x1 "$k" "$mixed" --nx 600 --ny 30 --nz 20 --steps 12 --precision fp32
  faces_ yfacesmixed 1x2x1 "$k" "$mixed" --nx 40 --ny 150 --nz 20 --steps 12 --precision fp64
done
# A middle rank with faces on both sides of x (three ranks along it), and 16-bit storage, whose
# tiles are wider (cached: 256 columns at 16 bits).
for k in $(kernels heat3d); do
  faces_ xfaces3 3x1x1 "$k" heat3d --nx 1800 --ny 40 --nz 20 --steps 12 --precision fp32
  faces_ xfaces16 2x1x1 "$k" heat3d --nx 1200 --ny 40 --nz 20 --steps 12 --precision bf16
done
for k in $(kernels apf); do faces_ xfaces16 2x1 "$k" apf -n 1200 -i 30 --precision fp16; done
# Ranks too narrow for an interior at the kernel's tiles (24 columns each: beside faces 4 deep,
# what is left rounds to no whole tile of 32 columns, the narrowest of any 3D kernel; at 36 each,
# run 167, naive's tiles of 32 left an interior), with a source and receivers: each updates its
# whole grid as one face, the points after it, and sends after the pass (the report says so).
for k in $(kernels wave3d); do
  case_ narrow 2x1x1 "$k" wave3d --nx 48 --ny 64 --nz 80 --steps 30 --source 0.5,0.5,0.5 \
    --receiver-line 0.1,0.1,0.1,0.85,0.85,0.85,9 --precision fp32
  if [ "$halos" = nccl ] && [ -f "$work/narrow.$k.2x1x1.nccl.txt" ] && ! grep -q "sent after each pass" "$work/narrow.$k.2x1x1.nccl.txt"; then
    fail "narrow.$k.2x1x1.nccl: the halos not sent after each pass ($(grep -m1 -o 'halos over [^|]*' "$work/narrow.$k.2x1x1.nccl.txt"))"
  fi
done
# Without --kernel, ranks of uneven parts on either side of the defaults' size threshold (windows of
# 64 and 63 columns of 128 x 128: 2^20 cells and fewer) run one kernel, chosen by the largest part
# (Subdomain::choice_cells), and rank 0's launch: their halos pair up, the bits are one process'.
if [[ -z ${ONLY:-} || ",$ONLY," == *",straddle,"* ]] && { [ "$halos" = mpi ] || [ "$gpus" -ge 2 ]; }; then
  "$strata" run heat3d --nx 125 --ny 128 --nz 128 --steps 12 --backend cuda --no-wisdom --quiet \
    --checkpoint "$work/straddle.1.chk" > "$work/straddle.1.txt" 2>&1
  timeout 300 mpirun -np 2 -x STRATA_SHARE_GPUS "${nvls[@]}" "$strata" run heat3d --nx 125 --ny 128 --nz 128 --steps 12 \
    --decomp 2x1x1 --backend cuda --no-wisdom --halos "$halos" --quiet --checkpoint "$work/straddle.chk" > "$work/straddle.txt" 2>&1
  if cmp -s "$work/straddle.1.chk" "$work/straddle.chk"; then
    passed=$((passed + 1)); echo "ok   straddle: uneven ranks on either side of the defaults' threshold, one kernel"
  else
    fail "straddle ($halos): $(grep -h -m1 -iE 'error|kernel' "$work/straddle.txt") (or the state differs)"
  fi
fi
# --tune over ranks (#42): every rank measures each kernel and depth on the whole run, the exchange
# over the run's link included; the winner is the wisdom's entry for this process grid and link,
# not one process' entry of the same grid (tuned first here), a second run takes it from there,
# and the tuned run's state equals one process' with the launch it reports.
if [[ -z ${ONLY:-} || ",$ONLY," == *",tune,"* ]] && { [ "$halos" = mpi ] || [ "$gpus" -ge 2 ]; }; then
  tune=(heat3d --nx 96 --ny 80 --nz 128 --steps 16 --precision fp32 --backend cuda --quiet)
  export STRATA_WISDOM_DIR=$work/wisdom
  rc=0
  "$strata" run "${tune[@]}" --tune > "$work/tune.one.txt" 2>&1 || rc=1
  for n in 1 2; do
    timeout 300 mpirun -np 2 -x STRATA_SHARE_GPUS -x STRATA_WISDOM_DIR "${nvls[@]}" "$strata" run "${tune[@]}" \
      --decomp 1x1x2 --halos "$halos" --tune --checkpoint "$work/tune.$n.chk" > "$work/tune.$n.txt" 2>&1 || rc=1
  done
  chosen=$(sed -n 's/.*launch: tuned now over 2 ranks.*): \(.*\) \(no-\)\{0,1\}graphs$/\1/p' "$work/tune.1.txt")
  read -r kernel _ depth _ <<< "$chosen"
  "$strata" run "${tune[@]}" --kernel "${kernel:-none}" ${depth:+--depth "$depth"} --checkpoint "$work/tune.k.chk" \
    > "$work/tune.k.txt" 2>&1 || rc=1
  if [ $rc -ne 0 ]; then
    fail "tune ($halos): a run failed: $(grep -h -m1 error "$work"/tune.*.txt)"
  elif ! grep -q "launch: tuned now, saved to the wisdom" "$work/tune.one.txt"; then
    fail "tune ($halos): one process did not tune ($(grep -h -m1 launch "$work/tune.one.txt"))"
  elif [ -z "$chosen" ]; then
    fail "tune ($halos): the ranks took one process' entry, or tuned nothing ($(grep -h -m1 launch "$work/tune.1.txt"))"
  elif ! grep -q "launch: from wisdom.*: $chosen" "$work/tune.2.txt"; then
    fail "tune ($halos): the second run did not take '$chosen' from the wisdom ($(grep -h -m1 launch "$work/tune.2.txt"))"
  elif ! cmp -s "$work/tune.1.chk" "$work/tune.k.chk"; then
    fail "tune ($halos): the tuned run ($chosen) differs from one process with its launch"
  else
    passed=$((passed + 1)); echo "ok   tune: over 2 ranks ($halos) chose $chosen, apart from one process' entry; then from the wisdom; the bits of one process"
  fi
  unset STRATA_WISDOM_DIR
fi
# Four ranks (over NCCL on a machine of four): the faces of two cut axes at once, a corner's cells
# through the neighbour between; pencils along each pair of axes and 2D blocks, every kernel.
for k in $(kernels wave3d); do
  faces_ bricks 2x2x1 "$k" wave3d --nx 300 --ny 200 --nz 30 --steps 30 --source 0.5,0.33,0.05 \
    --receiver-line 0.02,0.02,0.05,0.98,0.6,0.05,9 --precision fp32  # (the domain is 1 x 0.67 x 0.1; the source at the corner of four)
done
for k in $(kernels heat3d); do
  faces_ bricks 2x1x2 "$k" heat3d --nx 600 --ny 40 --nz 40 --steps 12 --precision fp32
  faces_ bricks 1x2x2 "$k" heat3d --nx 70 --ny 160 --nz 40 --steps 12 --stencil 27pt --precision fp64
done
for k in $(kernels apf); do faces_ bricks 2x2 "$k" apf -n 600 -i 30 --precision fp32; done
faces_ yfacesmirror3d 1x2x1 temporal "$(dirname "$0")/stencils/mirror3d.stencil" --nx 40 --ny 150 --nz 20 --steps 12 \
  --precision fp32

# A restart from an HDF5 checkpoint, each rank reading its own cells (their halos from their owners
# at the first pass): 2 ranks write at step 15, 2 on another grid continue to 30 with the temporal
# kernel's deep halos and with async, each the bits of one process' uninterrupted run.
restart_() {  # NAME GRID1 GRID2 KERNEL ARGS... (ARGS without --steps)
  local name=$1 g1=$2 g2=$3 kernel=$4; shift 4
  [[ -n ${ONLY:-} && ",$ONLY," != *",$name,"* ]] && return
  holds "HDF5 *: yes, parallel" "$strata" info || { echo "skip $name: no parallel HDF5"; return; }
  local tag="$work/$name.$kernel"
  "$strata" run "$@" --steps 30 --backend cuda --kernel "$kernel" --quiet --checkpoint "$tag.1.chk" > "$tag.1.txt" 2>&1
  timeout 300 mpirun -np "$(ranks "$g1")" -x STRATA_SHARE_GPUS "${nvls[@]}" "$strata" run "$@" --steps 15 --decomp "$g1" \
      --backend cuda --kernel "$kernel" --halos "$halos" --quiet --checkpoint "$tag.15.h5" > "$tag.a.txt" 2>&1 \
    && timeout 300 mpirun -np "$(ranks "$g2")" -x STRATA_SHARE_GPUS "${nvls[@]}" "$strata" run "$@" --steps 30 --decomp "$g2" \
      --backend cuda --kernel "$kernel" --halos "$halos" --quiet --restart "$tag.15.h5" --checkpoint "$tag.30.chk" > "$tag.b.txt" 2>&1 \
    && cmp -s "$tag.1.chk" "$tag.30.chk" \
    && { passed=$((passed + 1)); echo "ok   $name.$kernel: HDF5 restart $g1 -> $g2, each rank its own cells"; } \
    || fail "$name.$kernel: HDF5 restart $g1 -> $g2: $(grep -h -m1 error "$tag.a.txt" "$tag.b.txt") (or the state differs)"
}
restart_ restart 1x1x2 2x1x1 temporal heat3d -n 67 --precision fp32 --depth 4
restart_ restart 2x1x1 1x2x1 async heat3d -n 67 --precision fp64

# -k: the halos are not exchanged, and the state must then differ (the comparison sees it).
"$strata" run apf -n 300 -i 60 --backend cuda --kernel multi4 --quiet --checkpoint "$work/k1.chk" > /dev/null 2>&1
mpirun -np 2 -x STRATA_SHARE_GPUS "${nvls[@]}" "$strata" run apf -n 300 -i 60 -x 1 -y 2 -k --backend cuda --kernel multi4 --quiet \
  --checkpoint "$work/k2.chk" > /dev/null 2>&1
cmp -s "$work/k1.chk" "$work/k2.chk" && fail "apf -k on the GPU equals the communicating run (the comparison sees nothing)"

# One rank per GPU unless told: more ranks than GPUs is an error.
env -u STRATA_SHARE_GPUS mpirun -np $((gpus + 1)) "${nvls[@]}" "$strata" run heat3d -n 64 --steps 2 --backend cuda > "$work/share.txt" 2>&1
grep -q "ranks on this node but $gpus GPU" "$work/share.txt" && echo "ok   refused: $(grep -m1 error "$work/share.txt")" \
  || fail "more ranks than GPUs: $(grep -m1 error "$work/share.txt")"

# --halos nccl with ranks sharing a GPU: NCCL refuses (it takes one GPU per rank). One line naming
# the call and the rank, every rank out with an error, no hang. (NCCL between two GPUs needs a
# machine of two: scripts/gpu-check.sh mpi there runs the cases above with --halos nccl too.)
timeout 120 mpirun -np 2 -x STRATA_SHARE_GPUS "${nvls[@]}" "$strata" run heat3d -n 64 --steps 2 --backend cuda --halos nccl \
  > "$work/nccl.txt" 2>&1
rc=$?
if [ "$gpus" -lt 2 ]; then
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "ncclCommInitRank failed" "$work/nccl.txt" && [ "$(grep -c 'strata: error' "$work/nccl.txt")" -eq 1 ]; then
    echo "ok   refused: $(grep -m1 error "$work/nccl.txt")"
  else
    fail "--halos nccl on a shared GPU: exit $rc, $(grep -m1 -i error "$work/nccl.txt")"
  fi
fi

echo "$passed passed, $failures failures"
[ "$failures" -eq 0 ]
