// The `_isthmus` extension module: init/destroy, the runtime state, constants, and the binders.
#include "bindings.hpp"
#include "qvalue/qvalue.hpp"

#include "isthmus/cuda.hpp"
#include "isthmus/ops/linalg.hpp"
#include "isthmus/version.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>
#include <string>
#include <utility>

namespace isthmus::pymod {

namespace {

// Note [init state]
// ~~~~~~~~~~~~~~~~~
// PyQuasar requires init() before anything else, and so do we: value constructors, module functions
// and qvalue methods that touch data check the state and raise RuntimeError naming init().
// Constants, the qvalue and qtype classes, metadata attributes (shape, dtype, ...), repr and
// unlock() stay usable, so that values made before destroy() can still be inspected and released.
// destroy() ends the runtime; init() may start it again (nothing process-wide is torn down: NumPy
// and the interpreter stay as they are). The state itself is the boundary's (boundary/session.hpp),
// which checks it for the exchanges.
using state = session_state;
std::mutex g_mu;
std::string g_device;
dtype g_precision = dtype::float32;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The device string, validated: "cpu", "cuda" (device 0) or "cuda:N"; anything else is a
// ValueError. Returns the normalised name and the CUDA device number (-1 for the CPU).
std::pair<std::string, int> parse_device(const std::string& given) {
    const std::optional<int> n = device_number(given);
    ISTHMUS_CHECK(n.has_value(), value_error, "init: unknown device \"", given,
                  "\"; expected \"cpu\", \"cuda\" or \"cuda:N\"");
    return {*n < 0 ? std::string("cpu") : "cuda:" + std::to_string(*n), *n};
}

// Note [init cuda]
// ~~~~~~~~~~~~~~~~
// init("cuda[:N]") loads the CUDA backend module and makes device N the default resource; on a
// machine without a driver or GPU it raises RuntimeError naming the cause (isthmus::cuda::init),
// and nothing changes: init("cpu") still works.
void check_device_available(int cuda_device, const std::string& given) {
    if (cuda_device >= 0 && !cuda::available())
        ISTHMUS_THROW(runtime_error, "init(device=\"", given,
                      "\"): CUDA is not available: ", cuda::unavailable_reason(),
                      "; use init(\"cpu\")");
}

void start_device(int cuda_device) {
    if (cuda_device < 0)
        set_default_resource(MEMRESOURCE_CPU);
    else
        cuda::init(cuda_device);
}

dtype parse_precision(py::handle precision) {
    if (py::isinstance<py::str>(precision)) {
        const std::string p = lower(precision.cast<std::string>());
        if (p == "float32" || p == "single" || p == "float") return dtype::float32;
        if (p == "float64" || p == "double") return dtype::float64;
        ISTHMUS_THROW(value_error, "init: precision must be \"float32\" or \"float64\", got \"",
                      precision.cast<std::string>(), "\"");
    }
    dtype dt = dtype_from_py(precision);
    ISTHMUS_CHECK(dt == dtype::float32 || dt == dtype::float64, value_error,
                  "init: precision must be float32 or float64, got ", name(dt));
    return dt;
}

void init(const std::string& device, py::handle precision, bool load_compiler,
          py::handle load_compiler_alias) {
    // Validate everything before changing any state.
    const auto [dev, cuda_device] = parse_device(device);
    check_device_available(cuda_device, device);
    const dtype prec = parse_precision(precision);
    if (!load_compiler_alias.is_none()) load_compiler = load_compiler_alias.cast<bool>();
    (void)load_compiler; // accepted for compatibility; unused
    std::lock_guard lk(g_mu);
    if (session() == state::running) {
        ISTHMUS_CHECK(dev == g_device && prec == g_precision, runtime_error,
                      "init: isthmus is already initialised (device \"", g_device, "\", precision ",
                      name(g_precision), "); call destroy() before init(\"", device,
                      "\", precision=\"", name(prec), "\")");
        return; // the same settings again: nothing to do
    }
    start_device(cuda_device);
    set_scalar_dtype(prec);
    g_device = dev;
    g_precision = prec;
    set_session(state::running);
}

void destroy() {
    std::lock_guard lk(g_mu);
    if (session() != state::running) return; // destroy() twice is harmless
    set_scalar_dtype(dtype::float32);
    set_default_resource(MEMRESOURCE_CPU);
    set_session(state::destroyed);
}

} // namespace

/// Puts the module's pybind11 functions in its namespace as builtins of isthmus with text
/// signatures (module_builtins.cpp, Note [module functions as builtins]).
void publish_module_functions(py::module_& m);

} // namespace isthmus::pymod

PYBIND11_MODULE(_isthmus, m) {
    using namespace isthmus;
    using namespace isthmus::pymod;
    m.doc() = "isthmus: native tensors, plugins and C++ code from Python (see docs/python.md)";
    m.attr("__version__") = isthmus::version();

    bind_errors(m);
    install_interrupt_poll();

    m.def("init", &pymod::init, py::arg("device") = "cpu", py::arg("precision") = "float32",
          py::arg("load_compiler") = false, py::kw_only(), py::arg("loadCompiler") = py::none(),
          "Starts the isthmus runtime; required before any other call.\n\n"
          "device: \"cpu\", \"cuda\" or \"cuda:N\" (RuntimeError naming the cause when CUDA\n"
          "cannot run here).\n"
          "precision: \"float32\" (default) or \"float64\", the dtype of Quasar's `scalar`.\n"
          "load_compiler: accepted for PyQuasar compatibility (also as loadCompiler=).");
    m.def("destroy", &pymod::destroy,
          "Ends the runtime session; later calls raise until init() is called again.");
    m.def("is_initialized", &pymod::initialized, "True between init() and destroy().");
    m.def(
        "_native_stats",
        [](bool reset) {
            native_counters& c = native_stats();
            py::dict d;
            d["active"] = c.active.load();
            d["max_active"] = std::max(c.max_active.load(), c.held_max);
            d["entered"] = c.entered.load() + c.held_entered;
            if (reset) {
                c.max_active.store(c.active.load());
                c.entered.store(0);
                c.held_entered = 0;
                c.held_max = 0;
            }
            return d;
        },
        py::arg("reset") = false,
        "Counters of native sections (GIL released): threads inside now, the most at once and\n"
        "sections entered since the last reset (see Note [native sections]); for tests.");

    m.def(
        "build_info",
        [] {
            const blas_info b = cpu_blas_info();
            py::dict blas;
            blas["name"] = b.name;
            blas["version"] = b.version;
            blas["core"] = b.core;
            blas["config"] = b.config;
            blas["threads"] = b.threads;
            blas["shared_pools"] = b.shared_pools;
            blas["shared_calls"] = b.shared_calls;
            py::dict d;
            d["version"] = isthmus::version();
            d["blas"] = blas;
            d["openmp_threads"] = b.openmp_threads;
            return d;
        },
        "What this build runs on: {\"version\", \"openmp_threads\" (isthmus's OpenMP pool),\n"
        "\"blas\": {\"name\", \"version\", \"core\" (the kernels chosen for this CPU),\n"
        "\"config\", \"threads\", \"shared_pools\" (other OpenBLAS copies, NumPy's, whose\n"
        "threaded calls run on isthmus's pool), \"shared_calls\"}} (docs/threads.md).");
    m.def("_share_blas_pools", &share_blas_pools,
          "Gives the OpenBLAS copies loaded so far (NumPy's) isthmus's OpenMP pool; returns how\n"
          "many share it (Note [one BLAS pool for the process]). Run by `import isthmus`.");

    // The PyQuasar manual's constants (plain ints, as in PyQuasar).
    m.attr("LOCK_READ") = static_cast<int>(LOCK_READ);
    m.attr("LOCK_WRITE") = static_cast<int>(LOCK_WRITE);
    m.attr("LOCK_READWRITE") = static_cast<int>(LOCK_READWRITE);
    m.attr("MEMRESOURCE_CPU") = MEMRESOURCE_CPU;
    m.attr("MEMRESOURCE_SINGLE_CUDA") = MEMRESOURCE_SINGLE_CUDA;
    m.attr("MEMRESOURCE_SINGLE_OPENCL") = MEMRESOURCE_SINGLE_OPENCL;
    m.attr("MEMRESOURCE_DEVICE0") = MEMRESOURCE_DEVICE0;
    m.attr("MEMRESOURCE_DEVICE1") = MEMRESOURCE_DEVICE1;
    m.attr("MEMRESOURCE_DEVICE2") = MEMRESOURCE_DEVICE2;
    m.attr("MEMRESOURCE_DEVICE3") = MEMRESOURCE_DEVICE3;
    m.attr("MEMRESOURCE_DEVICE4") = MEMRESOURCE_DEVICE4;

    bind_qvalue(m);
    bind_buffer(m);
    bind_functions(m);
    bind_operators(m);
    bind_module_ops(m);
    bind_module_shape(m);
    bind_module_creation(m);
    bind_qvalue_methods(m);
    bind_qvalue_autograd(m);
    bind_autograd(m);
    bind_dlpack(m);
    bind_plugins(m);
    bind_placement(m);
    install_number_slots(m.attr("qvalue")); // after every binder: Note [number slots]

    m.def(
        "cuda_available", [] { return cuda::available(); },
        "True when the CUDA backend module loads and sees a GPU (see cuda_unavailable_reason).");
    m.def(
        "cuda_unavailable_reason", [] { return cuda::unavailable_reason(); },
        "Why CUDA cannot run here (\"\" when it can).");
    m.def(
        "cuda_synchronize", [](int device) { cuda::synchronize(device); }, py::arg("device") = -1,
        "Waits for the work queued on a CUDA device (-1: every device).");
    m.def(
        "cuda_memory_info",
        [](int device) {
            const auto s = cuda::memory_info(device);
            py::dict d;
            d["allocated_bytes"] = s.allocated_bytes;
            d["cached_bytes"] = s.cached_bytes;
            d["limit_bytes"] = s.limit_bytes;
            d["device_allocations"] = s.device_allocations;
            return d;
        },
        py::arg("device") = 0, "The CUDA caching allocator's figures for a device.");
    // See Note [device memory source]: q.cuda_memory_source (isthmus/cuda_memory.py) builds the
    // functions, these set them; addresses of C functions with the module ABI's signatures.
    m.def(
        "_cuda_set_memory_source",
        [](uintptr_t allocate, uintptr_t deallocate, uintptr_t ctx, std::string name) {
            cuda::memory_source s;
            s.allocate = reinterpret_cast<decltype(s.allocate)>(allocate);
            s.deallocate = reinterpret_cast<decltype(s.deallocate)>(deallocate);
            s.ctx = reinterpret_cast<void*>(ctx);
            s.name = std::move(name);
            cuda::set_memory_source(s);
        },
        py::arg("allocate"), py::arg("deallocate"), py::arg("ctx"), py::arg("name"));
    m.def("_cuda_memory_source_name", [] { return cuda::memory_source_name(); });
    m.def(
        "cuda_set_memory_limit",
        [](int device, py::object bytes) {
            cuda::set_memory_limit(device, bytes.is_none() ? SIZE_MAX : bytes.cast<size_t>());
        },
        py::arg("device"), py::arg("bytes"),
        "Caps a CUDA device's allocator (None removes the cap); past it unlocked copies are\n"
        "evicted to the CPU.");
    m.def(
        "cuda_stream",
        [](int device) {
            cuda::ensure_registered(); // also after init("cpu"): the default device stays
            return reinterpret_cast<uintptr_t>(cuda::stream(device));
        },
        py::arg("device") = 0,
        "isthmus's stream on a CUDA device as an int (a cudaStream_t): every kernel and copy of\n"
        "that device is queued on it. Wrap it with torch.cuda.ExternalStream to run torch work in\n"
        "order with isthmus's (docs/interop.md).");
    m.def(
        "cuda_empty_cache", [](int device) { return cuda::empty_cache(device); },
        py::arg("device") = 0, "Frees a CUDA device's cached free blocks; returns the bytes.");

    publish_module_functions(m); // last: See Note [module functions as builtins]
}
