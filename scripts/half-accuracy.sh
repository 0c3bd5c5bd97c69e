#!/usr/bin/env bash
# What 16-bit storage keeps of each built-in model's accuracy (docs/precision.md quotes its output,
# saved in docs/runs/): the same problem on the CPU (omp) in fp64, fp32, fp16 and bf16. wave3d's
# traces against fp64's (relative L2, every receiver), apf's classic norms, heat's error against
# the exact solution, Gray-Scott's fields (gray-scott.stencil) against fp64's with a picture of
# each (PNG, GRAYSCOTT_PNG_DIR to keep them). Usage: scripts/half-accuracy.sh [BUILD_DIR] (default build); system python3
# with NumPy and h5py for the traces and fields.
set -euo pipefail
strata=$(cd "${1:-build}" && pwd)/strata
gs=$(cd "$(dirname "$0")/.." && pwd)/examples/stencils/gray-scott.stencil
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
precisions=(fp64 fp32 fp16 bf16)
echo "\$ strata run heat2d -n 127 --steps 500 --backend omp --precision P   # max error against the exact solution"
for p in "${precisions[@]}"; do echo "$p $("$strata" run heat2d -n 127 --steps 500 --backend omp --precision $p | grep 'Max error')"; done
echo "\$ strata run heat3d -n 48 --steps 200 --backend omp --precision P"
for p in "${precisions[@]}"; do echo "$p $("$strata" run heat3d -n 48 --steps 200 --backend omp --precision $p | grep 'Max error')"; done
echo "\$ strata run apf -n 256 -i 2000 --backend omp --precision P   # the classic norms"
for p in "${precisions[@]}"; do echo "$p $("$strata" run apf -n 256 -i 2000 --backend omp --precision $p | grep -E 'Max norm' | tail -1)"; done
echo "\$ strata run wave3d -n 96 --steps 300 --source 0.5,0.5,0.5,3000 --receiver-line 0.2,0.5,0.5,0.8,0.5,0.5,7 --backend omp --precision P"
for p in "${precisions[@]}"; do
  "$strata" run wave3d -n 96 --steps 300 --source 0.5,0.5,0.5,3000 --receiver-line 0.2,0.5,0.5,0.8,0.5,0.5,7 \
    --backend omp --precision $p --out "w-$p" > /dev/null
done
# The same wave in a 96 km box (h = 1 km: pressures ~1e-5, below fp16's normal range), at the state
# scale the run picks (auto: 2^17 in fp16, 1 otherwise) and stored as it is (none).
big=(wave3d -n 96 --steps 300 --extent 96000 --receiver-line 12000,48000,48000,84000,48000,48000,7 --backend omp)
echo "\$ strata run ${big[*]} --precision P --state-scale S"
for p in "${precisions[@]}"; do
  for s in auto none; do "$strata" run "${big[@]}" --precision $p --state-scale $s --out "b-$p-$s" > "b-$p-$s.txt"; done
done
grep -h "state scale" b-fp16-*.txt
echo "\$ strata run examples/stencils/gray-scott.stencil -n 256 --steps 4000 --backend omp --precision P --checkpoint gs-P.h5"
for p in "${precisions[@]}"; do
  "$strata" run "$gs" -n 256 --steps 4000 --backend omp --precision $p --checkpoint "gs-$p.h5" \
    --every 4000 --snapshot-format png --out "gs-$p" > /dev/null
  if [[ -n ${GRAYSCOTT_PNG_DIR:-} ]]; then mkdir -p "$GRAYSCOTT_PNG_DIR"; cp gs-$p/*4000*.png "$GRAYSCOTT_PNG_DIR/gray-scott-$p.png"; fi
done
/usr/bin/env python3 - <<'PY'
import h5py
import numpy as np
def fields(p):
    with h5py.File(f"gs-{p}.h5") as f:
        return {n: np.asarray(f["fields"][n], dtype=np.float64) for n in ("u", "v")}
ref = fields("fp64")
for p in ("fp32", "fp16", "bf16"):
    got = fields(p)
    errs = ", ".join(f"{n} {np.linalg.norm(got[n] - ref[n]) / np.linalg.norm(ref[n]):.2e}" for n in ("u", "v"))
    print(f"{p} Gray-Scott fields' relative L2 against fp64's after 4000 steps: {errs}")
PY
/usr/bin/env python3 - <<'PY'
import json
import numpy as np
def traces(p):
    j = json.load(open(f"w-{p}/traces.json"))
    return np.fromfile(f"w-{p}/traces.bin", dtype=np.dtype(j["dtype"])).astype(np.float64)
ref = traces("fp64")
for p in ("fp32", "fp16", "bf16"):
    print(f"{p} traces' relative L2 against fp64's: {np.linalg.norm(traces(p) - ref) / np.linalg.norm(ref):.2e}")
def big_traces(p, s):
    return np.fromfile(f"b-{p}-{s}/traces.bin", dtype=np.float32).astype(np.float64)
ref = big_traces("fp64", "none")
for p in ("fp32", "fp16", "bf16"):
    for s in ("auto", "none"):
        err = np.linalg.norm(big_traces(p, s) - ref) / np.linalg.norm(ref)
        print(f"{p} --state-scale {s}: the 96 km wave's traces' relative L2 against fp64's: {err:.2e}")
PY
