// strata._strata: the engine seen from Python. Thin on purpose: strata/__init__.py builds the
// friendly classes (Apf, Heat2D, Heat3D, Wave3D) and their docstrings on top of these calls, and
// every decision (options, checks, engines, writers) stays in the C++ library the CLI uses.
//
// Arrays cross three ways: copies to and from NumPy (field, set_field), zero-copy views of the
// engine's live buffers as DLPack capsules and __cuda_array_interface__ (PyFieldView, which holds a
// reference to its Simulation so the memory outlives `del sim`), and device arrays of other
// libraries read through their own DLPack capsules (set_field_dlpack), without a host round trip.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlpack/dlpack.h>  // Debian's libdlpack-dev, or PyTorch's copy (python/CMakeLists.txt)

#include <csignal>
#include <sstream>

#include "strata/core/error.hpp"
#include "strata/core/interrupt.hpp"
#include "strata/run.hpp"
#include "strata/simulation.hpp"

namespace py = pybind11;
using namespace strata;

namespace {

// Python keywords to a model's Params: the value keeps its Python type (bool, int, float, str,
// a list of str or of numbers); the model's declarations convert and check it.
Params to_params(const py::dict& d) {
    Params p;
    for (const auto& [k, v] : d) {
        const std::string key = py::str(k);
        if (py::isinstance<py::bool_>(v)) p.set(key, v.cast<bool>());
        else if (py::isinstance<py::int_>(v)) p.set(key, v.cast<std::int64_t>());
        else if (py::isinstance<py::float_>(v)) p.set(key, v.cast<double>());
        else if (py::isinstance<py::str>(v)) p.set(key, v.cast<std::string>());
        else if (py::isinstance<py::sequence>(v)) {
            const auto seq = v.cast<py::sequence>();
            bool texts = seq.size() > 0;
            for (const auto& e : seq) texts = texts && py::isinstance<py::str>(e);
            if (texts) p.set(key, v.cast<std::vector<std::string>>());
            else p.set(key, v.cast<std::vector<double>>());
        } else {
            throw UsageError("option '" + key + "': a " + std::string(py::str(py::type::of(v).attr("__name__"))) +
                             " is not a value it takes");
        }
    }
    return p;
}

std::optional<Precision> to_precision(const std::optional<std::string>& s) {
    return s ? std::optional(parse_precision(*s)) : std::nullopt;
}

// The engine's field as a host or device array, by reference: DLPack's producer side.
class PyFieldView {
public:
    PyFieldView(py::object owner, const std::string& name, std::int64_t step, int dims, Precision p, void* data,
              int device, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides, Engine* engine)
        : owner_(std::move(owner)), name_(name), step_(step), dims_(dims), precision_(p), data_(data),
          device_(device), shape_(std::move(shape)), strides_(std::move(strides)), engine_(engine) {}

    // The consumer's stream waits for the engine's work so far (DLPack: None and 1 mean the
    // legacy default stream, 2 the per-thread one, anything else a cudaStream_t; -1: no wait).
    py::capsule dlpack(const py::object& stream) {
        if (device_ >= 0) {
            const std::intptr_t s = stream.is_none() ? 1 : stream.cast<std::intptr_t>();
            if (s != -1) engine_->signal_to(reinterpret_cast<void*>(s == 1 ? 0 : s));
        } else if (!stream.is_none()) {
            throw py::value_error("__dlpack__: a host array takes no stream");
        }
        struct Holder {
            DLManagedTensor tensor;
            std::vector<std::int64_t> shape, strides;
            py::object owner;
        };
        auto* h = new Holder{{}, shape_, strides_, owner_};
        DLTensor& t = h->tensor.dl_tensor;
        t.data = data_;
        t.device = {device_ >= 0 ? kDLCUDA : kDLCPU, device_ >= 0 ? device_ : 0};
        t.ndim = int(shape_.size());
        t.dtype = {std::uint8_t(precision_ == Precision::bf16 ? kDLBfloat : kDLFloat),
                   std::uint8_t(8 * bytes_of(precision_)), 1};
        t.shape = h->shape.data();
        t.strides = h->strides.data();
        t.byte_offset = 0;
        h->tensor.manager_ctx = h;
        h->tensor.deleter = [](DLManagedTensor* self) {
            py::gil_scoped_acquire gil;  // consumers may delete from any thread
            delete static_cast<Holder*>(self->manager_ctx);
        };
        // A capsule not consumed (renamed "used_dltensor" by its consumer) frees the tensor itself.
        return py::capsule(&h->tensor, "dltensor", [](PyObject* capsule) {
            if (PyCapsule_IsValid(capsule, "dltensor")) {
                auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
                t->deleter(t);
            }
        });
    }
    py::tuple dlpack_device() const {
        return py::make_tuple(int(device_ >= 0 ? kDLCUDA : kDLCPU), device_ >= 0 ? device_ : 0);
    }
    py::dict cuda_array_interface() {
        if (device_ < 0) throw py::attribute_error("a host field has no __cuda_array_interface__ (use __dlpack__)");
        if (precision_ == Precision::bf16)
            throw py::attribute_error(
                "the array interface has no bfloat16 (use __dlpack__: torch.from_dlpack)");
        engine_->signal_to(nullptr);  // ordered before the legacy default stream, which it names
        const std::int64_t bytes = bytes_of(precision_);
        py::list strides;
        for (std::int64_t s : strides_) strides.append(s * bytes);
        py::dict d;
        d["shape"] = py::tuple(py::cast(shape_));
        d["strides"] = py::tuple(strides);
        d["typestr"] = "<f" + std::to_string(bytes);
        d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(data_), false);
        d["version"] = 3;
        d["stream"] = 1;
        return d;
    }
    std::uintptr_t ptr() const { return reinterpret_cast<std::uintptr_t>(data_); }
    std::string repr() const {
        std::ostringstream s;
        s << "<strata field view '" << name_ << "' at step " << step_ << ", "
          << (device_ >= 0 ? "cuda:" + std::to_string(device_) : std::string("cpu")) << ", shape (";
        for (std::size_t i = 0; i < shape_.size(); ++i) s << (i ? ", " : "") << shape_[i];
        s << "), " << to_string(precision_) << '>';
        return s.str();
    }

    py::object owner_;  // the Simulation: the memory lives as long as a view of it
    std::string name_;
    std::int64_t step_;
    int dims_;
    Precision precision_;
    void* data_;
    int device_;
    std::vector<std::int64_t> shape_, strides_;  // outermost first (z, y, x), in elements
    Engine* engine_;
};

// Simulation(wisdom=...) and run(wisdom=...): `strata run`'s default, --no-wisdom, --tune.
RunOptions::Wisdom parse_wisdom(const std::string& w) {
    if (w == "use") return RunOptions::Wisdom::use;
    if (w == "ignore") return RunOptions::Wisdom::ignore;
    if (w == "tune") return RunOptions::Wisdom::tune;
    throw UsageError("wisdom must be \"use\", \"ignore\" or \"tune\" (got \"" + w + "\")");
}

// A Simulation with the Python-side conveniences: NumPy copies, views, and ordering with other
// libraries' device work once it has shared memory with them.
class PySimulation {
public:
    PySimulation(const std::string& model, const py::dict& params, const std::optional<std::string>& precision,
                 const std::string& backend, const std::string& kernel, bool graphs, int chunk, int depth,
                 const std::string& wisdom, const std::string& restart, const std::string& state_scale) {
        SimulationOptions o;
        o.model = model;
        o.params = to_params(params);
        o.precision = to_precision(precision);
        o.backend = parse_backend(backend);
        o.engine.kernel = kernel;
        o.engine.graphs = graphs;
        o.engine.chunk = chunk;
        o.engine.depth = depth;
        o.wisdom = parse_wisdom(wisdom);
        o.restart = restart;
        o.state_scale = state_scale;
        std::ostringstream warnings;
        {
            py::gil_scoped_release nogil;  // building the initial state of a large grid takes a while
            sim_ = std::make_unique<Simulation>(o, &warnings);
        }
        warnings_ = warnings.str();
    }

    Simulation& sim() { return *sim_; }

    // Ctrl-C: Python's handler only flags the signal; the pieces of a long advance ask for it.
    void advance(std::int64_t steps) {
        if (shared_) sim_->engine().wait_for(nullptr);  // after PyTorch's or CuPy's work on the fields
        bool interrupted = false;
        {
            py::gil_scoped_release nogil;
            sim_->advance(steps, [&] {
                py::gil_scoped_acquire gil;
                interrupted = PyErr_CheckSignals() != 0;
                return interrupted;
            });
        }
        if (interrupted) throw py::error_already_set();
    }

    // A field's interior as NumPy holds it: fp32 and fp64 as themselves, fp16 as NumPy's float16
    // (the stored bits), bf16 as float32 (NumPy has no bfloat16; every value converts exactly).
    // A field stored times a state scale comes as the model's values, divided by it (exact), and
    // fp16's then as float32: the model's values need not sit in fp16's range.
    template <class T>
    py::array field_as(const std::string& name) {
        HostField<T> u;
        {
            py::gil_scoped_release nogil;
            u = sim_->engine_as<T>().field(name);
        }
        const double unscale = sim_->problem().unscale(name);
        const Extent& e = u.extent;
        if constexpr (std::is_same_v<T, f16>)
            if (unscale == 1) {
                py::array a(py::dtype("float16"), shape(e));
                auto* out = static_cast<std::uint16_t*>(a.mutable_data());
                for (int k = 0; k < e.nz; ++k)
                    for (int j = 0; j < e.ny; ++j)
                        for (int i = 0; i < e.nx; ++i) *out++ = u.at(i, j, k).bits;
                return a;
            }
        using Out = compute_t<T>;
        py::array a(py::dtype::of<Out>(), shape(e));
        Out* out = static_cast<Out*>(a.mutable_data());
        for (int k = 0; k < e.nz; ++k)
            for (int j = 0; j < e.ny; ++j)
                for (int i = 0; i < e.nx; ++i) *out++ = Out(u.at(i, j, k)) * Out(unscale);
        return a;
    }
    py::array field(const std::string& name) {
        return with_precision(sim_->precision(),
                              [&]<class T>(std::type_identity<T>) { return field_as<T>(name); });
    }

    // At 16 bits the values are taken as float32 and rounded to the storage type (to nearest even),
    // after the state scale multiplies them (the model's values in, the stored ones kept).
    template <class T>
    void set_host_as(const std::string& name, const py::array& values) {
        using In = std::conditional_t<is_half_v<T>, float, T>;
        const auto a = py::array_t<In, py::array::c_style | py::array::forcecast>::ensure(values);
        if (!a) throw UsageError("set_field: the values are not an array of numbers");
        check_shape(name, std::vector<std::int64_t>(a.shape(), a.shape() + a.ndim()));
        const Extent e = sim_->problem().extent();
        TypedEngine<T>& engine = sim_->engine_as<T>();
        const In scale = In(1 / sim_->problem().unscale(name));
        py::gil_scoped_release nogil;
        if constexpr (!is_half_v<T>)
            if (scale == 1) return engine.copy_in(name, a.data(), e.nx, std::int64_t(e.nx) * e.ny);
        std::vector<T> rounded(std::size_t(a.size()));
        for (std::size_t i = 0; i < rounded.size(); ++i) rounded[i] = T(a.data()[i] * scale);
        engine.copy_in(name, rounded.data(), e.nx, std::int64_t(e.nx) * e.ny);
    }
    void set_host(const std::string& name, const py::array& values) {
        with_precision(sim_->precision(),
                       [&]<class T>(std::type_identity<T>) { set_host_as<T>(name, values); });
    }

    // A device array of another library, read through its DLPack capsule (from __dlpack__ with
    // stream 1: its work is ordered before the legacy default stream, which the engine waits for).
    void set_dlpack(const std::string& name, py::capsule capsule) {
        if (std::string(capsule.name()) != "dltensor")
            throw UsageError("set_field: not a DLPack capsule (or one already used)");
        auto* m = static_cast<DLManagedTensor*>(capsule.get_pointer());
        const DLTensor& t = m->dl_tensor;
        const Precision prec = sim_->precision();
        const int bits = 8 * bytes_of(prec);
        const int code = prec == Precision::bf16 ? kDLBfloat : kDLFloat;
        if (t.dtype.code != code || t.dtype.bits != bits || t.dtype.lanes != 1) {
            const char* type = prec == Precision::fp32   ? "float32 (.float())"
                               : prec == Precision::fp64 ? "float64 (.double())"
                               : prec == Precision::fp16 ? "float16 (.half())"
                                                         : "bfloat16 (.bfloat16())";
            throw UsageError(std::string("set_field: a device array must be ") + type +
                             " like the simulation: convert it first");
        }
        const int device = with_precision(
            prec, [&]<class T>(std::type_identity<T>) { return sim_->engine_as<T>().view(name).device; });
        if (device < 0 || t.device.device_type != kDLCUDA || t.device.device_id != device)
            throw UsageError("set_field: the device array is not on the simulation's GPU");
        std::vector<std::int64_t> shp(t.shape, t.shape + t.ndim), st(t.ndim);
        check_shape(name, shp);
        for (int d = t.ndim - 1, c = 1; d >= 0; --d) {  // no strides: C order
            st[d] = t.strides ? t.strides[d] : c;
            c *= int(shp[d]);
        }
        if (st.back() != 1) throw UsageError("set_field: the device array's x axis (the last) must be contiguous");
        const std::int64_t sy = t.ndim >= 2 ? st[t.ndim - 2] : 0, sz = t.ndim == 3 ? st[0] : 0;
        char* data = static_cast<char*>(t.data) + t.byte_offset;
        sim_->engine().wait_for(nullptr);
        with_precision(prec, [&]<class T>(std::type_identity<T>) {
            sim_->engine_as<T>().copy_in(name, reinterpret_cast<const T*>(data), sy, sz);
        });
        shared_ = true;
        capsule.set_name("used_dltensor");
        if (m->deleter) m->deleter(m);
    }

    PyFieldView view(py::object self, const std::string& name) {
        const Extent e = sim_->problem().extent();
        void* data = nullptr;
        int device = -1;
        std::int64_t sy = 0, sz = 0;
        with_precision(sim_->precision(), [&]<class T>(std::type_identity<T>) {
            const auto v = sim_->engine_as<T>().view(name);
            data = v.data, device = v.device, sy = v.stride_y, sz = v.stride_z;
        });
        shared_ = shared_ || device >= 0;
        std::vector<std::int64_t> strides = e.dims == 3 ? std::vector<std::int64_t>{sz, sy, 1}
                                                        : std::vector<std::int64_t>{sy, 1};
        return PyFieldView(std::move(self), name, sim_->step(), e.dims, sim_->precision(), data, device, shape(e),
                         std::move(strides), &sim_->engine());
    }

    py::array array(const std::string& name) {
        const std::vector<double> v = sim_->engine().values(name);
        const std::int64_t cols = sim_->problem().points().receivers.size();
        py::array_t<double> a(v.size());
        std::copy(v.begin(), v.end(), a.mutable_data());
        if (cols > 0 && name == "traces") return a.attr("reshape")(py::int_(-1), py::int_(cols));
        return a;
    }

    std::string warnings_;

private:
    std::vector<std::int64_t> shape(const Extent& e) const {
        if (e.dims == 3) return {e.nz, e.ny, e.nx};
        return {e.ny, e.nx};
    }
    void check_shape(const std::string& name, const std::vector<std::int64_t>& got) const {
        sim_->model().field_index(name);  // an unknown field is named as such, not as a shape
        const std::vector<std::int64_t> want = shape(sim_->problem().extent());
        if (got == want) return;
        auto text = [](const std::vector<std::int64_t>& s) {
            std::string t = "(";
            for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
            return t + (s.size() == 1 ? ",)" : ")");
        };
        throw UsageError("set_field: field '" + name + "' has shape " + text(want) + " (" +
                         (want.size() == 3 ? "z, y, x" : "y, x") + "), the values " + text(got));
    }

    std::unique_ptr<Simulation> sim_;
    bool shared_ = false;  // device memory shared with other libraries: order with their stream
};

py::object json_to_py(const nlohmann::json& j) {
    return py::module_::import("json").attr("loads")(j.dump());
}

}  // namespace

PYBIND11_MODULE(_strata, m) {
    m.doc() = "Strata's engine (the C++ library); use the `strata` package, which wraps it.";

    // The CLI's two kinds of failure: bad input (UsageError) and everything else.
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Interrupted& e) {
            PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
        } catch (const UsageError& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const Error& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        } catch (const std::bad_alloc&) {
            PyErr_SetString(PyExc_MemoryError, "out of host memory");
        }
    });

    m.def("version", [] { return std::string(STRATA_VERSION); });
    m.def("cuda_devices", &cuda_device_count, "CUDA devices this process can use (0 without a GPU or a CUDA build)");

    m.def("models", [] {
        py::list out;
        for (const ModelInfo* mi : models()) {
            py::dict d;
            d["name"] = mi->name;
            d["summary"] = mi->summary;
            d["help"] = mi->help;
            d["dims"] = mi->dims;
            d["precision"] = std::string(to_string(mi->precision));
            py::list fields;
            for (const FieldDecl& f : mi->fields) fields.append(std::string(f.name));
            d["fields"] = fields;
            py::list params;
            for (const ParamSpec& s : mi->params) {
                static const char* kinds[] = {"int", "float", "str", "list of str", "list of float", "bool"};
                params.append(py::dict(py::arg("key") = s.key, py::arg("flag") = s.flag,
                                       py::arg("kind") = kinds[int(s.kind)], py::arg("default") = s.fallback,
                                       py::arg("help") = s.help, py::arg("run_only") = s.run_only));
            }
            d["params"] = params;
            d["kernels"] = kernel_names(Backend::cuda, mi->name);
            out.append(d);
        }
        return out;
    });

    m.def(
        "run",
        [](const std::string& model, const py::dict& params, const py::dict& common) {
            RunOptions o(model, to_params(params));
            auto get = [&](const char* k) { return common.contains(k) ? py::object(common[k]) : py::none(); };
            if (auto v = get("precision"); !v.is_none()) o.precision = parse_precision(v.cast<std::string>());
            if (auto v = get("backend"); !v.is_none()) o.backend = parse_backend(v.cast<std::string>());
            if (auto v = get("kernel"); !v.is_none()) o.kernel = v.cast<std::string>();
            if (auto v = get("graphs"); !v.is_none()) o.graphs = v.cast<bool>();
            if (auto v = get("chunk"); !v.is_none()) o.chunk = v.cast<int>();
            if (auto v = get("depth"); !v.is_none()) o.depth = v.cast<int>();
            if (auto v = get("wisdom"); !v.is_none()) o.wisdom = parse_wisdom(v.cast<std::string>());
            if (auto v = get("json"); !v.is_none()) o.json_path = v.cast<std::string>();
            if (auto v = get("out"); !v.is_none()) o.io.out_dir = v.cast<std::string>();
            if (auto v = get("every"); !v.is_none()) o.io.snapshot_every = v.cast<std::int64_t>();
            if (auto v = get("snapshot_format"); !v.is_none()) o.io.snapshot_format = v.cast<std::string>();
            if (auto v = get("vti_compression"); !v.is_none()) o.io.vti_compression = v.cast<std::string>();
            if (auto v = get("writer_threads"); !v.is_none()) o.io.writer_threads = v.cast<int>();
            if (auto v = get("checkpoint"); !v.is_none()) o.io.checkpoint_path = v.cast<std::string>();
            if (auto v = get("checkpoint_every"); !v.is_none()) o.io.checkpoint_every = v.cast<std::int64_t>();
            if (auto v = get("restart"); !v.is_none()) o.io.restart_path = v.cast<std::string>();
            if (auto v = get("state_scale"); !v.is_none()) o.state_scale = py::str(v).cast<std::string>();
            std::ostringstream text;
            nlohmann::json report;
            {
                // The CLI's interruption while it runs: Ctrl-C stops after the steps in flight,
                // writes the checkpoint asked for, and raises KeyboardInterrupt.
                py::gil_scoped_release nogil;
                StopOnSignals stop;
                report = strata::run(o, text);
            }
            return py::make_tuple(json_to_py(report), text.str());
        },
        py::arg("model"), py::arg("params"), py::arg("common"));

    py::class_<PyFieldView>(m, "FieldView", R"(A zero-copy view of a field of a live simulation.

Pass it to torch.from_dlpack, cupy.from_dlpack or numpy.from_dlpack (host fields), or to any
consumer of __cuda_array_interface__. The view is of the field's values at the step it was taken
(`step`): the engine trades buffers as it steps, so take a new view after advance(). Writes made
through it before the next advance() are what that advance starts from. The view keeps its
simulation alive.)")
        // max_version: the capsule is DLPack 0.x's ("dltensor"), which the protocol lets a producer
        // return to a consumer that accepts 1.x. A copy or another device is not something a view gives.
        .def(
            "__dlpack__",
            [](PyFieldView& v, const py::object& stream, const py::object&, const py::object& dl_device,
               const py::object& copy) {
                if (!copy.is_none() && copy.cast<bool>())
                    throw py::buffer_error("a strata field view is zero-copy: copy it on the consumer's side");
                if (!dl_device.is_none() && !dl_device.equal(v.dlpack_device()))
                    throw py::buffer_error("a strata field view stays on its device");
                return v.dlpack(stream);
            },
            py::arg("stream") = py::none(), py::kw_only(), py::arg("max_version") = py::none(),
            py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
        .def("__dlpack_device__", &PyFieldView::dlpack_device)
        .def_property_readonly("__cuda_array_interface__", &PyFieldView::cuda_array_interface)
        .def_readonly("name", &PyFieldView::name_)
        .def_readonly("step", &PyFieldView::step_)
        .def_property_readonly("shape", [](const PyFieldView& v) { return py::tuple(py::cast(v.shape_)); })
        .def_property_readonly(
            "dtype",
            [](const PyFieldView& v) {
                // NumPy has no bfloat16: the view's dtype is then the name (DLPack says kDLBfloat).
                if (v.precision_ == Precision::bf16) return py::object(py::str("bfloat16"));
                const char* names[] = {"float32", "float64", "float16"};
                return py::object(py::module_::import("numpy").attr(names[int(v.precision_)]));
            })
        .def_property_readonly("ptr", &PyFieldView::ptr, "The address of the first interior cell")
        .def_property_readonly("device", [](const PyFieldView& v) { return v.device_; })
        .def("__repr__", &PyFieldView::repr);

    py::class_<PySimulation>(m, "Simulation")
        .def(py::init<const std::string&, const py::dict&, const std::optional<std::string>&, const std::string&,
                      const std::string&, bool, int, int, const std::string&, const std::string&,
                      const std::string&>(),
             py::arg("model"), py::arg("params"), py::arg("precision"), py::arg("backend"), py::arg("kernel"),
             py::arg("graphs"), py::arg("chunk"), py::arg("depth"), py::arg("wisdom"), py::arg("restart"),
             py::arg("state_scale"))
        .def_readonly("warnings", &PySimulation::warnings_)
        .def("advance", &PySimulation::advance)
        .def("field", &PySimulation::field)
        .def("set_field_host", &PySimulation::set_host)
        .def("set_field_dlpack", &PySimulation::set_dlpack)
        .def("view", [](py::object self, const std::string& name) { return self.cast<PySimulation&>().view(self, name); })
        .def("array", &PySimulation::array)
        .def("step", [](PySimulation& s) { return s.sim().step(); })
        .def("launch", [](PySimulation& s) { return s.sim().launch(); })
        .def("time", [](PySimulation& s) { return s.sim().time(); })
        .def("dt", [](PySimulation& s) { return s.sim().problem().dt(); })
        .def("steps", [](PySimulation& s) { return s.sim().problem().steps(); })
        .def("model", [](PySimulation& s) { return s.sim().model().name; })
        .def("precision", [](PySimulation& s) { return std::string(to_string(s.sim().precision())); })
        .def("state_scale", [](PySimulation& s) { return s.sim().state_scale(); })
        .def("backend", [](PySimulation& s) { return std::string(to_string(s.sim().backend())); })
        .def("shape", [](PySimulation& s) {
            const Extent e = s.sim().problem().extent();
            return e.dims == 3 ? py::tuple(py::make_tuple(e.nz, e.ny, e.nx)) : py::tuple(py::make_tuple(e.ny, e.nx));
        })
        .def("kernel_info", [](PySimulation& s) {
            const KernelInfo k = s.sim().engine().kernel_info();
            return py::dict(py::arg("name") = k.name, py::arg("depth") = k.depth,
                            py::arg("bytes_per_cell_update") = k.bytes_per_cell_update,
                            py::arg("flops_per_cell") = k.flops_per_cell,
                            py::arg("min_bytes_per_cell") = k.min_bytes_per_cell);
        })
        .def("observables", [](PySimulation& s) {
            Observables o;
            {
                py::gil_scoped_release nogil;
                o = s.sim().engine().observables();
            }
            py::dict d;
            for (const auto& [k, v] : o.all()) d[py::str(k)] = v;
            return d;
        })
        .def("arrays", [](PySimulation& s) { return s.sim().engine().arrays(); })
        .def("synchronize", [](PySimulation& s) {
            py::gil_scoped_release nogil;
            s.sim().engine().synchronize();
        })
        .def("snapshot",
             [](PySimulation& s, const std::string& dir, const std::string& format, const std::string& compression,
                const std::string& field) {
                 py::gil_scoped_release nogil;
                 return s.sim().snapshot(dir, format, compression, field);
             })
        .def("checkpoint", [](PySimulation& s, const std::string& path) {
            py::gil_scoped_release nogil;
            s.sim().checkpoint(path);
        });
}
