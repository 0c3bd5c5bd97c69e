"""What driving Strata from Python costs, against the CLI, in one run (docs/performance.md):
  1. the time per step of sim.advance(k) against `strata run`'s (its --json ms_per_step) on the
     same problems, strategy and step count, each the median of REPEATS runs;
  2. the per-call overhead of advance(1): a loop of 100 calls at n=256 against one advance(100).
Usage: PYTHONPATH=build/python python3 bench/python_overhead.py STRATA_BINARY"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import strata

cli = sys.argv[1]
REPEATS = 5
# (model, options, CLI flags): apf 8192^2 fp32 and heat3d 512^3 fp32, the problems.
PROBLEMS = [
    ("apf", dict(n=8192, iterations=2000, precision="fp32"), ["-n", 8192, "-i", 2000, "--precision", "fp32"]),
    ("heat3d", dict(n=512, steps=512, precision="fp32"), ["-n", 512, "--steps", 512, "--precision", "fp32"]),
]


def cli_ms_per_step(model, flags):
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "r.json")
        subprocess.run([cli, "run", model, *map(str, flags), "--backend", "cuda", "--quiet", "--json", report],
                       check=True, stdout=subprocess.DEVNULL)
        with open(report) as f:
            r = json.load(f)
    return r["ms_per_step"], r["kernel"]


def python_ms_per_step(model, options, steps):
    sim = strata.Simulation(model, backend="cuda", **options)
    sim.synchronize()
    t0 = time.perf_counter()
    sim.advance(steps)
    sim.synchronize()
    return (time.perf_counter() - t0) * 1e3 / steps, sim.kernel["name"]


print(f"{'problem':<28} {'kernel':<10} {'CLI ms/step':>12} {'Python ms/step':>15} {'Python/CLI':>11}")
for model, options, flags in PROBLEMS:
    steps = options.get("iterations", options.get("steps"))
    c, p = [], []
    for _ in range(REPEATS):  # interleaved, so drifts of clock or temperature touch both
        ms, kernel = cli_ms_per_step(model, flags)
        c.append(ms)
        ms, pkernel = python_ms_per_step(model, options, steps)
        p.append(ms)
        assert kernel == pkernel, (kernel, pkernel)
    cm, pm = statistics.median(c), statistics.median(p)
    label = f"{model} n={options['n']} {options['precision']} x{steps}"
    print(f"{label:<28} {kernel:<10} {cm:>12.4f} {pm:>15.4f} {100 * (pm / cm - 1):>+10.2f}%")

# Per call: 100 calls of advance(1) against one advance(100), the difference per call; with a
# kernel of one step per pass (`cached`), so that both do the same work on the GPU (a temporal
# kernel's advance(1) is a shallower, slower pass: a cost of the strategy, not of the call).
sim = strata.Heat3D(n=256, precision="fp32", backend="cuda", kernel="cached")
sim.advance(200)
sim.synchronize()
loop, block = [], []
for _ in range(REPEATS * 2):
    t0 = time.perf_counter()
    for _ in range(100):
        sim.advance(1)
    sim.synchronize()
    loop.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    sim.advance(100)
    sim.synchronize()
    block.append(time.perf_counter() - t0)
lm, bm = statistics.median(loop), statistics.median(block)
print(f"\nheat3d n=256 fp32 cached: 100 x advance(1) {lm * 1e3:.3f} ms, advance(100) {bm * 1e3:.3f} ms; "
      f"per call {lm * 1e4:.2f} us, of which overhead {(lm - bm) * 1e4:.2f} us")
