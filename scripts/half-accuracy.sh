#!/usr/bin/env bash
# What 16-bit storage keeps of each built-in model's accuracy (docs/precision.md quotes its output,
# saved in docs/runs/): the same problem on the CPU (omp) in fp64, fp32, fp16 and bf16. wave3d's
# traces against fp64's (relative L2, every receiver), apf's classic norms, heat's error against
# the exact solution. Usage: scripts/half-accuracy.sh [BUILD_DIR] (default build); system python3
# with NumPy for the traces.
set -euo pipefail
strata=$(cd "${1:-build}" && pwd)/strata
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
/usr/bin/env python3 - <<'PY'
import json
import numpy as np
def traces(p):
    j = json.load(open(f"w-{p}/traces.json"))
    return np.fromfile(f"w-{p}/traces.bin", dtype=np.dtype(j["dtype"])).astype(np.float64)
ref = traces("fp64")
for p in ("fp32", "fp16", "bf16"):
    print(f"{p} traces' relative L2 against fp64's: {np.linalg.norm(traces(p) - ref) / np.linalg.norm(ref):.2e}")
PY
