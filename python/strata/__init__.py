"""Strata: stencil simulations at the hardware's limit, on CPUs and NVIDIA GPUs, from Python.

The same engines, strategies and writers as the `strata` command line, driven step by step::

    import strata, numpy as np
    sim = strata.Heat3D(n=128, stencil="7pt", precision="fp32", backend="cuda")
    sim.advance(100)                  # the CLI's engines and strategies (kernel=, depth=, chunk=)
    u = sim.field()                   # a NumPy copy of the interior, shape (nz, ny, nx)
    v = sim.device_field()            # zero-copy: torch.from_dlpack(v), cupy.from_dlpack(v)
    sim.set_field(u0)                 # NumPy, or a CuPy/PyTorch device array (no host round trip)
    sim.snapshot("frames")            # .vti + PNG, frames/heat3d.pvd, as `strata run --out`
    report = strata.run("apf", n=256, iterations=500)   # `strata run`, its JSON report as a dict

Models: Apf (Aliev-Panfilov, the classic `apf`), Heat2D, Heat3D, Wave3D; `strata.models()` lists
them with their options. Bad options raise ValueError with the CLI's message, failures
RuntimeError; Ctrl-C interrupts a long advance() (KeyboardInterrupt, the steps done stay done).
CUDA work runs on the engine's own stream; arrays shared with PyTorch or CuPy are ordered with
their default stream (the legacy one) on both sides.
"""

import os as _os
import sys as _sys

# The module holds libstrata: a stencil file's model, a shared object compiled at run time, takes
# the library's symbols from it, so it is loaded into the global namespace (RTLD_GLOBAL).
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_flags | _os.RTLD_GLOBAL)
try:
    from . import _strata
finally:
    _sys.setdlopenflags(_flags)

__version__ = _strata.version()
__all__ = ["Simulation", "run", "models", "cuda_devices", "FieldView"]

FieldView = _strata.FieldView
cuda_devices = _strata.cuda_devices

# The options every model takes (the rest are the model's own, as in `strata run MODEL --help`).
_ENGINE_OPTIONS = ("precision", "backend", "kernel", "graphs", "chunk", "depth", "wisdom", "restart",
                   "state_scale")
_RUN_OPTIONS = _ENGINE_OPTIONS + ("json", "out", "every", "snapshot_format", "vti_compression",
                                  "writer_threads", "checkpoint", "checkpoint_every")
_MODELS = {m["name"]: m for m in _strata.models()}


def _model_info(name):
    # A stencil file's model is registered when first used (under the file's stem).
    if name not in _MODELS:
        _MODELS.update({m["name"]: m for m in _strata.models()})
    return _MODELS[name]


def models():
    """The models this build has: a dict of name -> description (summary, help, dims, fields,
    params with their keys, kinds, defaults and help, CUDA kernels)."""
    return dict(_MODELS)


def run(model, *, verbose=False, **options):
    """Runs a model from start to report, as `strata run MODEL` does, and returns the report as a
    dict (the CLI's --json). Options are the model's (e.g. n=256, iterations=500 for apf) and the
    run's: precision, backend, kernel, graphs, chunk, depth, wisdom, state_scale, json, out, every,
    snapshot_format, vti_compression, writer_threads, checkpoint, checkpoint_every, restart. `verbose`: print the
    text report. Ctrl-C stops as in the CLI (after the steps in flight, writing the checkpoint
    asked for) and raises KeyboardInterrupt; a second Ctrl-C ends the process.

    >>> r = strata.run("heat3d", n=32, steps=10, backend="omp")
    >>> r["gcells_per_s"] > 0
    True
    """
    common = {k: options.pop(k) for k in list(options) if k in _RUN_OPTIONS}
    report, text = _strata.run(model, options, common)
    if verbose:
        print(text, end="")
    return report


class Simulation:
    """A model's state on one backend, advanced step by step.

    Simulation(model, *, precision=None, backend="cpu", kernel="", graphs=True, chunk=0,
               depth=0, wisdom="use", restart="", state_scale="auto", **params)

    model     "apf", "heat2d", "heat3d" or "wave3d" (or use the classes Apf, Heat2D, ...)
    precision "fp32" or "fp64" (default: the model's, fp64; wave3d fp32); "fp16" or "bf16" store
              16 bits and compute in fp32 (docs/precision.md says what each model keeps)
    backend   "cpu" (the reference), "omp" (OpenMP) or "cuda"
    kernel    the CUDA strategy (default: the best for the problem); `strata.models()[m]["kernels"]`
    graphs    CUDA: replay the time loop as captured graphs
    chunk     CUDA streaming kernels: rows (2D) or planes (3D) per block (0: the default)
    depth     CUDA temporal kernels: steps per pass over memory (0: the default)
    wisdom    CUDA without kernel/chunk/depth: "use" the device's wisdom (`strata tune`) when it
              has the problem, "ignore" it (the built-in defaults), or "tune" first when it has
              not (as `strata run --no-wisdom / --tune`); `launch` says which
    restart   a checkpoint (from checkpoint() or `strata run --checkpoint`) to continue from
    state_scale  store the state fields times a power of two (`--state-scale`): "auto" (fp16 runs
              of models linear in their state: their values near 1, in fp16's range), "none", or
              e.g. 1024 or "2^10"; field(), traces(), observables() and snapshots give the model's
              values, device_field() the stored ones (times `state_scale`)
    params    the model's options by key, e.g. n=256, stencil="27pt" (see help of the model class)
    """

    def __init__(self, model, *, precision=None, backend="cpu", kernel="", graphs=True, chunk=0,
                 depth=0, wisdom="use", restart="", state_scale="auto", **params):
        self._sim = _strata.Simulation(model, params, precision, backend, kernel, graphs, chunk,
                                       depth, wisdom, restart, str(state_scale))
        self._info = _model_info(self._sim.model())
        if self._sim.warnings:
            import warnings
            for line in self._sim.warnings.splitlines():
                warnings.warn(line, stacklevel=2)

    # What it is.
    @property
    def model(self):
        """The model's name."""
        return self._sim.model()

    @property
    def precision(self):
        """"fp32" or "fp64"."""
        return self._sim.precision()

    @property
    def state_scale(self):
        """What the state fields are stored times (1.0: as they are; see `state_scale=`)."""
        return self._sim.state_scale()

    @property
    def backend(self):
        """"cpu", "omp" or "cuda"."""
        return self._sim.backend()

    @property
    def shape(self):
        """The interior's shape, outermost axis first: (ny, nx) or (nz, ny, nx)."""
        return self._sim.shape()

    @property
    def fields(self):
        """The model's field names; the first is the default of field() and the others."""
        return list(self._info["fields"])

    @property
    def kernel(self):
        """The strategy that runs and its figures: name, depth (steps per pass), bytes per cell
        update, flops and minimum bytes per cell."""
        return self._sim.kernel_info()

    @property
    def launch(self):
        """Where the CUDA launch came from, as `strata run` reports it ("launch: from wisdom
        (FILE): temporal depth 4 chunk 171 graphs", "launch: the built-in defaults (...)",
        "launch: as given"); "" on the CPU backends."""
        return self._sim.launch()

    # Where it is.
    @property
    def step(self):
        """Steps from the model's t = 0 (a restart's included)."""
        return self._sim.step()

    @property
    def time(self):
        """Simulated time: step * dt."""
        return self._sim.time()

    @property
    def dt(self):
        """The time step."""
        return self._sim.dt()

    @property
    def steps(self):
        """The run's scheduled last step (what `strata run` would stop at)."""
        return self._sim.steps()

    def advance(self, steps=1):
        """Advances `steps` steps (queued on the GPU without waiting when short; a long advance
        checks for Ctrl-C about four times a second). Returns self."""
        self._sim.advance(int(steps))
        return self

    def synchronize(self):
        """Waits until the queued steps are done (timing from Python)."""
        self._sim.synchronize()

    def observables(self):
        """The model's figures of the current state, as its report states them (apf: Max norm
        and L2 norm; heat: error against the exact solution; wave3d: energy, max |p|)."""
        return self._sim.observables()

    # The data.
    def field(self, name=None):
        """A NumPy copy of a field's interior at the current step, shape `shape` (fp16 fields as
        float16, bf16 fields as float32: NumPy has no bfloat16), the model's values: with a state
        scale, divided by it (fp16 then as float32)."""
        return self._sim.field(name or self.fields[0])

    def device_field(self, name=None):
        """A zero-copy view of a field where the engine keeps it (GPU memory on cuda, host memory
        otherwise): pass it to torch.from_dlpack, cupy.from_dlpack or numpy.from_dlpack. It is
        the field at the current step; take a new one after advance(). It keeps the simulation
        alive. It holds the stored values: the model's times `state_scale`."""
        return self._sim.view(name or self.fields[0])

    def set_field(self, values, name=None):
        """Replaces a field's interior (shape `shape`) with `values`: a NumPy array or anything
        NumPy converts (copied), or on cuda a CuPy or PyTorch device array (copied on the GPU,
        after the work queued on its default stream). The boundary stays the model's."""
        name = name or self.fields[0]
        device = getattr(values, "__dlpack_device__", None)
        if device is not None and device()[0] == 2:  # kDLCUDA
            self._sim.set_field_dlpack(name, values.__dlpack__(stream=1))
        else:
            import numpy
            self._sim.set_field_host(name, numpy.asarray(values))

    def traces(self):
        """wave3d's receiver traces: shape (steps recorded, receivers), float64."""
        return self._sim.array("traces")

    def snapshot(self, directory, *, format="both", compression="none", field=None):
        """Writes a frame of `field` (default: the model's picture field) at the current step into
        `directory`, through the CLI's writers: MODEL_NNNNNN.vti and its PNG(s), and MODEL.pvd
        listing every .vti frame this simulation wrote there. format: "vti", "png", "both" or "h5"
        (MODEL_NNNNNN.h5 with the field as the dataset /FIELD, and MODEL.xmf, the XDMF series
        ParaView opens); compression: "none" or "zlib". Returns the files."""
        return self._sim.snapshot(str(directory), format, compression, field or "")

    def checkpoint(self, path):
        """Writes the whole state to `path` (restart with Simulation(..., restart=path) or
        `strata run ... --restart path`)."""
        self._sim.checkpoint(str(path))

    def __repr__(self):
        return (f"<strata.{type(self).__name__} {self.model} {self.shape} {self.precision} "
                f"{self.backend}/{self.kernel['name']} at step {self.step}>")


def _model_class(name, class_name):
    info = _MODELS[name]

    def __init__(self, **options):
        Simulation.__init__(self, name, **options)

    rows = "\n".join(f"    {p['key']:<14} {p['help']}" + (f" (default {p['default']})" if p["default"] else "")
                     + (" [strata.run only]" if p["run_only"] else "") for p in info["params"])
    doc = (f"{info['summary']}\n\n{class_name}(**options): a Simulation of `{name}`; its options are "
           f"Simulation's (precision, backend, kernel, graphs, chunk, depth, wisdom, restart, "
           f"state_scale) and these "
           f"(as `strata run {name}`'s flags):\n\n{rows}\n\n{info['help']}\n")
    return type(class_name, (Simulation,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


_CLASS_NAMES = {"apf": "Apf", "heat2d": "Heat2D", "heat3d": "Heat3D", "wave3d": "Wave3D"}
for _name in _MODELS:
    _class = _CLASS_NAMES.get(_name, _name.capitalize())
    globals()[_class] = _model_class(_name, _class)
    __all__.append(_class)
del _name, _class
