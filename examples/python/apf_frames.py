"""Aliev-Panfilov (the classic apf) from Python: advance in a loop, look at the state between
steps, and save matplotlib frames (skipped where matplotlib is missing).

    PYTHONPATH=build/python python3 examples/python/apf_frames.py [--backend cuda] [--out DIR]
"""
import argparse
import os

import numpy as np

import strata

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--backend", default="omp", help="cpu, omp or cuda (default omp)")
parser.add_argument("-n", type=int, default=256, help="mesh intervals (default 256)")
parser.add_argument("--frames", type=int, default=8)
parser.add_argument("--every", type=int, default=250, help="iterations between frames")
parser.add_argument("--out", default="apf-frames")
args = parser.parse_args()

sim = strata.Apf(n=args.n, backend=args.backend, precision="fp32")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: printing the norms only")
os.makedirs(args.out, exist_ok=True)

for frame in range(args.frames):
    e = sim.field("E")  # a NumPy copy; sim.device_field("E") is the zero-copy view
    norms = sim.observables()
    print(f"iteration {sim.step:6d}  t = {sim.time:8.3f}  max|E| = {norms['max_norm']:.6f}  "
          f"L2 = {norms['l2norm']:.6f}  excited: {np.mean(e > 0.5):6.1%}")
    if plt:
        fig, ax = plt.subplots(figsize=(4, 4))
        ax.imshow(e, origin="lower", vmin=0, vmax=1, cmap="viridis")
        ax.set_title(f"E at t = {sim.time:.1f}")
        ax.axis("off")
        fig.savefig(os.path.join(args.out, f"apf_{frame:03d}.png"), dpi=80, bbox_inches="tight")
        plt.close(fig)
    sim.advance(args.every)
