"""The Python bindings on the GPU (run on the device: ctest -L gpu, or scripts/gpu-check.sh python):
zero-copy really is zero-copy with PyTorch and CuPy, both directions, and CUDA results equal
the CLI's bitwise."""
import gc

import numpy as np
import pytest

import strata

pytestmark = pytest.mark.gpu

CASES = {
    "apf": (dict(n=64, iterations=40), ["-n", 64, "-i", 40]),
    "heat2d": (dict(n=65, steps=30), ["-n", 65, "--steps", 30]),
    "heat3d": (dict(n=33, steps=20, stencil="19pt"), ["-n", 33, "--steps", 20, "--stencil", "19pt"]),
    "wave3d": (dict(n=32, steps=25, receiver_line="0.1,0.5,0.5,0.9,0.5,0.5,4"),
               ["-n", 32, "--steps", 25, "--receiver-line", "0.1,0.5,0.5,0.9,0.5,0.5,4"]),
}


@pytest.mark.parametrize("precision", ["fp32", "fp64", "fp16", "bf16"])
@pytest.mark.parametrize("model", sorted(CASES))
def test_cuda_advance_equals_the_cli_bitwise(model, precision, gpu, cli, tmp_path):
    params, flags = CASES[model]
    sim = strata.Simulation(model, backend="cuda", precision=precision, **params)
    # In uneven pieces: the engine's graphs and single launches must give the same state.
    sim.advance(1).advance(sim.steps - 2).advance(1)
    sim.checkpoint(tmp_path / "py.ck")
    cli("run", model, *flags, "--backend", "cuda", "--precision", precision, "--kernel", sim.kernel["name"],
        "--checkpoint", tmp_path / "cli.ck")
    assert (tmp_path / "py.ck").read_bytes() == (tmp_path / "cli.ck").read_bytes()


def test_torch_view_is_the_engines_memory_both_ways(gpu):
    torch = pytest.importorskip("torch")
    sim = strata.Heat3D(n=40, precision="fp32", backend="cuda")
    twin = strata.Heat3D(n=40, precision="fp32", backend="cuda")
    sim.advance(3)
    twin.advance(3)
    view = sim.device_field()
    t = torch.from_dlpack(view)
    assert t.is_cuda and t.data_ptr() == view.ptr and t.shape == (40, 40, 40)
    assert np.array_equal(t.cpu().numpy(), sim.field())
    # A change made through PyTorch (on its stream) is what the next advance starts from.
    t.mul_(0.5)
    t[20, 20, 20] = 3.0
    changed = twin.field() * np.float32(0.5)
    changed[20, 20, 20] = 3.0
    twin.set_field(changed)
    sim.advance(2)
    twin.advance(2)
    assert np.array_equal(sim.field(), twin.field())
    # The view keeps the engine alive.
    expected = torch.from_dlpack(sim.device_field()).clone()
    t2 = torch.from_dlpack(sim.device_field())
    del sim, view
    gc.collect()
    torch.cuda.synchronize()
    assert torch.equal(t2, expected)


def test_set_field_from_torch_and_cupy_device_arrays(gpu):
    torch = pytest.importorskip("torch")
    cp = pytest.importorskip("cupy")
    sim = strata.Apf(n=63, precision="fp64", backend="cuda")
    values = torch.rand(sim.shape, dtype=torch.float64, device="cuda")
    sim.set_field(values)
    assert np.array_equal(sim.field(), values.cpu().numpy())
    # A strided (sliced) source: rows of a wider array.
    wide = torch.rand((64, 80), dtype=torch.float64, device="cuda")
    sim.set_field(wide[:, 3:67])
    assert np.array_equal(sim.field(), wide[:, 3:67].cpu().numpy())
    c = cp.random.random(sim.shape)
    sim.set_field(c, name="R")
    assert np.array_equal(sim.field("R"), cp.asnumpy(c))
    with pytest.raises(ValueError, match="float64"):
        sim.set_field(values.float())
    with pytest.raises(ValueError, match="contiguous"):
        sim.set_field(torch.rand((64, 64), dtype=torch.float64, device="cuda").t())


def test_cupy_reads_the_view_through_both_protocols(gpu):
    cp = pytest.importorskip("cupy")
    sim = strata.Heat2D(n=128, precision="fp32", backend="cuda")
    sim.advance(10)
    a = cp.from_dlpack(sim.device_field())
    b = cp.asarray(sim.device_field())  # __cuda_array_interface__
    assert a.data.ptr == b.data.ptr == sim.device_field().ptr
    assert np.array_equal(cp.asnumpy(b), sim.field())


def test_the_launch_comes_from_the_wisdom_as_in_the_cli(gpu, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_WISDOM_DIR", str(tmp_path))
    params = dict(n=24, steps=10, stencil="7pt", precision="fp32", backend="cuda")
    assert "no wisdom for 'heat3d stencil=7pt fp32 " in strata.Heat3D(**params).launch  # n=24's class: 23
    cli("tune", "heat3d", "-n", 24, "--stencil", "7pt", "--precision", "fp32", "--quiet")
    sim = strata.Heat3D(**params)
    assert sim.launch.startswith(f"launch: from wisdom ({tmp_path}")
    run = cli("run", "heat3d", "-n", 24, "--steps", 10, "--stencil", "7pt", "--precision", "fp32", "--backend", "cuda")
    assert sim.launch in run and sim.kernel["name"] in sim.launch
    assert strata.Heat3D(wisdom="ignore", **params).launch == "launch: the built-in defaults (--no-wisdom)"
    assert strata.Heat3D(kernel="naive", **params).launch == "launch: as given"
    assert strata.Heat3D(n=24, backend="cpu").launch == ""


# 16-bit storage: the view is the engine's 16-bit array (DLPack float16 / bfloat16) and a change
# made through it is what the next advance starts from; fp16 through CuPy's __cuda_array_interface__
# too (it has no bfloat16).
@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_16_bit_views_are_the_engines_memory(gpu, precision):
    torch = pytest.importorskip("torch")
    sim = strata.Heat3D(n=24, precision=precision, backend="cuda")
    twin = strata.Heat3D(n=24, precision=precision, backend="cuda")
    sim.advance(3)
    twin.advance(3)
    t = torch.from_dlpack(sim.device_field())
    assert t.is_cuda and t.dtype == (torch.float16 if precision == "fp16" else torch.bfloat16)
    assert np.array_equal(t.float().cpu().numpy(), sim.field().astype(np.float32))
    t.mul_(0.5)
    twin.set_field(twin.field().astype(np.float32) * np.float32(0.5))  # halving is exact at 16 bits
    sim.advance(2)
    twin.advance(2)
    assert np.array_equal(sim.field(), twin.field())
    if precision == "fp16":
        cp = pytest.importorskip("cupy")
        a = cp.asarray(sim.device_field())
        assert a.dtype == cp.float16 and np.array_equal(cp.asnumpy(a), sim.field())


def test_tune_and_wisdom_at_16_bits(gpu, cli, tmp_path, monkeypatch):
    monkeypatch.setenv("STRATA_WISDOM_DIR", str(tmp_path))
    cli("tune", "heat2d", "-n", 96, "--precision", "bf16", "--quiet")
    sim = strata.Heat2D(n=96, steps=10, precision="bf16", backend="cuda")
    assert sim.launch.startswith(f"launch: from wisdom ({tmp_path}")
