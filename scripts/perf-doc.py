#!/usr/bin/env python3
"""Writes docs/performance.md from the output of `scripts/gpu-check.sh` runs (their bench.txt).

Usage: scripts/perf-doc.py [--notes NOTES_MD] RUN_TXT... > docs/performance.md
Each RUN_TXT is named NN-COMMIT-MODE.txt (docs/runs/); with a single file of another name the
commit is HEAD's, or $BENCH_COMMIT's. Runs are read in the order of NN: a later run's row for a
command (kernel, depth, precision, launch) replaces an earlier one's. The targets table and the tables are read from the benchmarks'
output; the prose around them is NOTES_MD (docs/performance-notes.md by default), which quotes
only profiler readings.
"""
import math
import os
import re
import subprocess
import sys


HALF = ("fp16", "bf16")


def rows(text, command_prefix, half=False):
    """The table rows printed under the commands that start with command_prefix (a later one's
    replace an earlier one's); the 16-bit storage's rows only when `half` (the other tables are
    fp32 and fp64). Not those of a command with a --chunk of its own: a sweep of the launch's
    shape, whose rows the tables (keyed by kernel, depth, precision and launch) would mix up. Nor
    those measured on another GPU than the tables' (an H100): an H200's copy bandwidth is 40%
    higher, so its shares of the copy and its ratios against the tables' other rows mean
    something else (its runs stay in docs/runs and the notes quote them)."""
    out, on = {}, False
    for line in text.splitlines():
        if line.startswith("$ "):
            on = line[2:].startswith(command_prefix) and not re.search(r"--chunk [1-9]", line)
            continue
        if on and re.search(r", on NVIDIA (?!H100)", line):
            on = False
        f = line.split()
        if on and len(f) == 11 and re.match(r"^\d+$", f[1]) and (half or f[2] not in HALF):
            out[(f[0], int(f[1]), f[2], f[3])] = {"ms": float(f[4]), "gcells": float(f[5]), "pct": float(f[7].rstrip("%"))}
    return out


def benched(text, command_prefix):
    """Whether a run ran `strata bench COMMAND_PREFIX...` without a 16-bit precision (the runs the
    fp32 and fp64 tables, and the peers measured beside them, come from)."""
    return any(line.startswith("$ strata bench " + command_prefix) and not re.search(r"fp16|bf16", line)
               for line in text.splitlines())


def latest_rows(runs, command_prefix):
    """The rows printed under command_prefix, each from the last run that printed it (a run that
    benchmarks some kernels again replaces those rows and keeps the others')."""
    out = {}
    for _, text in runs:
        out.update(rows(text, command_prefix))
    return out


def half_rows(runs, model):
    """Every row of `strata bench MODEL ...` commands that measured a 16-bit precision, fp32's
    beside them included, each from the last run that printed it."""
    out = {}
    for _, text in runs:
        for block in re.split(r"(?m)^(?=\$ )", text):
            head = block.splitlines()[0] if block else ""
            if head.startswith("$ strata bench " + model + " ") and re.search(r"fp16|bf16", head):
                out.update(rows(block, head[2:], half=True))
    return out


def half_section(runs):
    """#41: the targets' lines and the table of the 16-bit rows, against fp32 and torch.compile's
    16-bit tensors measured in the same run (`anchors.py lowp`)."""
    targets, table = [], []
    peers = {}
    peer_line = (r"^(heat3d7|heat2d5|wave3d)(?: r=4)? n=\d+ (bfloat16|float16|float32) torch.compile +"
                 r"[\d.]+ ms/step +([\d.]+) GCells/s")
    for _, text in runs:
        for m in re.finditer(peer_line, text, re.M):
            peers[(m.group(1), m.group(2))] = float(m.group(3))

    def peer_beside(model, peer):  # torch.compile bf16 in the last run that benched the model at 16 bits too
        for _, text in reversed(runs):
            if re.search(r"(?m)^\$ strata bench " + re.escape(model) + r" .*(fp16|bf16)", text):
                for m in re.finditer(peer_line, text, re.M):
                    if m.group(1) == peer and m.group(2) == "bfloat16":
                        return float(m.group(3))
        return None
    models = [("heat3d 7pt 512³", "heat3d --stencil 7pt", "heat3d7"), ("heat3d 7pt 512³", "heat3d --precision", None),
              ("heat3d 27pt 512³", "heat3d --stencil 27pt", None), ("wave3d 512³", "wave3d", "wave3d"),
              ("heat2d 8192²", "heat2d", "heat2d5"), ("apf 8192²", "apf", None),
              # stencil files (#41: their 16-bit engines since f2a8332)
              ("heat7.stencil 512³", "examples/stencils/heat7.stencil", None),
              ("heat-box27.stencil 512³", "bench/stencils/heat-box27.stencil", None),
              ("gray-scott3d.stencil 384³", "bench/stencils/gray-scott3d.stencil", None),
              ("gray-scott.stencil 8192²", "examples/stencils/gray-scott.stencil", None),
              ("aniso9-2d.stencil 8192²", "bench/stencils/aniso9-2d.stencil", None),
              ("wave8.stencil 512³", "examples/stencils/wave8.stencil", None)]
    merged = {}
    for label, model, peer in models:
        merged.setdefault(label, [{}, None])
        merged[label][0].update(half_rows(runs, model))
        merged[label][1] = merged[label][1] or (peer_beside(model, peer) if peer else None)
    for label, (r, peer) in merged.items():
        if not any(k[2] in HALF for k in r):
            continue
        for prec in HALF:
            single = [(v["ms"], k, v) for k, v in r.items() if k[2] == prec and k[0] != "temporal"]
            single += [(v["ms"], k, v) for k, v in r.items() if k[2] == prec and k[0] == "temporal" and k[1] == 1]
            if single:
                ms, k, v = min(single)
                base = r.get((k[0], k[1], "fp32", k[3]))
                vs = f"{ratio(base['ms'] / ms)} its fp32 ({base['gcells']})" if base else "no fp32 row"
                tc = peer
                tcs = f"; {ratio(v['gcells'] / tc)} torch.compile bf16 ({tc}, the same run)" if tc else ""
                targets.append(f"| {label} {prec}, best single sweep | ≥ 1.8× the same kernel's fp32"
                               f"{', ≥ 1.5× torch.compile bf16' if tc else ''} | `{k[0]}`"
                               f"{' depth 1' if k[0] == 'temporal' else ''} {v['gcells']} GCells/s ({v['pct']}% of copy): "
                               f"{vs}{tcs} |")
            temporal = [(v["ms"], k, v) for k, v in r.items() if k[2] == prec and k[0] == "temporal" and k[1] > 1]
            t32 = [(v["ms"], k, v) for k, v in r.items() if k[2] == "fp32" and k[0] == "temporal" and k[1] > 1]
            if temporal and t32:
                ms, k, v = min(temporal)
                ms32, k32, v32 = min(t32)
                targets.append(f"| {label} {prec}, temporal | ≥ 1.5× fp32's temporal | {v['gcells']} at depth {k[1]}: "
                               f"{ratio(ms32 / ms)} fp32's {v32['gcells']} (depth {k32[1]}) |")
        for k, v in sorted(r.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
            base = r.get((k[0], k[1], "fp32", k[3]))
            x = ratio(base["ms"] / v["ms"]) if base and k[2] != "fp32" else "-"
            table.append(f"| {label} | `{k[0]}` | {k[1]} | {k[2]} | {v['gcells']} | {v['pct']}% | {x} |")
    if not table:
        return [], []
    peer_lines = [f"| {name} | {prec} | {g} |" for (name, prec), g in sorted(peers.items())]
    section = ["", "## 16-bit storage (fp16, bf16) against fp32", "",
               "`scripts/gpu-check.sh half` and the stop's last run: each kernel at fp32 and at 16 bits (fp32 "
               "arithmetic) in the same run; % of copy counts 2 bytes a value. docs/precision.md says what each "
               "model keeps of its accuracy.", "",
               "| model | kernel | depth | precision | GCells/s | % of copy | × fp32 |", "| --- | --- | --- | --- | --- | --- | --- |"]
    section += table
    if peer_lines:
        section += ["", "torch.compile in the same runs (`../shared/peers/anchors.py lowp`, GCells/s):", "",
                    "| peer | tensors | GCells/s |", "| --- | --- | --- |"] + peer_lines
    return targets, section


def paired_rows(runs, first, second):
    """The rows that `strata bench FIRST` and `strata bench SECOND` both printed in one run, each pair
    from the last run that measured it (a run that compares some kernels again replaces those), in
    the precisions that the last run to compare them measured (older pairs of another precision
    stay out: their kernels may have changed since)."""
    a_all, b_all, precisions = {}, {}, set()
    for _, text in runs:
        a, b = rows(text, "strata bench " + first), rows(text, "strata bench " + second)
        both = a.keys() & b.keys()
        for k in both:
            a_all[k], b_all[k] = a[k], b[k]
        if both:
            precisions = {k[2] for k in both}
    keep = [k for k in a_all if k[2] in precisions]
    return {k: a_all[k] for k in keep}, {k: b_all[k] for k in keep}


def ebisu(runs):
    """EBISU's rows from the last run that has them: {(prec, problem): (n, steps, ms, gcells)}, problem
    'own' (the sizes it picks for itself) or '8192' (8192² for 120 steps)."""
    out = {}
    for _, text in runs:
        found, lines = {}, text.splitlines()
        for i, line in enumerate(lines[:-1]):
            m = re.match(r"^== EBISU 2d5pt (--fp32|fp64) (at its own sizes|8192² 120 steps)", line)
            f = lines[i + 1].split()
            if m and len(f) >= 14:
                prec = "fp32" if m.group(1) == "--fp32" else "fp64"
                found[(prec, "own" if "own" in m.group(2) else "8192")] = (int(f[2]), int(f[4]), float(f[-2]), float(f[-1]))
        if found:
            out = found
    return out


def tune_rows(runs):
    """The tuner against the exhaustive sweep, from the last run that has both for a problem:
    {problem: dict}. The default, the tuner's choice and the best are read from the exhaustive
    sweep's final round, where they were measured in turn (like for like)."""
    out = {}
    for _, text in runs:
        for m in re.finditer(r"^\$ strata tune ([^\n]+?) --precision (fp\d\d)\n(.*?)(?=^\$ |\Z)", text, re.S | re.M):
            if "--exhaustive" in m.group(1):
                continue
            problem, prec, body = m.group(1), m.group(2), m.group(3)
            ex = re.search(r"^\$ strata tune " + re.escape(problem) + " --precision " + prec +
                           r" --exhaustive --no-save\n(.*?)(?=^\$ |\Z)", text[m.end():], re.S | re.M)
            t = re.search(r"best: (.+?), ([\d.]+) ms/step, .*\(tuning ([\d.]+) s\)", body)
            if not (ex and t):
                continue
            e = ex.group(1)
            b = re.search(r"best: (.+?), ([\d.]+) ms/step, .*\(tuning ([\d.]+) s\)", e)
            d = re.search(r"built-in default: (.+?), ([\d.]+) ms/step", e)
            w = re.search(r"the wisdom's choice: (.+?), ([\d.]+) ms/step: ([\d.]+)% from the best", e)
            if b and d and w:
                out[f"{problem} {prec}"] = {"default": (d.group(1), float(d.group(2))), "tuned": (w.group(1), float(w.group(2))),
                                            "best": (b.group(1), float(b.group(2))), "off": float(w.group(3)),
                                            "seconds": float(t.group(3)), "sweep_seconds": float(b.group(3))}
    return out


def run_order(path):
    m = re.match(r"^(\d+)-", os.path.basename(path))
    return int(m.group(1)) if m else 0


def run_commit(path):
    m = re.match(r"^(?:\d+-)?([0-9a-f]{7,40})-([\w-]+)\.txt$", os.path.basename(path))
    if m:
        return m.group(1), m.group(2)
    commit = subprocess.run(["git", "rev-parse", "--short", os.environ.get("BENCH_COMMIT", "HEAD")],
                            capture_output=True, text=True).stdout.strip()
    return commit, "all"


def ratio(x):
    """A speed-up to two decimals, rounded down: a ratio never reaches a target by rounding."""
    return f"{math.floor(x * 100) / 100:.2f}×"


def best(r, prec, exclude=("temporal",)):
    cands = [(v["ms"], k, v) for k, v in r.items() if k[2] == prec and k[0] not in exclude and k[3] == "graph"]
    return min(cands)


def run_blocks(text):
    """Each run a scaling mode printed: (command, row, GPUs, figures), the figures from the run's
    report: ms/step, the exposed shares of the wall time (the rank that waited most, least), the
    exposed seconds per step in µs, the busiest rank's halo MB per step."""
    for block in re.split(r"^(?=\$ )", text, flags=re.M):
        m = re.match(r"^\$ (.*?)   # (.*), (\d+) GPUs?$", block, re.M)
        t = re.search(r"^Time per step \(ms\) +: ([\d.]+)", block, re.M)
        if not m or not t:
            continue
        cmd = m.group(1)
        e = re.search(r"^Exposed communication \(s\) +: (\S+) +\(([\d.]+)% .*?, ([\d.]+)% ", block, re.M)
        steps = re.search(r"(?:--steps|-i) (\d+)", cmd)
        h = re.search(r"^Halos sent per step \(MB\) +: ([\d.]+)", block, re.M)
        # (the report says whether the halos travelled while the interior updated: a kernel without
        # spans of x and y is not overlapped across them even where --no-overlap was not given)
        overlapped = re.search(r"^\d+ ranks, .*sent while the interior updates", block, re.M) is not None
        yield cmd, m.group(2), int(m.group(3)), {
            "ms": float(t.group(1)), "exposed": e.groups()[1:] if e else None, "overlapped": overlapped,
            "exposed_us": float(e.group(1)) / int(steps.group(1)) * 1e6 if e and steps else None,
            "mb": float(h.group(1)) if h else None}


def scaling(runs):
    """The latest `scaling` run with the overlap's A/B: per row, the one-GPU run and each two-GPU
    variant (`serial`: --no-overlap, `overlap`, `none`: -k), the link's bandwidth, the peer's lines."""
    texts = [text for (_, mode), text in runs if mode == "scaling" and "--no-overlap" in text]
    if not texts:
        return None
    text = texts[-1]
    table = {}
    for cmd, row, n, r in run_blocks(text):
        if n <= 2:
            table.setdefault(row, {})["one" if n == 1 else "serial" if "--no-overlap" in cmd else "overlap"] = r
    link = re.search(r"^GPU 0 -> GPU 1 +: ([\d.]+) GB/s", text, re.M)
    k = re.search(r"-k --halos nccl +# strong apf, 2 GPUs, no exchange\n(?:.*\n)*?Time per step \(ms\) +: ([\d.]+)", text)
    peer = {v: float(s) for v, s in re.findall(r"== (nccl_graphs np=2, residual norm every 1000 steps|nccl_graphs np=2)\n"
                                                 r"(?:.*\n)*?.*2 GPUs: +([\d.]+) s", text)}
    machine = re.search(r"^\$ scripts/gpu-check.sh scaling +# (nvidia-h\d00)-x2,", text, re.M)  # the run's first line
    kind = machine.group(1)[len("nvidia-"):].upper() if machine else "GPU"
    return table, float(link.group(1)) if link else None, float(k.group(1)) if k else None, peer, kind


def cut(grid):
    """How a process grid cuts the domain: slabs (one axis), pencils (two of three), blocks (two of
    two), bricks (three)."""
    parts = [int(p) for p in grid.split("x")]
    axes = sum(p > 1 for p in parts)
    return {1: "slabs", 2: "blocks" if len(parts) == 2 else "pencils", 3: "bricks"}.get(axes, "one part")


def scaling_n(runs):
    """The latest `scaling4` run: per row, the run on one GPU and, per GPU count and process grid,
    the faster of the two schedules (before each pass, overlapped), its exposed communication and
    halos; the link's measured bandwidth and the machine."""
    texts = [text for (_, mode), text in runs if mode == "scaling4"]
    if not texts:
        return None
    text, table = texts[-1], {}
    for cmd, row, n, r in run_blocks(text):
        d, xy = re.search(r"--decomp (\S+)", cmd), re.search(r"-x (\d+) -y (\d+)", cmd)
        grid = d.group(1) if d else f"{xy.group(1)}x{xy.group(2)}" if xy else "1"
        r["schedule"] = "" if n == 1 else "overlap" if r["overlapped"] else "serial"
        cur = table.setdefault(row, {}).get((n, grid))
        if cur is None or r["ms"] < cur["ms"]:
            table[row][(n, grid)] = r
    link = re.search(r"^GPU 0 -> GPU 1 +: ([\d.]+) GB/s", text, re.M)
    machine = re.search(r"^\$ scripts/gpu-check.sh scaling4 +# nvidia-(h\d00)-x(\d)", text, re.M)
    kind = f"{machine.group(2)} {machine.group(1).upper()}s" if machine else "GPUs"
    # NVIDIA's multi-GPU Jacobi in the same run (jacobi4): per GPU count, its fastest variant's seconds
    jacobi = {}
    for variant, n, secs in re.findall(r"^== (nccl\w*) np=(\d)\n(?:.*\n)*?.*?(?<=, )\2 GPUs?: +([\d.]+) s", text, re.M):
        if int(n) not in jacobi or float(secs) < jacobi[int(n)][0]:
            jacobi[int(n)] = (float(secs), variant)
    return table, float(link.group(1)) if link else None, kind, jacobi


def main():
    args = sys.argv[1:]
    notes_path = "docs/performance-notes.md"
    if len(args) >= 2 and args[0] == "--notes":
        notes_path, args = args[1], args[2:]
    if not args:
        sys.exit("usage: perf-doc.py [--notes NOTES_MD] RUN_TXT...")
    every = [(run_commit(p), open(p).read()) for p in sorted(args, key=run_order)]
    # Not performance (compute-sanitizer's runs), or an experiment undone afterwards ("...-not-kept"):
    # quoted at the end, never the source of a table.
    runs = [r for r in every if r[0][1] != "sanitize" and not r[0][1].endswith("not-kept")]
    notes = open(notes_path).read()
    names = ", ".join(f"`{mode}` at {commit}" for (commit, mode), _ in every if mode != "sanitize")
    lines = ["# Performance", "",
             "Generated by `scripts/perf-doc.py` from the output of `scripts/gpu-check.sh` runs on the device",
             f"machine: {names}. Later runs replace the rows they repeat. The tables below are that",
             "output, unedited.", "",
             "## Against the targets", "", "| what | target | measured (from the tables below) |", "| --- | --- | --- |"]
    apf = latest_rows(runs, "strata bench apf --precision")
    for prec in ("fp32", "fp64"):
        ms, k, v = best(apf, prec)
        lines.append(f"| apf 8192² {prec}, best single sweep | ≥ 95% of copy | `{k[0]}` {v['pct']}% |")
    for st, goal in (("7pt", 95), ("19pt", 85), ("27pt", 85)):
        r = latest_rows(runs, f"strata bench heat3d --stencil {st}")
        for prec in ("fp32", "fp64"):
            ms, k, v = best(r, prec)
            lines.append(f"| heat3d {st} 512³ {prec}, best single sweep | ≥ {goal}% of copy | `{k[0]}` {v['pct']}% |")
    for st in ("7pt", "19pt", "27pt"):  # the TMA kernel (default chunk) against async and, for 7pt, cached
        r = latest_rows(runs, f"strata bench heat3d --stencil {st}")
        for prec in ("fp32", "fp64"):
            t, a = r.get(("tma", 1, prec, "graph")), r.get(("async", 1, prec, "graph"))
            c = r.get(("cached", 1, prec, "graph"))
            if t and a:
                goal = f"≥ `cached` ({c['pct']}%)" if st == "7pt" and c else "≥ 93% of copy"
                lines.append(f"| heat3d {st} 512³ {prec}, `tma` (TMA, warp-specialized) | {goal} | {t['pct']}% (`async` {a['pct']}%) |")
    small = latest_rows(runs, "strata bench apf -n 256")
    g, s = small[("naive", 1, "fp32", "graph")]["ms"], small[("naive", 1, "fp32", "stream")]["ms"]
    lines.append(f"| apf n=256, graph replay vs plain launches (naive) | ≥ 2× | {ratio(s / g)} ({s} → {g} ms/step) |")
    for prec, goal in (("fp32", 3), ("fp64", 2)):
        ms, k, v = best(apf, prec)
        t = min((v2["ms"], k2) for k2, v2 in apf.items() if k2[0] == "temporal" and k2[2] == prec)
        lines.append(f"| apf 8192² {prec}, temporal vs best single sweep | ≥ {goal}× | {ratio(ms / t[0])} at depth {t[1][1]} ({ms} → {t[0]} ms/step) |")
    heat7 = latest_rows(runs, "strata bench heat3d --stencil 7pt")
    for prec, goal in (("fp32", 2.5), ("fp64", 2)):
        ms, k, v = best(heat7, prec)
        t = min((v2["ms"], k2) for k2, v2 in heat7.items() if k2[0] == "temporal" and k2[2] == prec)
        lines.append(f"| heat3d 7pt 512³ {prec}, temporal vs best single sweep | ≥ {goal}× | {ratio(ms / t[0])} at depth {t[1][1]} ({ms} → {t[0]} ms/step) |")
    wave = latest_rows(runs, "strata bench wave3d")
    for prec in ("fp32", "fp64"):
        ms, k, v = best(wave, prec)
        lines.append(f"| wave3d 512³ {prec}, best strategy | ≥ 90% of copy (fp32) | `{k[0]}` {v['pct']}% |")
    for prec in ("fp32", "fp64"):  # #22: the TMA kernels against async, the same run
        t, ts, a = (wave.get((k, 1, prec, "graph")) for k in ("tma", "tmasync", "async"))
        if t and ts and a:
            lines.append(f"| wave3d 512³ {prec}, `tma` (TMA, warp-specialized) | ≥ 95% of copy | "
                         f"{t['pct']}% (`tmasync` {ts['pct']}%, `async` {a['pct']}%) |")
    peer = ebisu(runs)
    h120 = latest_rows(runs, "strata bench heat2d --steps 120")
    own = {"fp32": latest_rows(runs, "strata bench heat2d -n 8568 --steps 9"),
           "fp64": latest_rows(runs, "strata bench heat2d -n 8352 --steps 12")}
    for prec, goal in (("fp32", 800), ("fp64", 730)):
        t = min((v["ms"], k, v) for k, v in h120.items() if k[0] == "temporal" and k[2] == prec) if h120 else None
        if t and (prec, "8192") in peer:
            e = peer[(prec, "8192")][3]
            lines.append(f"| heat2d 8192² {prec}, 120 steps, temporal | ≥ {goal} GCells/s, ≥ 1.2× EBISU | "
                         f"{t[2]['gcells']} at depth {t[1][1]}: {ratio(t[2]['gcells'] / e)} EBISU's {e:.1f} |")
    for prec, size in (("fp32", "8568² × 9 steps"), ("fp64", "8352² × 12 steps")):
        r = own[prec]
        t = min((v["ms"], k, v) for k, v in r.items() if k[0] == "temporal" and k[2] == prec) if r else None
        if t and (prec, "own") in peer:
            e = peer[(prec, "own")][3]
            lines.append(f"| heat2d {size} {prec} (EBISU's own problem), temporal | > EBISU ({e:.1f} GCells/s) | "
                         f"{t[2]['gcells']} at depth {t[1][1]} ({ratio(t[2]['gcells'] / e)}) |")
    snap = [text for _, text in runs if "snapshot overhead:" in text][-1:]
    for m in re.finditer(r"snapshot overhead: apf n=4096, (fp\d\d).*?\n(\d+) frames.*?with snapshots +: +[\d.]+ steps/s +\(([\d.]+)%",
                         "".join(snap), re.S):
        lines.append(f"| apf 4096² {m.group(1)}, a snapshot every 100 steps, {m.group(2)} frames | ≥ 95% of the rate without "
                     f"| {m.group(3)}% |")
    io = [text for _, text in runs if "vti raw through the writers to disk:" in text][-1:]
    for m in re.finditer(r"disk, O_DIRECT \+ fsync +([\d.]+).*?vti raw, writers, to disk +([\d.]+).*?"
                         r"vti raw through the writers to disk: ([\d.]+)%", "".join(io), re.S):
        lines.append(f"| snapshot writers, raw .vti, synced to the disk (`strata-io`) | ≥ 80% of the disk's O_DIRECT "
                     f"rate | {m.group(3)}% ({m.group(2)} of {m.group(1)} GB/s) |")
    py = [text for _, text in runs if "Python ms/step" in text][-1:]
    for m in re.finditer(r"^(\w+ n=\d+ fp\d\d x\d+) +(\w+) +([\d.]+) +([\d.]+) +([+-][\d.]+)%$", "".join(py), re.M):
        lines.append(f"| Python `sim.advance(k)` vs the CLI, {m.group(1)} ({m.group(2)}) | within 1% | "
                     f"{m.group(5)}% ({m.group(3)} → {m.group(4)} ms/step) |")
    for m in re.finditer(r"per call ([\d.]+) us, of which overhead ([\d.-]+) us", "".join(py)):
        lines.append(f"| Python `advance(1)` overhead per call, heat3d 256³ | ≤ 10 µs | {m.group(2)} µs "
                     f"({m.group(1)} µs per call in all) |")
    tuned = tune_rows(runs)
    if tuned:
        worst = max(tuned.items(), key=lambda kv: kv[1]["off"])
        slow = max(tuned.items(), key=lambda kv: kv[1]["seconds"])
        lines.append(f"| `strata tune`: tuned within 2% of an exhaustive sweep ({len(tuned)} problems) | ≤ 2% | "
                     f"at most {worst[1]['off']}% ({worst[0]}) |")
        lines.append(f"| `strata tune`: tuning time per problem | ≤ 60 s | at most {slow[1]['seconds']} s ({slow[0]}) |")
        lines += ["", "## The autotuner against an exhaustive sweep", "",
                  "`scripts/gpu-check.sh tune-exhaustive`: each problem tuned (`strata tune`), then every candidate "
                  "measured (`strata tune --exhaustive`), whose final round measures the built-in default, the "
                  "tuner's choice (from the wisdom) and the sweep's best three in turn, seven times each: the "
                  "ms/step below are that round's medians.", "",
                  "| problem | built-in default | tuned | exhaustive best | tuned vs best | tuning | sweep |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for name, r in tuned.items():
            lines.append(f"| {name} | {r['default'][1]:.4f} (`{r['default'][0]}`) | {r['tuned'][1]:.4f} (`{r['tuned'][0]}`) | "
                         f"{r['best'][1]:.4f} (`{r['best'][0]}`) | +{r['off']}% | {r['seconds']} s | {r['sweep_seconds']} s |")
    # Stencil files (#18): each generated model against the built-in it restates, same run, and the
    # compile time and a cached run's model load.
    pairs = [("heat2d.stencil", "heat2d --precision fp32,fp64 --depth 4,8",
              "examples/stencils/heat2d.stencil --precision fp32,fp64 --depth 4,8"),
             ("apf.stencil", "apf --precision fp32,fp64 --depth 2,4",
              "examples/stencils/apf.stencil -n 8193 --precision fp32,fp64 --depth 2,4")]
    stencil_runs = [text for _, text in runs if benched(text, "examples/stencils/heat2d.stencil")][-1:]
    if stencil_runs:
        text = stencil_runs[0]
        table = []
        for name, builtin, generated in pairs:
            a, b = rows(text, "strata bench " + builtin), rows(text, "strata bench " + generated)
            common = [k for k in a if k in b]
            if not common:
                continue
            worst = max(abs(b[k]["ms"] / a[k]["ms"] - 1) for k in common)
            lines.append(f"| `{name}` against the built-in, every strategy (temporal included), 8192² | within 3% | "
                         f"at most {100 * worst:.1f}% ({len(common)} rows) |")
            for k in common:
                table.append(f"| {name} | `{k[0]}` | {k[1]} | {k[2]} | {a[k]['ms']:.4f} | {b[k]['ms']:.4f} | "
                             f"{100 * (b[k]['ms'] / a[k]['ms'] - 1):+.1f}% |")
        stencil_table = table
    else:
        stencil_table = []
    # The first run's compile and a cached run's model load: every file the last run that timed
    # them compiled (the flags and the machine change them; earlier runs are history, in the notes).
    for pattern, what in ((r"generated and compiled in ([\d.]+) s", "compile"), (r"from the cache in ([\d.e-]+) s", "load")):
        last = [[float(x) for x in re.findall(pattern, t)] for _, t in runs]
        last = [v for v in last if v][-1:]
        if not last:
            continue
        v = last[0]
        if what == "compile":
            spread = f"{len(v)} files, {min(v):.1f}-{max(v):.1f} s" if len(v) > 1 else "1 file"
            lines.append(f"| stencil file, first run's compile (generated model, every strategy, every precision) | "
                         f"≤ 10 s | {max(v):.1f} s at the most in the last run that timed it ({spread}) |")
        else:
            lines.append(f"| stencil file, a cached run's model load | ≤ 50 ms | {1000 * max(v):.1f} ms at the most "
                         f"({len(v)} cached run{'s' if len(v) > 1 else ''}) |")
    # 3D stencil files (#18): heat7 and wave8 against heat3d 7pt and wave3d, each strategy both
    # have from the last run that measured the two, and each one's best single sweep.
    for name, builtin, generated in [("heat7.stencil", "heat3d --stencil 7pt", "examples/stencils/heat7.stencil"),
                                     ("wave8.stencil", "wave3d", "examples/stencils/wave8.stencil")]:
        a, b = paired_rows(runs, builtin + " ", generated)
        common = [k for k in a if k in b]
        if common:  # the file's time over the built-in's, row by row: the slowest and the fastest
            ratios = [b[k]["ms"] / a[k]["ms"] - 1 for k in common]
            kernels = ", ".join(sorted({k[0] for k in common}))
            lines.append(f"| `{name}` against {builtin.split()[0]}, 512³, the strategies both have ({kernels}) | "
                         f"within 3% | from {100 * min(ratios):+.1f}% to {100 * max(ratios):+.1f}% ({len(common)} rows) |")
        for prec in ("fp32", "fp64"):
            if any(k[2] == prec for k in a) and any(k[2] == prec for k in b):
                _, ka, va = best(a, prec)
                _, kb, vb = best(b, prec)
                lines.append(f"| `{name}` 512³ {prec}, best single sweep against {builtin.split()[0]}'s | within 3% | "
                             f"`{kb[0]}` {vb['pct']}% of copy against `{ka[0]}` {va['pct']}% |")
    # Gray-Scott (#18): two fields read through neighbourhoods, against torch.compile in the same run.
    gs = latest_rows(runs, "strata bench examples/stencils/gray-scott.stencil")
    peer2 = r"grayscott n=8192 float torch.compile +[\d.]+ ms/step +([\d.]+) GCells/s"
    gs_text = [text for _, text in runs if "$ strata bench examples/stencils/gray-scott.stencil" in text
               and re.search(peer2, text)][-1:]  # the two in one run
    if gs:
        ms, k, v = best(gs, "fp32")
        lines.append(f"| Gray-Scott 8192² fp32 (gray-scott.stencil), best single sweep | ≥ 90% of copy | `{k[0]}` {v['pct']}% |")
        tc = re.search(peer2, "".join(gs_text))
        same = rows("".join(gs_text), "strata bench examples/stencils/gray-scott.stencil")
        top = max(((r["gcells"], k) for k, r in same.items() if k[2] == "fp32"), default=None)
        if tc and top:
            lines.append(f"| Gray-Scott 8192² fp32 against torch.compile (same run) | ≥ 1.5× | "
                         f"{ratio(top[0] / float(tc.group(1)))} (`{top[1][0]}` depth {top[1][1]}: {top[0]} against "
                         f"{tc.group(1)} GCells/s) |")
    # Any stencil at the built-ins' speed (#40): each kind of file the issue names (bench/stencils/,
    # the pairwise heat of tests/stencils/), its best single sweep (% of copy) and, where it has
    # one, its best temporal pass against that sweep; beside the built-in of its shape, the same run.
    # (The built-ins' rows are those `gpu-check.sh general` prints beside the files.)
    heat7, heat27 = "heat3d --stencil 7pt --precision fp32,fp64 --kernels cached", "heat3d --stencil 27pt --precision fp32,fp64 --kernels async"
    heat2 = "heat2d --precision fp32,fp64 --kernels multi4"
    files = [("3D heat `u + c * lap(u)` (heat-lap3d)", "bench/stencils/heat-lap3d.stencil", heat7, 2.0),
             ("3D heat, faces summed pairwise (pairs3d)", "tests/stencils/pairs3d.stencil", heat7, 2.0),
             ("3D 27-point box, one field (heat-box27)", "bench/stencils/heat-box27.stencil", heat27, 1.3),
             ("3D anisotropic diffusion and upwind advection, weights of params (upwind3d)",
              "tests/stencils/upwind3d.stencil", heat7, 2.0),
             ("2D 9-point box, one field (aniso9-2d)", "bench/stencils/aniso9-2d.stencil", heat2, 2.0),
             ("2D two fields, a coefficient, mirror (rd-coef2d)", "bench/stencils/rd-coef2d.stencil", heat2, 2.0),
             ("3D Gray-Scott, periodic, 384³ (gray-scott3d)", "bench/stencils/gray-scott3d.stencil", None, 2.0),
             ("3D Aliev-Panfilov, a pointwise field, mirror (apf3d)", "examples/stencils/apf3d.stencil", None, 2.0),
             ("3D radius-2 wave, a coefficient (variable-wave)", "examples/stencils/variable-wave.stencil", None, None)]
    for what, path, builtin, goal in files:
        r = latest_rows(runs, "strata bench " + path)
        same = [text for _, text in runs if benched(text, path)][-1:]  # the file's last run
        b = rows(same[0], "strata bench " + builtin) if builtin and same else {}
        for prec in ("fp32", "fp64"):
            if not any(k[2] == prec for k in r):
                continue
            ms, k, v = best(r, prec)
            near = ""
            if any(k2[2] == prec and k2[0] != "temporal" for k2 in b):
                _, kb, vb = best(b, prec)
                near = f" (the built-in: `{kb[0]}` {vb['pct']}%)"
            lines.append(f"| {what} {prec}, best single sweep | ≥ {90 if prec == 'fp32' else 93}% of copy"
                         f"{' (box: 88%)' if '27' in path else ''} | `{k[0]}` {v['pct']}%{near} |")
            t = [(v2["ms"], k2, v2) for k2, v2 in r.items() if k2[0] == "temporal" and k2[2] == prec]
            if t and goal:
                tm, tk, tv = min(t)
                bt = [(v2["ms"], k2, v2) for k2, v2 in b.items() if k2[0] == "temporal" and k2[2] == prec]
                beside = f"; the built-in's temporal {min(bt)[2]['gcells']}" if bt else ""
                lines.append(f"| {what} {prec}, temporal against its best single sweep | ≥ {goal}× | "
                             f"{ratio(ms / tm)} at depth {tk[1]} ({tv['gcells']} GCells/s{beside}) |")
    peer3 = r"grayscott3d n=384 float torch.compile +[\d.]+ ms/step +([\d.]+) GCells/s"
    gs3 = [text for _, text in runs if "$ strata bench bench/stencils/gray-scott3d.stencil" in text
           and re.search(peer3, text)][-1:]  # the two in one run
    tc3 = re.search(peer3, "".join(gs3))
    r3 = rows("".join(gs3), "strata bench bench/stencils/gray-scott3d.stencil")
    top3 = max(((v["gcells"], k) for k, v in r3.items() if k[2] == "fp32"), default=None)
    if tc3 and top3:
        lines.append(f"| 3D Gray-Scott 384³ fp32 against torch.compile (same run) | ≥ 1.5× | "
                     f"{ratio(top3[0] / float(tc3.group(1)))} (`{top3[1][0]}`: {top3[0]} against {tc3.group(1)} GCells/s) |")
    half_targets, half_table = half_section(runs)
    lines += half_targets
    # Runs over MPI ranks (#19): bitwise against one process, case by case (tests/mpi_runs*.sh).
    mpi = [text for _, text in runs if "== tests/mpi_runs_cuda.sh" in text][-1:]
    if mpi:
        cpu = mpi[0].split("== tests/mpi_runs_cuda.sh")[0]
        gpu = mpi[0].split("== tests/mpi_runs_cuda.sh")[1]
        lines.append(f"| runs over MPI ranks, bitwise against one process (CPU backends, 2-6 ranks; every CUDA "
                     f"strategy, ranks sharing one GPU) | all | {len(re.findall(r'^ok   (?!refused)', cpu, re.M))} CPU and "
                     f"{len(re.findall(r'^ok   (?!refused)', gpu, re.M))} CUDA cases ok, "
                     f"{len(re.findall(r'^FAIL', mpi[0], re.M))} failed |")
    nccl = [text for (_, mode), text in runs if mode.startswith("nccl-tests") or mode.startswith("overlap-tests")]
    if nccl:
        oks = sum(len(re.findall(r"^ok   (?!refused)", t, re.M)) for t in nccl)
        fails = sum(len(re.findall(r"^FAIL", t, re.M)) for t in nccl)
        lines.append(f"| runs over two GPUs (and four: the 2x2 and 2x1x2 cases) with the halos over NCCL (overlapped "
                     f"along every cut axis since 224f0e2, the temporal kernels along the slowest only), bitwise against one "
                     f"process | all | "
                     f"{oks} cases ok in {len(nccl)} runs, {fails} failed |")
    sc = scaling(runs)
    scaling_table = []
    if sc:
        table, link, apf_k, jacobi, kind_ = sc
        def best2(r):  # the faster of the two-GPU schedules
            return min((r[v]["ms"], v) for v in ("serial", "overlap") if v in r)
        for prefix, goal, kind in (("weak heat3d 7pt fp32", 0.95, "weak"),
                                   ("weak wave3d fp32", 0.95, "weak"), ("strong wave3d fp32", 1.85, "strong"),
                                   ("strong apf 16384^2 fp32 temporal", 1.9, "strong"),
                                   ("strong heat2d 20480^2 fp32, 1000 steps", 1.9, "strong")):
            row = next((name for name in table if name.startswith(prefix)), None)  # (the rows' notes changed)
            r = table.get(row)
            if not r or "one" not in r:
                continue
            ms2, v = best2(r)
            got = (f"{math.floor(r['one']['ms'] / ms2 * 1000) / 10:.1f}%" if kind == "weak" else ratio(r["one"]["ms"] / ms2))
            target = f"≥ {goal * 100:.0f}% efficiency" if kind == "weak" else f"≥ {goal}×"
            lines.append(f"| {row}, 2 {kind_}s against 1 (best schedule: {v}) | {target} | {got} ({r['one']['ms']} → {ms2} ms/step) |")
        h = table.get("strong heat2d 20480^2 fp32, 1000 steps")
        if h and jacobi:
            ms2, v = best2(h)
            mine = 20480 ** 2 / (ms2 * 1e-3) / 1e9
            for name, secs in sorted(jacobi.items()):
                theirs = 20480 ** 2 * 1000 / secs / 1e9
                lines.append(f"| heat2d 20480² fp32, 1000 steps, 2 GPUs, against NVIDIA's multi-GPU Jacobi ({name}, same "
                             f"run) | ≥ 3× | {ratio(mine / theirs)} ({mine:.0f} against {theirs:.0f} GCells/s) |")
        scaling_table = ["", "## Two GPUs against one", "",
                         f"`scripts/gpu-check.sh scaling` on `nvidia-{kind_.lower()}-x2` (2 {kind_}s, NVLink): "
                         "`strata run` on one GPU, then under `mpirun -np 2` with the halos over NCCL, first "
                         "before each pass (`--no-overlap`), then overlapped (the boundary slabs updated beside the interior "
                         "and sent while it updates); ms/step from each run's report (runs of 1-2 s, graph capture and start "
                         "included). Exposed: the share of the wall time a rank's kernels waited for its halos, on the "
                         "rank that waited most / least (their spread is the ranks' imbalance), and in brackets its "
                         "exposed seconds over the run's steps. Link: the halos' bytes "
                         f"at the device-to-device copy rate `strata-peer` measured in the same run ({link} GB/s one way).", "",
                         "| problem | 1 GPU | 2 GPUs, before each pass | exposed | 2 GPUs, overlapped | exposed | 1 GPU / 2 GPUs (best) | halos sent per step | at the link's rate |",
                         "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for row, r in table.items():
            if "one" not in r:
                continue
            s_, o_ = r.get("serial"), r.get("overlap")
            cell = lambda x: f"{x['ms']}" if x else "-"
            # the shares of the wall time, most / least, and the most rank's seconds per step
            exp = lambda x: (f"{x['exposed'][0]}% / {x['exposed'][1]}%" +
                             (f" ({x['exposed_us']:.1f} µs)" if x["exposed_us"] is not None else "")
                             if x and x["exposed"] else "-")
            ms2, _ = best2(r)
            mb = (s_ or o_)["mb"]
            scaling_table.append(f"| {row} | {r['one']['ms']} | {cell(s_)} | {exp(s_)} | {cell(o_)} | {exp(o_)} | "
                                 f"{ratio(r['one']['ms'] / ms2)} | {mb} MB | "
                                 f"{mb / link * 1e3:.1f} µs |" if mb and link else "| - |")
        if apf_k:
            scaling_table += ["", f"apf 16384² on two GPUs with `-k` (no exchange at all) runs {apf_k} ms/step: what the "
                              "ranks take by themselves; the rest of the two-GPU time is the exchange's (see the notes)."]
    sn = scaling_n(runs)
    four_table = []
    if sn:  # #24: 1, 2, 4 and, where a machine of 8 was lent, 8 GPUs; the goals are for 8
        table, link, kind, jacobi4 = sn
        out = ["", "## Four GPUs and more", "",
               f"`scripts/gpu-check.sh scaling4` on {kind} (NVLink): `strata run` on one GPU, then under `mpirun` on "
               "2, 4 and, on a machine of 8, 8 with the halos over NCCL, each process grid before each pass (`--no-overlap`) and overlapped; "
               "each cell is the faster schedule's ms/step, then the efficiency against one GPU (weak: the same cells "
               "per GPU) or the speed-up (strong). Exposed: the share of the wall time the rank that waited most "
               "waited for its halos, and its seconds over the run's steps. Halos: the busiest rank's bytes per step, "
               f"and the time they take at the device-to-device rate `strata-peer` measured in the run ({link} GB/s "
               "one way).", "",
               "| problem | GPUs | process grid | ms/step | against 1 GPU | schedule | exposed | halos per step | at the link's rate |",
               "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for row, r in table.items():
            one = r.get((1, "1"))
            if not one:
                continue
            weak = row.startswith("weak")
            most = max(n for n, _ in r)
            fastest = min((v["ms"], g) for (n, g), v in r.items() if n == most)
            for (n, grid), v in sorted(r.items()):
                vs = (f"{math.floor(one['ms'] / v['ms'] * 1000) / 10:.1f}%" if weak else ratio(one["ms"] / v["ms"]))
                exp = (f"{v['exposed'][0]}% ({v['exposed_us']:.1f} µs)" if v["exposed"] else "-")
                halo = f"{v['mb']} MB" if v["mb"] else "-"
                rate = f"{v['mb'] / link * 1e3:.1f} µs" if v["mb"] and link else "-"
                out.append(f"| {row} | {n} | {grid if n > 1 else '-'} {'(' + cut(grid) + ')' if n > 1 else ''} | "
                           f"{v['ms']} | {vs if n > 1 else '-'} | {v['schedule'] or '-'} | {exp} | {halo} | {rate} |")
            if most > 1:
                ms_, g_ = fastest
                v_ = r[(most, g_)]
                got = (f"{math.floor(one['ms'] / ms_ * 1000) / 10:.1f}%" if weak else ratio(one["ms"] / ms_))
                target = "≥ 90% efficiency at 8 GPUs" if weak else "≥ 6.5× on 8 GPUs"
                lent = "" if most >= 8 else "; 8 GPUs not lent"
                lines.append(f"| {row}, {most} GPUs against 1 (best: {g_} {cut(g_)}, {v_['schedule']}{lent}) | "
                             f"{target} | {got} ({one['ms']} → {ms_} ms/step) |")
            # #42's targets on 4 GPUs, every process grid: weak heat3d, wave3d and apf >= 95% with slabs and
            # with grids cut across x and y; strong wave3d 1024^3 >= 3.7x with either
            if row.startswith(("weak heat3d", "weak wave3d", "weak apf", "strong wave3d")):
                for (n, grid), v in sorted(r.items()):
                    if n != 4:
                        continue
                    got = (f"{math.floor(one['ms'] / v['ms'] * 1000) / 10:.1f}%" if weak else ratio(one["ms"] / v["ms"]))
                    exp = f", {v['exposed'][0]}% exposed" if v["exposed"] else ""
                    lines.append(f"| {row}, 4 GPUs, {grid} ({cut(grid)}, {v['schedule']}{exp}) | "
                                 f"{'≥ 95% efficiency' if weak else '≥ 3.7×'} | {got} ({one['ms']} → {v['ms']} ms/step) |")
        heat2d = next((r for row, r in table.items() if row.startswith("strong heat2d 20480^2")), None)
        if heat2d and jacobi4:
            out += ["", "NVIDIA's multi-GPU Jacobi (2D 5-point fp32, 20480², 1000 steps; `NPS=\"1 2 4\" ../shared/peers/mgpm-jacobi.sh`, "
                    "its fastest variant of `nccl`, `nccl_overlap` and `nccl_graphs` per GPU count) on the same GPUs in the same run, "
                    "beside heat2d's row above (the same update; Strata's temporal kernel, Jacobi's one step a sweep):", "",
                    "| GPUs | Jacobi (fastest variant) | Jacobi GCells/s | heat2d GCells/s (best grid) | heat2d / Jacobi |",
                    "| --- | --- | --- | --- | --- |"]
            for n, (secs, variant) in sorted(jacobi4.items()):
                mine = [v["ms"] for (k, _), v in heat2d.items() if k == n]
                if not mine:
                    continue
                g_mine, g_theirs = 20480 ** 2 / (min(mine) * 1e-3) / 1e9, 20480 ** 2 * 1000 / secs / 1e9
                out.append(f"| {n} | {variant}, {secs} s | {g_theirs:.0f} | {g_mine:.0f} | {ratio(g_mine / g_theirs)} |")
                if n == max(jacobi4):
                    lines.append(f"| heat2d 20480² fp32, 1000 steps, {n} GPUs, against NVIDIA's multi-GPU Jacobi ({variant} np={n}, "
                                 f"same run) | ≥ 3× | {ratio(g_mine / g_theirs)} ({g_mine:.0f} against {g_theirs:.0f} GCells/s) |")
        four_table = out
    lines += scaling_table + four_table + half_table
    if stencil_table:
        lines += ["", "## Stencil files against the built-in models", "",
                  "`scripts/gpu-check.sh stencil`: the model generated from each file and the built-in it restates, "
                  "benchmarked in the same run (ms/step, medians of 7 graphs of 64 passes); their results are "
                  "bitwise equal (tests).", "",
                  "| file | kernel | depth | precision | built-in | generated | generated vs built-in |",
                  "| --- | --- | --- | --- | --- | --- | --- |"] + stencil_table
    if peer:
        lines += ["", "## Peers measured in the same runs", "",
                  "EBISU (ICS'23), 2D 5-point, built and run by `../shared/peers/ebisu-2d.sh` on the same GPU as the "
                  "tables below (`scripts/gpu-check.sh ebisu`); GCells/s = n² × steps / its own timer.", "",
                  "| precision | problem | steps | ms | GCells/s |", "| --- | --- | --- | --- | --- |"]
        for (prec, problem), (n, steps, ms, g) in sorted(peer.items()):
            lines.append(f"| {prec} | {n}² ({'its own size' if problem == 'own' else 'the common size'}) | {steps} | {ms} | {g:.1f} |")
    lines += ["", notes.strip(), "", "## The benchmarks' output", ""]
    for (commit, mode), text in every:
        if mode == "sanitize":
            continue  # docs/runs keeps it; it measures nothing
        lines += [f"### `scripts/gpu-check.sh {mode}` at {commit}", "", "```", text.strip(), "```", ""]
    print("\n".join(lines))


main()
