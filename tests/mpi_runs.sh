#!/usr/bin/env bash
# Runs over several MPI ranks (CPU backends) against the same run on one: the checkpoints (every
# state field, bit for bit, and the traces), the traces and the snapshots must be the same files.
# Then the bad input: one line, the exit code, no hang.
# Usage: tests/mpi_runs.sh STRATA EXAMPLES_DIR  (ctest runs it with the label cpu)
source "$(dirname "$0")/mpi_common.sh" "$@"
export OMP_NUM_THREADS=1

# one NAME ARGS...: the run on one process, its checkpoint in $work/NAME.1.chk, its files in $work/NAME.1
one() {
  local name=$1; shift
  "$strata" run "$@" --quiet --out "$work/$name.1" --checkpoint "$work/$name.1.chk" > "$work/$name.1.txt" 2>&1 \
    || fail "$name on one process: $(tail -1 "$work/$name.1.txt")"
}
# split NAME GRID BACKEND ARGS...: the same run over the ranks of GRID, compared with one's
split() {
  local name=$1 grid=$2 backend=$3; shift 3
  local tag="$name.$grid.$backend" flag=(--decomp "$grid")
  [[ $name == apf* ]] && flag=(-x "${grid%x*}" -y "${grid#*x}")  # the classic flags
  timeout 120 mpirun -np "$(ranks "$grid")" "$strata" run "$@" "${flag[@]}" --backend "$backend" --quiet \
    --out "$work/$tag" --checkpoint "$work/$tag.chk" > "$work/$tag.txt" 2>&1 \
    || { fail "$tag: $(grep -m1 error "$work/$tag.txt")"; return; }
  grep -q "$(ranks "$grid") ranks, process grid $grid" "$work/$tag.txt" || fail "$tag: the report names no process grid"
  cmp -s "$work/$name.1.chk" "$work/$tag.chk" || fail "$tag: the state differs from one process'"
  for f in "$work/$name.1"/*; do
    [ -e "$f" ] || continue
    cmp -s "$f" "$work/$tag/$(basename "$f")" || fail "$tag: $(basename "$f") differs from one process'"
  done
  echo "ok   $tag"
}

# apf: the classic flags, uneven splits (201 points in 2, 3 and 4 parts), mirror boundaries.
one apf apf -n 200 -i 120 -s 40 --every 60
for g in 2x1 1x2 2x3 3x2 1x4 2x2; do split apf "$g" omp apf -n 200 -i 120 -s 40 --every 60; done
split apf 2x3 cpu apf -n 200 -i 120 -s 40 --every 60
grep -q "Max norm" "$work/apf.2x3.cpu.txt" && diff <(grep "Max norm" "$work/apf.1.txt") <(grep "Max norm" "$work/apf.2x3.cpu.txt") > /dev/null \
  || fail "apf over 2x3: the printed norms differ from one process'"

# The control: without the exchange (-k) the parts evolve apart, and the comparison must see it.
mpirun -np 2 "$strata" run apf -n 200 -i 120 -s 40 -x 1 -y 2 -k --quiet --out "$work/k" --checkpoint "$work/k.chk" \
  > "$work/k.txt" 2>&1 || fail "apf -k: $(grep -m1 error "$work/k.txt")"
grep -q "never exchanged" "$work/k.txt" || fail "apf -k: the report does not say the halos are not exchanged"
cmp -s "$work/apf.1.chk" "$work/k.chk" && fail "apf -k: the state equals the communicating run's (the comparison sees nothing)"
# The default --halos auto on CPU ranks: over MPI, and the report says so (with what it sent).
grep -q "halos over MPI every step" "$work/apf.1x2.omp.txt" || fail "apf 1x2: the report does not say the halos go over MPI"
grep -q "Halos sent per step" "$work/apf.1x2.omp.txt" && fail "apf 1x2 on the CPU: a halo byte count the CPU engine does not keep"

# 16-bit storage: the halos travel in 16 bits, and the ranks round as one process does.
one apf16 apf -n 200 -i 120 --precision fp16 --every 60
for g in 2x2 1x3; do split apf16 "$g" omp apf -n 200 -i 120 --precision fp16 --every 60; done
one heatbf heat3d -n 29 --steps 30 --stencil 27pt --precision bf16
split heatbf 2x1x2 omp heat3d -n 29 --steps 30 --stencil 27pt --precision bf16
# The state scale: an fp16 wave of a 40 km box stored times 2^17 (sources, traces, snapshots and
# the checkpoint's scale), every rank as one process.
wave16=(wave3d -n 33 --steps 40 --extent 40000 --precision fp16 --receiver-line 5000,20000,20000,35000,20000,20000,4 --every 20)
one wave16 "${wave16[@]}"
grep -q "state scale: 2^17" "$work/wave16.1.txt" || fail "wave16: the report names no state scale of 2^17"
split wave16 1x2x2 omp "${wave16[@]}"

# heat3d on a box (--nx --ny --nz: weak scaling's grids), split along z and along x.
one heatbox heat3d --nx 23 --ny 17 --nz 31 --steps 20
for g in 1x1x2 2x1x1; do split heatbox "$g" omp heat3d --nx 23 --ny 17 --nz 31 --steps 20; done

# heat3d: the 7-point star and the 19- and 27-point boxes (their corners cross two cuts).
for s in 7pt 19pt 27pt; do
  one heat$s heat3d -n 29 --steps 30 --stencil $s
  for g in 1x1x2 2x2x1 1x3x2 3x1x1; do split heat$s "$g" omp heat3d -n 29 --steps 30 --stencil $s; done
done

# wave3d: radius 4, fp32, sources on both sides of the 1x1x2 cut (k = 21 and 22) and receivers
# across every cut, snapshots.
wave=(wave3d --nx 40 --ny 36 --nz 44 --steps 50 --source 0.5,0.5,0.5385 --source 0.3,0.45,0.5641
      --receiver-line 0.1,0.1,0.1,0.85,0.85,0.85,17 --every 25)
one wave "${wave[@]}"
for g in 1x1x2 2x2x1 1x2x3 2x1x2; do split wave "$g" omp "${wave[@]}"; done

# A stencil file with a periodic boundary: a cut of two parts has the same neighbour both ways.
one periodic "$examples/heat-periodic.stencil" -n 45 --steps 40
for g in 1x2 2x1 3x2 2x2; do split periodic "$g" omp "$examples/heat-periodic.stencil" -n 45 --steps 40; done

# Two fields read through neighbourhoods (Gray-Scott, periodic).
one grayscott "$examples/gray-scott.stencil" -n 37 --steps 30
for g in 2x1 2x2; do split grayscott "$g" omp "$examples/gray-scott.stencil" -n 37 --steps 30; done

# Cells-only stencil files (tests/stencils): radius 2 with a box offset, fields at the cell, a
# coefficient of the position, periodic; the fixed boundary.
mixed="$(dirname "$0")/stencils/mixed3d.stencil" fixed="$(dirname "$0")/stencils/fixed3d.stencil"
one mixed "$mixed" -n 23 --steps 12
for g in 1x1x2 2x2x1 1x3x1; do split mixed "$g" omp "$mixed" -n 23 --steps 12; done
one fixed "$fixed" -n 21 --steps 10
for g in 1x1x2 2x1x2; do split fixed "$g" omp "$fixed" -n 21 --steps 10; done

# Restart on another number of ranks: 4, then 2, then 1, as the uninterrupted run.
w=(wave3d --nx 40 --ny 36 --nz 44 --source 0.5,0.5,0.5385 --receiver-line 0.1,0.1,0.1,0.85,0.85,0.85,17 --quiet)
"$strata" run "${w[@]}" --steps 60 --out "$work/r" --checkpoint "$work/r.full.chk" > /dev/null 2>&1
mpirun -np 4 "$strata" run "${w[@]}" --steps 20 --decomp 2x1x2 --out "$work/r4" --checkpoint "$work/r.20.chk" > /dev/null 2>&1 \
  && mpirun -np 2 "$strata" run "${w[@]}" --steps 40 --restart "$work/r.20.chk" --out "$work/r2" --checkpoint "$work/r.40.chk" > /dev/null 2>&1 \
  && "$strata" run "${w[@]}" --steps 60 --restart "$work/r.40.chk" --out "$work/r1" --checkpoint "$work/r.60.chk" > /dev/null 2>&1 \
  && cmp -s "$work/r.full.chk" "$work/r.60.chk" && cmp -s "$work/r/traces.bin" "$work/r1/traces.bin" \
  && echo "ok   restart 4 -> 2 -> 1 ranks" || fail "restart over 4, 2 then 1 ranks differs from the uninterrupted run"

# HDF5 checkpoints (FILE.h5), every rank writing its own part of one file at once: the same chain
# through HDF5 files (4 ranks write, 3 continue and write, one process continues), bitwise the
# uninterrupted run; and the file of 4 ranks holds, dataset by dataset and attribute by attribute,
# what one process writes (read by h5py, as a user would).
if holds "HDF5 *: yes, parallel" "$strata" info; then
  mpirun -np 4 "$strata" run "${w[@]}" --steps 20 --decomp 2x1x2 --out "$work/h4" --checkpoint "$work/h.20.h5" > "$work/h4.txt" 2>&1 \
    && mpirun -np 3 "$strata" run "${w[@]}" --steps 40 --decomp 1x3x1 --restart "$work/h.20.h5" --out "$work/h3" --checkpoint "$work/h.40.h5" > "$work/h3.txt" 2>&1 \
    && "$strata" run "${w[@]}" --steps 60 --restart "$work/h.40.h5" --out "$work/h1" --checkpoint "$work/h.60.chk" > /dev/null 2>&1 \
    && cmp -s "$work/r.full.chk" "$work/h.60.chk" && cmp -s "$work/r/traces.bin" "$work/h1/traces.bin" \
    && echo "ok   HDF5 checkpoints: 4 -> 3 -> 1 ranks" \
    || fail "HDF5 checkpoints over 4, 3 then 1 ranks: $(grep -h -m1 error "$work/h4.txt" "$work/h3.txt") (or the state differs)"
  "$strata" run "${w[@]}" --steps 20 --checkpoint "$work/h.20.one.h5" > /dev/null 2>&1
  # Snapshot frames in HDF5 (--snapshot-format h5): each frame one file that the ranks of 2x2 write
  # at once, and the XDMF series beside them, the same files as one process writes.
  "$strata" run apf -n 100 -i 60 --every 20 --snapshot-format h5 --out "$work/f1" --quiet > /dev/null 2>&1
  mpirun -np 4 "$strata" run apf -n 100 -i 60 -x 2 -y 2 --every 20 --snapshot-format h5 --out "$work/f4" --quiet \
      --json "$work/f4.json" > "$work/f4.txt" 2>&1 \
    && cmp -s "$work/f1/apf.xmf" "$work/f4/apf.xmf" && [ "$(ls "$work/f4"/apf_*.h5 | wc -l)" -eq 3 ] \
    && python3 -c "import json, sys; r = json.load(open(sys.argv[1])); assert r['h5_frames_written'] == 3 and len(r['h5_frame_field_mb_per_rank']) == 4, r" "$work/f4.json" \
    && echo "ok   HDF5 frames over 2x2 ranks and their XDMF series" || fail "HDF5 frames over 2x2 ranks: $(grep -m1 error "$work/f4.txt")"
  for py in python3 /usr/bin/python3; do
    if "$py" -c "import h5py" 2>/dev/null; then
      "$py" - "$work/h.20.h5" "$work/h.20.one.h5" <<'PY' && echo "ok   HDF5 checkpoint of 4 ranks equals one process' (h5py)" || fail "the HDF5 checkpoint of 4 ranks differs from one process'"
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
assert dict(a.attrs) == dict(b.attrs) and dict(a["params"].attrs) == dict(b["params"].attrs)
for g in ("fields", "arrays"):
    assert list(a[g]) == list(b[g]), (list(a[g]), list(b[g]))
    for k in a[g]:
        assert a[g][k].dtype == b[g][k].dtype and np.array_equal(a[g][k][...], b[g][k][...]), k
assert list(a["fields"]) == ["p", "prev"] and a["fields/p"].shape == (44, 36, 40) and a.attrs["step"] == 20
PY
      # The frames: each dataset the XDMF names is there, of its size, and equals one process' frame.
      "$py" - "$work/f4/apf.xmf" "$work/f1" <<'PY' && echo "ok   the XDMF series names the frames' datasets; frames of 2x2 ranks equal one process' (h5py)" || fail "HDF5 frames or their XDMF series"
import os, sys, xml.etree.ElementTree as ET, h5py, numpy as np
xmf, one = sys.argv[1], sys.argv[2]
items = [d for d in ET.parse(xmf).iter("DataItem") if d.get("Format") == "HDF"]
assert len(items) == 3
for d in items:
    file, name = d.text.split(":/")
    a = h5py.File(os.path.join(os.path.dirname(xmf), file), "r")[name]
    assert list(a.shape) == [int(v) for v in d.get("Dimensions").split()], (a.shape, d.get("Dimensions"))
    assert np.array_equal(a[...], h5py.File(os.path.join(one, file), "r")[name][...]), file
PY
      break
    fi
  done
  # What an HDF5 checkpoint of 4 ranks costs each in memory (VmHWM before the first, after the
  # last, in the JSON): its own part of the state and a buffer at most, 1.25 parts (heat3d 320^3
  # fp64: a part is 65.5 MB; measured 69.7 MB each. Strata's own format, gathered to rank 0, adds
  # 662 MB there, 2.5 times the whole state, and 133 MB on the others: their parts sent).
  # (Not under AddressSanitizer, whose allocator keeps freed memory in quarantine: 5 parts there.)
  if holds libasan ldd "$strata"; then
    echo "skip checkpoint memory: this strata is built with AddressSanitizer"
  else
  mpirun -np 4 "$strata" run heat3d -n 320 --steps 2 --precision fp64 --decomp 2x2x1 --checkpoint "$work/m.h5" \
    --out "$work/m" --quiet --json "$work/m.json" > "$work/m.txt" 2>&1
  python3 - "$work/m.json" <<'PY' && echo "ok   an HDF5 checkpoint of 4 ranks adds at most 1.25 parts to any rank's peak resident set" || fail "checkpoint memory: $(grep -m1 -E "error|Checkpoint memory" "$work/m.txt")"
import json, sys
r = json.load(open(sys.argv[1]))
b, a, p = (r[k] for k in ("checkpoint_vmhwm_before_mb_per_rank", "checkpoint_vmhwm_after_mb_per_rank", "checkpoint_field_mb_per_rank"))
assert len(b) == len(a) == len(p) == 4, (b, a, p)
for i in range(4):
    assert abs(p[i] - 320**3 * 8 / 4 / 1e6) < 1e-9, p
    assert a[i] - b[i] <= 1.25 * p[i], ("rank", i, a[i] - b[i], p[i])
print("  rank growth (MB):", [round(a[i] - b[i], 1) for i in range(4)], "parts of", p[0], "MB")
PY
  fi
  # A checkpoint whose rename fails on rank 0 alone (its name became a folder once the run had
  # started: a folder there at the start is refused then): every rank ends with the error, within
  # the timeout, one line from rank 0 (every rank met it: SharedError), and no temporary file is left.
  timeout 120 mpirun -np 2 "$strata" run heat3d -n 20 --steps 300000 --checkpoint "$work/taken.h5" --out "$work/t" \
    --quiet > "$work/taken.txt" 2>&1 &
  for _ in $(seq 600); do grep -q "backend" "$work/taken.txt" 2>/dev/null && break; sleep 0.1; done
  mkdir -p "$work/taken.h5/x"
  wait $!
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$(grep -c "cannot rename.*Is a directory" "$work/taken.txt")" -eq 1 ] \
     && [ "$(grep -o "strata: error" "$work/taken.txt" | wc -l)" -eq 1 ] \
     && [ ! -e "$work/taken.h5.tmp" ]; then
    echo "ok   a failed rename on rank 0: $(grep -m1 error "$work/taken.txt")"
  else
    fail "a failed rename on rank 0: exit $rc, $(grep -m1 error "$work/taken.txt"), temporary file $(ls "$work/taken.h5.tmp" 2>&1)"
  fi
else
  echo "skip HDF5 checkpoints: $("$strata" info | grep HDF5)"
fi

# Bad input: one line from rank 0 alone, the usage exit code (2), within the timeout.
refuse() {
  local want=$1; shift
  timeout 60 "$@" > "$work/bad.txt" 2>&1
  local rc=$?
  local lines
  lines=$(grep -o "strata: error" "$work/bad.txt" | wc -l)  # (two ranks' lines may interleave on one)
  if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "$want" "$work/bad.txt"; then
    fail "'$*' gave exit $rc and $lines error lines (want 2 and 1 with '$want'): $(grep -m1 error "$work/bad.txt")"
  else
    echo "ok   refused: $(grep -m1 error "$work/bad.txt")"
  fi
}
refuse "has 6 parts but mpirun started 4 ranks" mpirun -np 4 "$strata" run apf -n 100 -i 5 -x 2 -y 3
refuse "thinner than the halo of 4 cells" mpirun -np 6 "$strata" run wave3d -n 20 --steps 2 --decomp 1x1x6
refuse "this run is one process: launch it with mpirun -np 4" "$strata" run apf -n 100 -i 5 -x 2 -y 2
refuse "names 2 axes" mpirun -np 2 "$strata" run heat3d -n 20 --steps 2 --decomp 2x1
refuse "only \`strata run\`" mpirun -np 2 "$strata" bench heat3d -n 20 --backend omp
refuse "\`strata run MODEL ... --tune\` under mpirun tunes over the ranks" mpirun -np 2 "$strata" tune heat3d -n 20
refuse "halos nccl moves device memory" mpirun -np 2 "$strata" run heat3d -n 20 --steps 2 --backend omp --halos nccl
refuse "cannot open" mpirun -np 3 "$strata" run apf -n 100 -i 5 -y 3 --json /proc/none/r.json  # rank 0 alone fails
refuse "is a folder: name a file" mpirun -np 2 "$strata" run heat3d -n 20 --steps 2 --checkpoint "$work"
# One rank whose part does not fit what its memory limit leaves (a job's ulimit -v, on rank 1 alone):
# the refusal, naming the rank, ends every rank before the first halo (Subdomain::all_built).
# (Not under AddressSanitizer, whose shadow memory no address-space limit fits.)
if holds libasan ldd "$strata"; then
  echo "skip a rank past its memory limit: this strata is built with AddressSanitizer"
else
  refuse "1.76 GB of host memory needed, .* available (try a smaller grid or fp32) (rank 1)" \
    mpirun -np 1 "$strata" run heat3d -n 600 --steps 2 --backend cpu \
    : -np 1 bash -c "ulimit -v 1700000; exec \"\$0\" run heat3d -n 600 --steps 2 --backend cpu" "$strata"
fi
# Ranks on one node share its memory (here what $STRATA_NODE_MEMORY says the node allows; elsewhere
# its free memory or its cgroup): parts of 1.59 GB fit a node of 2 GB one at a time, not together,
# and are refused before either is allocated; parts of 0.8 GB run.
refuse "1.59 GB of host memory needed, .* available (this rank's share: the node's memory is its 2 ranks'" \
  mpirun -np 2 -x STRATA_NODE_MEMORY=2G "$strata" run heat3d -n 580 --steps 1 --backend cpu --decomp 1x1x2
if mpirun -np 2 -x STRATA_NODE_MEMORY=2G "$strata" run heat3d -n 460 --steps 1 --backend cpu --decomp 1x1x2 --quiet \
     > "$work/share.txt" 2>&1; then
  echo "ok   ranks sharing a node of 2 GB: parts of 0.8 GB run"
else
  fail "parts of 0.8 GB on a node of 2 GB shared by 2 ranks: $(grep -m1 error "$work/share.txt")"
fi
# An HDF5 checkpoint in a folder no rank can write; a build whose HDF5 is serial (the GPU machine's)
# refuses it over ranks before it looks at the folder.
why="cannot write in '/proc/none'"
holds "HDF5 *: yes, parallel" "$strata" info || why="HDF5"
refuse "$why" mpirun -np 2 "$strata" run heat3d -n 20 --steps 2 --checkpoint /proc/none/c.h5

echo "$failures failures"
[ "$failures" -eq 0 ]
