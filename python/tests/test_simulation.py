"""The Python bindings on the CPU backends: the same results as the CLI, bitwise; NumPy round
trips; zero-copy host views and their lifetime; errors as exceptions with the CLI's messages."""
import gc
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import strata

# Each model small, with the options that reach every part of it (wave3d: a source and receivers).
CASES = {
    "apf": (dict(n=40, iterations=30), ["-n", 40, "-i", 30]),
    "heat2d": (dict(n=33, steps=20), ["-n", 33, "--steps", 20]),
    "heat3d": (dict(n=17, steps=12, stencil="27pt"), ["-n", 17, "--steps", 12, "--stencil", "27pt"]),
    "wave3d": (dict(n=20, steps=15, receiver_line="0.1,0.5,0.5,0.9,0.5,0.5,4"),
               ["-n", 20, "--steps", 15, "--receiver-line", "0.1,0.5,0.5,0.9,0.5,0.5,4"]),
}
CLASSES = {"apf": strata.Apf, "heat2d": strata.Heat2D, "heat3d": strata.Heat3D, "wave3d": strata.Wave3D}


@pytest.mark.parametrize("backend", ["cpu", "omp"])
@pytest.mark.parametrize("model", sorted(CASES))
def test_advance_equals_the_cli_bitwise(model, backend, cli, tmp_path):
    params, flags = CASES[model]
    sim = CLASSES[model](backend=backend, **params)
    sim.advance(sim.steps)
    sim.checkpoint(tmp_path / "py.ck")
    cli("run", model, *flags, "--backend", backend, "--checkpoint", tmp_path / "cli.ck")
    assert (tmp_path / "py.ck").read_bytes() == (tmp_path / "cli.ck").read_bytes()


@pytest.mark.parametrize("model", sorted(CASES))
def test_run_returns_the_cli_json_report(model, cli, tmp_path):
    params, flags = CASES[model]
    report = strata.run(model, backend="omp", out=str(tmp_path / "py"), **params)
    cli("run", model, *flags, "--backend", "omp", "--out", tmp_path / "cli", "--json", tmp_path / "cli.json")
    expected = json.loads((tmp_path / "cli.json").read_text())
    timing = {"wall_s", "ms_per_step", "gcells_per_s", "gflops", "effective_gbs", "snapshot_wait_s",
              "snapshots", "percent_of_copy"}
    assert set(report) == set(expected)
    for key in set(report) - timing:
        if key == "files":  # where they went: --out differs
            assert [os.path.basename(f) for f in report[key]] == [os.path.basename(f) for f in expected[key]]
        else:
            assert report[key] == expected[key], key


def test_observables_are_the_reports(tmp_path):
    sim = strata.Apf(n=40, iterations=30)
    sim.advance(30)
    report = strata.run("apf", n=40, iterations=30)
    o = sim.observables()
    assert o["max_norm"] == report["max_norm"] and o["l2norm"] == report["l2norm"]


@pytest.mark.parametrize("precision,dtype", [("fp32", np.float32), ("fp64", np.float64)])
def test_numpy_round_trip(precision, dtype):
    sim = strata.Heat3D(n=9, precision=precision)
    rng = np.random.default_rng(7)
    values = rng.random(sim.shape).astype(dtype)
    sim.set_field(values)
    got = sim.field()
    assert got.dtype == dtype and got.shape == (9, 9, 9)
    assert np.array_equal(got, values)
    sim.set_field(values.astype(np.float64).tolist())  # anything NumPy converts
    assert np.array_equal(sim.field(), values)


# 16-bit storage: fp16 fields come back as NumPy's float16 (the stored bits), bf16 as float32 (NumPy
# has no bfloat16; exact); set_field rounds float32 values to the nearest 16-bit value.
@pytest.mark.parametrize("precision,dtype", [("fp16", np.float16), ("bf16", np.float32)])
def test_16_bit_fields_round_trip(precision, dtype):
    sim = strata.Heat3D(n=9, precision=precision)
    rng = np.random.default_rng(7)
    values = rng.random(sim.shape).astype(np.float32)
    sim.set_field(values)
    got = sim.field()
    assert got.dtype == dtype and got.shape == (9, 9, 9)
    if precision == "fp16":
        assert np.array_equal(got, values.astype(np.float16))
    ulp = 2.0**-10 if precision == "fp16" else 2.0**-7  # relative spacing below 1
    assert np.all(np.abs(got.astype(np.float64) - values) <= ulp / 2 + 1e-12)
    sim.set_field(got)  # a 16-bit state read back is taken exactly
    assert np.array_equal(sim.field(), got)
    sim.advance(3)
    assert np.all(np.isfinite(sim.field().astype(np.float32)))


# The state scale (docs/precision.md): an fp16 wave of a 40 km box (pressures ~1e-5, below fp16's
# normal range) is stored times 2^18; field() gives the model's values (float32: they need not fit
# fp16), set_field takes them, device_field() holds the stored ones; the same as the CLI's run.
def test_state_scale_gives_the_models_values(cli, tmp_path):
    opts = dict(n=24, steps=40, extent=40000.0, receiver_line="5000,20000,20000,35000,20000,20000,3",
                precision="fp16", backend="omp")
    sim = strata.Wave3D(**opts)
    assert sim.state_scale == 2.0**18  # h = 40000 / 23 m: 1 / (4 pi 10 h) = 4.6e-6
    sim.advance(40)
    p = sim.field("p")
    assert p.dtype == np.float32 and np.max(np.abs(p)) < 1e-3
    stored = np.from_dlpack(sim.device_field("p"))
    assert np.array_equal(stored.astype(np.float32), p * np.float32(2.0**18))
    sim.set_field(p, "p")  # the model's values in: stored times the scale again, exactly
    assert np.array_equal(sim.field("p"), p)
    plain = strata.Wave3D(state_scale="none", **opts)
    assert plain.state_scale == 1.0 and plain.field("p").dtype == np.float16
    report = strata.run("wave3d", json=str(tmp_path / "r.json"), out=str(tmp_path), **opts)
    assert report["state_scale"] == 2.0**18
    fresh = strata.Wave3D(**opts).advance(40)
    assert np.array_equal(fresh.traces(), sim.traces())
    with pytest.raises(ValueError, match="not linear"):
        strata.Apf(n=32, precision="fp16", state_scale=1024)


def test_set_field_is_what_the_next_step_starts_from(cli, tmp_path):
    a = strata.Heat2D(n=21)
    a.advance(5)
    b = strata.Heat2D(n=21)
    b.set_field(a.field())
    # heat2d's state is its one field: b continues exactly as a does.
    a.advance(3)
    b.advance(3)
    assert np.array_equal(a.field(), b.field())


def test_host_view_is_zero_copy_and_outlives_the_simulation():
    sim = strata.Heat2D(n=16)
    sim.advance(2)
    view = sim.device_field()
    assert view.__dlpack_device__() == (1, 0) and view.step == 2 and view.shape == (16, 16)
    a = np.from_dlpack(view)
    assert np.array_equal(a, sim.field())
    b = np.from_dlpack(sim.device_field())
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0] == view.ptr
    expected = a.copy()
    del sim, b
    gc.collect()
    assert np.array_equal(a, expected)  # the view keeps the engine, and its memory, alive


def test_restart_from_a_python_checkpoint_is_bitwise(tmp_path):
    straight = strata.Wave3D(n=18, steps=20)
    straight.advance(20)
    first = strata.Wave3D(n=18, steps=20)
    first.advance(8)
    first.checkpoint(tmp_path / "at8.ck")
    resumed = strata.Wave3D(n=18, steps=20, restart=str(tmp_path / "at8.ck"))
    assert resumed.step == 8
    resumed.advance(12)
    assert np.array_equal(resumed.field(), straight.field())


def test_traces_are_steps_by_receivers():
    sim = strata.Wave3D(n=20, steps=10, receiver_line="0.1,0.5,0.5,0.9,0.5,0.5,4")
    sim.advance(10)
    assert sim.traces().shape == (10, 4)


def test_snapshots_are_the_clis_files(tmp_path):
    sim = strata.Apf(n=40)
    first = sim.snapshot(tmp_path)
    sim.advance(10)
    second = sim.snapshot(tmp_path)
    names = [os.path.basename(f) for f in first + second]
    assert names == ["apf_000000.vti", "apf_000000.png", "apf.pvd", "apf_000010.vti", "apf_000010.png", "apf.pvd"]
    pvd = (tmp_path / "apf.pvd").read_text()
    assert "apf_000000.vti" in pvd and "apf_000010.vti" in pvd
    with pytest.raises(ValueError, match="one directory holds one series"):
        sim.snapshot(tmp_path, format="vti")


def test_hdf5_snapshots_and_checkpoints_read_in_h5py(tmp_path):
    h5py = pytest.importorskip("h5py")
    sim = strata.Heat3D(n=12)
    sim.advance(3)
    frame, xmf = sim.snapshot(tmp_path, format="h5")
    assert os.path.basename(frame) == "heat3d_000003.h5" and os.path.basename(xmf) == "heat3d.xmf"
    with h5py.File(frame, "r") as f:
        assert np.array_equal(f["u"][...], sim.field("u")) and f.attrs["step"] == 3
    assert "heat3d_000003.h5:/u" in open(xmf).read()
    sim.checkpoint(str(tmp_path / "c.h5"))
    with h5py.File(tmp_path / "c.h5", "r") as f:
        assert f.attrs["model"] == b"heat3d" and f.attrs["step"] == 3
        assert np.array_equal(f["fields/u"][...], sim.field("u"))
    again = strata.Heat3D(n=12, restart=str(tmp_path / "c.h5"))
    assert again.step == 3 and np.array_equal(again.field("u"), sim.field("u"))


@pytest.mark.parametrize("make,message", [
    (lambda: strata.Heat3D(n=-3), "-n must be at least"),
    (lambda: strata.Heat3D(nn=3), "no parameter 'nn'"),
    (lambda: strata.Heat3D(stencil="9pt"), "9pt"),
    (lambda: strata.Heat3D(precision="fp8"), "fp8"),
    (lambda: strata.Heat3D(backend="tpu"), "tpu"),
    (lambda: strata.Heat3D(n={"a": 1}), "dict"),
    (lambda: strata.Simulation("nosuchmodel"), "nosuchmodel"),
    (lambda: strata.Heat3D(n=9).set_field(np.zeros((3, 3))), r"shape \(9, 9, 9\)"),
    (lambda: strata.Heat3D(n=9).set_field(np.zeros((9, 9, 9)), name="w"), "no field 'w'"),
    (lambda: strata.Heat3D(n=9).advance(-1), "negative"),
    (lambda: strata.Heat3D(n=9).field("w"), "no field 'w'"),
    (lambda: strata.Heat3D(n=9).snapshot("x", format="gif"), "gif"),
    (lambda: strata.run("heat3d", n=9, every=-1), "--every"),
    (lambda: strata.Heat3D(n=9, restart="/nonexistent.ck"), "nonexistent"),
    (lambda: strata.Apf(n=30, stats_every=10), "scheduled run"),
    (lambda: strata.Heat3D(n=9, wisdom="maybe"), "wisdom must be"),
    (lambda: strata.run("heat3d", n=9, wisdom="maybe"), "wisdom must be"),
])
def test_bad_input_is_a_value_error_with_the_cli_message(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_failures_are_runtime_errors(tmp_path):
    if strata.cuda_devices() == 0:
        with pytest.raises(RuntimeError, match="needs a GPU"):
            strata.Heat3D(n=9, backend="cuda")
    sim = strata.Heat3D(n=9)
    with pytest.raises(RuntimeError):
        sim.checkpoint(tmp_path / "no" / "such" / "dir" / "x.ck")


def test_a_checkpoint_never_replaces_a_folder_or_a_pipe(tmp_path):
    # Written beside its name and renamed over it: a folder, a device or a pipe there would be
    # replaced (as root, /dev/null itself), never written into. Refused, and left as it was.
    sim = strata.Heat3D(n=9)
    with pytest.raises(ValueError, match="is a folder"):
        sim.checkpoint(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        sim.checkpoint(fifo)
    assert fifo.is_fifo()
    with pytest.raises(ValueError, match="is a folder"):
        strata.Heat3D(n=9, restart=str(tmp_path))


def test_ctrl_c_interrupts_a_long_advance(tmp_path):
    script = textwrap.dedent("""
        import sys, strata
        sim = strata.Heat3D(n=48, backend="cpu")  # one thread: OpenMP threads spin-waiting on a loaded machine stretched a piece past 5 s
        print("ready", flush=True)
        try:
            sim.advance(10**9)
        except KeyboardInterrupt:
            print("interrupted at", sim.step, flush=True)
            sys.exit(3)
    """)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert p.returncode == 3, out
    assert time.monotonic() - t0 < 5
    assert int(out.split()[-1]) > 0


def test_help_teaches():
    doc = strata.Heat3D.__doc__
    assert "stencil" in doc and "7pt, 19pt or 27pt" in doc and "backend" in doc
    assert strata.Simulation.advance.__doc__ and strata.run.__doc__ and strata.FieldView.__doc__


def test_a_stencil_file_is_a_model():
    # Compiled at run time (or found in the cache) into a shared object that takes the library's
    # symbols from the module; the same results as the CLI's.
    path = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "stencils",
                                         "jacobi.stencil"))
    sim = strata.Simulation(path, n=20, steps=0)
    assert sim.model == "jacobi"
    s = sim.field("s")
    assert s.shape == (20, 20)
    assert s.sum() == 4.0  # the hot spot: 2 x 2 cells
    sim.advance(3)
    assert sim.observables()["max_u"] == 1.0
    report = strata.run(path, n=20, steps=3, backend="cpu")
    assert report["max_u"] == 1.0


def test_a_3d_stencil_file_with_a_coefficient():
    # A cells-only model (3D, radius 2, a coefficient of the position): the field's shape (z, y, x),
    # a NumPy state set and advanced, the same figures as the CLI's.
    path = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "stencils",
                                         "variable-wave.stencil"))
    sim = strata.Simulation(path, n=12, nz=9, steps=0)
    p = sim.field("p")
    assert p.shape == (9, 12, 12)
    sim.advance(4)
    report = strata.run(path, n=12, nz=9, steps=4, backend="cpu")
    assert sim.observables()["max_p"] == report["max_p"]
    assert sim.observables()["rms_q"] == report["rms_q"]


def test_strata_imported_first_leaves_numpy_whole():
    # The module is loaded RTLD_GLOBAL and exports libstrata's symbols alone (exports.map): NumPy,
    # imported after it, keeps its own C++ runtime; a stencil file still runs.
    path = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "stencils",
                                         "heat2d.stencil"))
    code = textwrap.dedent(f"""
        import strata, numpy, io, sys
        sim = strata.Simulation({path!r}, n=16, steps=0)
        sim.advance(2)
        print(numpy.asarray(sim.field()).shape, round(sim.observables()["max_u"], 6))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("(16, 16)")
