#!/usr/bin/env python3
"""heat2d at 16 bits in NumPy: round to nearest (what strata does) against stochastic rounding.

Strata's heat2d (n = 127, 500 steps, dt at half the stability bound) in fp32 arithmetic with the
state stored in fp16 or bf16 after every step, rounded to nearest even or stochastically (up with
the probability of the distance from the value below). Round to nearest reproduces strata's
`--precision fp16|bf16` errors (docs/precision.md: 7.3e-2 and 7.4e-2); stochastic rounding is the
published remedy for low-precision diffusion (Croci and Giles, 2020), measured here before it is
built. Usage: python3 bench/half_rounding.py (NumPy only).
"""
import numpy as np

n, steps, kappa = 127, 500, 1.0
h = 1 / (n + 1)
dt = 0.5 * h * h / (4 * kappa)
c = kappa * dt / (h * h)
x = np.arange(1, n + 1) * h
u0 = np.outer(np.sin(np.pi * x), np.sin(np.pi * x))
exact = u0 * np.exp(-2 * np.pi**2 * kappa * steps * dt)
rng = np.random.default_rng(1)


def step(u):  # strata's order: u + c ((W + E) + (S + N) - 4u), in fp32
    p = np.pad(u, 1)
    return (u + np.float32(c) * ((p[:-2, 1:-1] + p[2:, 1:-1]) + (p[1:-1, :-2] + p[1:-1, 2:]) - 4 * u)).astype(np.float32)


def fp16_nearest(v):
    return v.astype(np.float16).astype(np.float32)


def fp16_stochastic(v):
    r = v.astype(np.float16).astype(np.float32)
    below = np.where(r <= v, r, np.nextafter(r.astype(np.float16), np.float16(-np.inf)).astype(np.float32))
    above = np.nextafter(below.astype(np.float16), np.float16(np.inf)).astype(np.float32)
    up = np.where(above > below, (v - below) / (above - below), 0)
    return np.where(rng.random(v.shape) < up, above, below)


def bf16_nearest(v):
    u = v.view(np.uint32).astype(np.uint64)
    return ((((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).astype(np.uint32)).view(np.float32)


def bf16_stochastic(v):
    u = v.view(np.uint32).astype(np.uint64)
    return ((((u + rng.integers(0, 1 << 16, v.shape, dtype=np.uint64)) >> 16) << 16).astype(np.uint32)).view(np.float32)


for name, rounding in [("fp32", lambda v: v), ("fp16 nearest", fp16_nearest), ("fp16 stochastic", fp16_stochastic),
                       ("bf16 nearest", bf16_nearest), ("bf16 stochastic", bf16_stochastic)]:
    u = rounding(u0.astype(np.float32))
    for _ in range(steps):
        u = rounding(step(u))
    print(f"{name:16s} max error against the exact solution {np.abs(u - exact).max():.2e}")
