"""A Strata step between two PyTorch operations on the same GPU memory, with no copies:
PyTorch adds a heat source into the live field, Strata diffuses it, PyTorch measures the result.

    PYTHONPATH=build/python python3 examples/python/torch_interleave.py
"""
import torch

import strata

sim = strata.Heat3D(n=128, stencil="27pt", precision="fp32", backend="cuda")
for round in range(5):
    u = torch.from_dlpack(sim.device_field())  # the engine's buffer at this step: take it anew after advance
    u[60:68, 60:68, 60:68] += 1.0               # PyTorch writes into Strata's memory (its stream is waited for)
    sim.advance(20)                             # 20 steps of the 27-point stencil on that state
    u = torch.from_dlpack(sim.device_field())
    print(f"step {sim.step:4d}: total heat {u.sum().item():10.4f}, peak {u.max().item():.5f}, "
          f"same memory as Strata's: {u.data_ptr() == sim.device_field().ptr}")
