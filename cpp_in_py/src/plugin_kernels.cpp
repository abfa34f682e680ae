// Plugin kernels from Python: q.native_kernel, q.checked and q.parallel_do.
#include "bindings.hpp"

#include "isthmus/plugin_host.hpp"
#include "native_function.hpp"
#include "plugin_overloads.hpp"
#include "plugin_values.hpp"

#include "isthmus/autograd.hpp"
#include "isthmus/small_vector.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>

namespace isthmus::pymod {

namespace pl = isthmus::plugin_host;

namespace {

// `with q.checked():` (Note [checked mode] in plugin_host.hpp): a checked_scope on the thread that
// enters it, for as long as the block runs.
struct checked_block {
    bool enabled = true;
    std::optional<pl::checked_scope> scope;
};

// q.deterministic(): a deterministic_scope as a context manager.
struct deterministic_block {
    bool enabled = true;
    std::optional<pl::deterministic_scope> scope;
};

// One size of dims: an int (or an object with __index__) that fits int64.
int64_t dim_from_py(py::handle x) {
    ISTHMUS_CHECK(PyLong_Check(x.ptr()) || PyIndex_Check(x.ptr()), type_error,
                  "parallel_do: dims must hold ints, got ", type_name(x));
    const auto i = py::reinterpret_steal<py::object>(PyNumber_Index(x.ptr()));
    if (!i) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    ISTHMUS_CHECK(!overflow, value_error, "parallel_do: the size ", int_text(i),
                  " in dims does not fit int64");
    return v;
}

shape_t dims_from_py(py::handle h) {
    if (PyLong_Check(h.ptr()) || (PyIndex_Check(h.ptr()) && !py::isinstance<py::sequence>(h) &&
                                  !is_qvalue(h) && !py::isinstance<py::array>(h)))
        return {dim_from_py(h)};
    if (is_qvalue(h) || py::isinstance<py::array>(h)) {
        const tensor t = asvalue(h).as_tensor();
        ISTHMUS_CHECK(t.dim() <= 1 && !is_complex(t.dtype()), type_error,
                      "parallel_do: dims must be a 1-d tensor of integers, got a ", name(t.dtype()),
                      " tensor of shape ", shape_str(t.shape()));
        shape_t d;
        if (is_integer(t.dtype()) || is_bool(t.dtype())) { // exact, whatever the size
            if (t.dtype() == dtype::uint64)
                for (uint64_t x : t.to_vector<uint64_t>()) {
                    ISTHMUS_CHECK(x <= static_cast<uint64_t>(INT64_MAX), value_error,
                                  "parallel_do: the size ", x, " in dims does not fit int64");
                    d.push_back(static_cast<int64_t>(x));
                }
            else
                d = t.to(dtype::int64).to_vector<int64_t>();
            return d;
        }
        for (double x : t.to_vector<double>()) {
            // (-2^63 and 2^63 as doubles: the range that converts to int64 exactly)
            ISTHMUS_CHECK(std::isfinite(x) && x == std::floor(x) && x >= -9223372036854775808.0 &&
                              x < 9223372036854775808.0,
                          value_error, "parallel_do: dims must hold integers, got ", x);
            d.push_back(static_cast<int64_t>(x));
        }
        return d;
    }
    ISTHMUS_CHECK(py::isinstance<py::sequence>(h) && !py::isinstance<py::str>(h), type_error,
                  "parallel_do: dims must be an int or a sequence of ints, got ", type_name(h));
    shape_t d;
    for (py::handle x : py::reinterpret_borrow<py::sequence>(h)) d.push_back(dim_from_py(x));
    return d;
}

// Note [raw parallel_do]
// ~~~~~~~~~~~~~~~~~~~~~~
// q.parallel_do is a METH_FASTCALL builtin written with the C API, not a pybind11 m.def: a
// pybind11 function taking py::args packs the arguments into a tuple and goes through its
// dispatcher (and the module's builtin forwards to it, Note [module functions as builtins]), a
// few hundred nanoseconds of a launch that takes about two microseconds in all. It checks and
// converts exactly as the binding did, and like the published builtins its __self__ is the
// module, its __module__ "isthmus" and its doc opens with its signature.
PyObject* raw_parallel_do(PyObject*, PyObject* const* args, Py_ssize_t nargs) noexcept {
    try {
        require_init("parallel_do");
        ISTHMUS_CHECK(nargs >= 2, type_error,
                      "parallel_do(dims, args..., kernel): expected at least dims and a "
                      "kernel, got ",
                      nargs, " argument(s)");
        py::handle last = args[nargs - 1];
        py::detail::make_caster<native_kernel> kernel; // one type lookup checks and converts
        ISTHMUS_CHECK(kernel.load(last, false) && kernel.value != nullptr, type_error,
                      "parallel_do(dims, args..., kernel): the last argument must be a "
                      "native kernel, got ",
                      type_name(last));
        const auto& k = py::detail::cast_op<const native_kernel&>(kernel);
        const shape_t dims = dims_from_py(args[0]);
        const isthmus_kernel* ak = k.k->abi();
        small_vector<value, 8> vals; // a launch's arguments, without a heap block
        vals.reserve(static_cast<size_t>(nargs - 2));
        for (Py_ssize_t i = 1; i + 1 < nargs; ++i)
            vals.push_back(call_arg(args[i], ak->signature, static_cast<size_t>(i - 1),
                                    i - 1 < ak->nparams ? &ak->params[i - 1] : nullptr,
                                    /*transient=*/true)); // dropped before we return
        {
            py::gil_scoped_release nogil;
            pl::parallel_do(dims, std::span<const value>(vals.data(), vals.size()), *k.k);
        }
        // A written qvalue takes the node the launch recorded on its copy (Note [plugin
        // calls in autograd] in plugins/src/call_autograd.cpp).
        for (size_t i = 0; i < vals.size(); ++i)
            if (vals[i].is_tensor() && vals[i].as_tensor().has_autograd())
                if (value* q = boundary::qvalue_ptr(args[i + 1]); q && q->is_tensor())
                    autograd::share_state(vals[i].as_tensor(), q->as_tensor());
        Py_RETURN_NONE;
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

PyMethodDef raw_parallel_do_def = {
    "parallel_do", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(raw_parallel_do)),
    METH_FASTCALL,
    "parallel_do(dims, /, *args)\n--\n\n"
    "Runs a plugin kernel at every position of a grid: parallel_do(dims, x, y, kernel).\n\n"
    "dims: the grid, an int or a sequence (or 1-d integer tensor) of 1 to 4 sizes; a\n"
    "  tensor's shape will do (parallel_do(img.shape, img, kernel)).\n"
    "*args: the kernel's arguments in its parameter order (tensors, numbers, values), then\n"
    "  the kernel itself as the last argument: a native_kernel, i.e. q.<name> or\n"
    "  module.<name> after import_native / compile_string defined it.\n\n"
    "Runs on the device the scheduling rule picks for the tensor arguments: on a GPU when\n"
    "the kernel has a CUDA launcher (queued on the device's stream), else in parallel on the\n"
    "CPU; tensor arguments are locked there for the duration. Returns None: kernels write\n"
    "their results into tensor arguments.\n\n"
    "Raises RuntimeError before init(); TypeError when the last argument is not a kernel or\n"
    "the arguments do not match its parameters (count and types are checked before anything\n"
    "runs); ValueError for a bad dims; IndexError for an out-of-bounds access inside\n"
    "`with q.checked():`."};

// The kernel `<k's name><suffix>` of k's plugin (a derived kernel: "_vjp", "_jvp"), or None.
py::object derived_kernel(const native_kernel& k, const char* suffix) {
    const std::string n = k.k->name() + suffix;
    if (!k.k->owner()->has_kernel(n)) return py::none();
    return py::cast(native_kernel{k.k->owner()->get_kernel(n)});
}

} // namespace

void bind_plugin_kernels(py::module_& m) {
    py::class_<native_kernel>(m, "native_kernel", "A plugin kernel; run it with parallel_do.")
        .def_property_readonly("name", [](const native_kernel& k) { return k.k->name(); })
        .def_property_readonly("signature", [](const native_kernel& k) { return k.k->signature(); })
        .def_property_readonly("plugin_path",
                               [](const native_kernel& k) { return k.k->owner()->path(); })
        .def_property_readonly(
            "plugin", [](const native_kernel& k) { return k.k->owner()->name(); },
            "The name of the plugin the kernel comes from.")
        .def_property_readonly(
            "tier", [](const native_kernel& k) { return k.k->owner()->tier(); },
            "Which build of the plugin the kernel runs: \"quick\" (compile_string's -O1 build,\n"
            "while its -O3 build runs in the background) or \"optimised\" (see compile_string's\n"
            "`tiered`).")
        .def(
            "wait_optimised",
            [](const native_kernel& k) {
                py::gil_scoped_release nogil; // a failed build's notice takes the GIL
                return k.k->owner()->wait_optimised();
            },
            "Waits until the optimised build of the kernel's plugin, if one is under way, has\n"
            "finished; returns the tier the kernel runs then (\"optimised\", or \"quick\" when\n"
            "that build failed: its compile notice says why).")
        .def_property_readonly(
            "overloads", [](const native_kernel& k) { return kernel_overloads(*k.k); },
            "The kernel as one overload dict (as native_function.overloads, plus pos_ndim: the "
            "rank of the position, which callers do not pass).")
        .def_property_readonly(
            "devices",
            [](const native_kernel& k) {
                py::list r;
                if (k.k->abi()->launch_cpu) r.append("cpu");
                if (k.k->abi()->launch_cuda) r.append("cuda");
                return py::tuple(r);
            },
            "Where the kernel can run: (\"cpu\",), (\"cpu\", \"cuda\") or (\"cuda\",).")
        .def_property_readonly(
            "vjp", [](const native_kernel& k) { return derived_kernel(k, "_vjp"); },
            // See Note [derived kernels] (isthmus/plugin/active_view.hpp)
            "The kernel derived from a generic kernel (<name>_vjp of the same plugin: the same "
            "arguments, then the gradient of each output and of each differentiable input, "
            "added to); None for a kernel registered with concrete types (docs/autograd.md).")
        .def_property_readonly(
            "jvp", [](const native_kernel& k) { return derived_kernel(k, "_jvp"); },
            // See Note [derived forward mode] (isthmus/plugin/derive.hpp)
            "The forward mode derived from a generic kernel registered with ip::with_jvp "
            "(<name>_jvp of the same plugin: the same arguments, then the tangent of each "
            "differentiable input and of each output, added to); None otherwise.")
        .def_property_readonly("__doc__",
                               [](const native_kernel& k) {
                                   const char* d = k.k->abi()->doc;
                                   return k.k->signature() +
                                          (d && *d ? std::string("\n\n") + d : "");
                               })
        .def("__repr__",
             [](const native_kernel& k) {
                 return "<native kernel " + k.k->signature() + " from plugin " +
                        k.k->owner()->name() + ">";
             })
        .def("__call__", [](const native_kernel& k, py::args, py::kwargs) {
            ISTHMUS_THROW(type_error, "kernel ", k.k->name(),
                          " runs through parallel_do(dims, args..., kernel), not by a call");
        });

    refuse_python_new(m.attr("native_kernel"),
                      "kernels come from import_native and compile_string");

    py::class_<checked_block>(
        m, "checked",
        "Checked mode for plugin kernels and functions, as a context manager:\n\n"
        "    with q.checked():\n"
        "        q.parallel_do(dims, x, y, kernel)\n\n"
        "Inside the block, every unchecked view of a plugin kernel or function called from this\n"
        "thread bounds-checks each access: an access outside its tensor raises IndexError naming\n"
        "the kernel, the argument, the index and the shape, instead of reading or writing\n"
        "outside the tensor. checked(False) turns it off inside an outer block or when the\n"
        "environment variable ISTHMUS_CHECKED=1 turned it on for the process. Blocks nest.")
        .def(py::init<bool>(), py::arg("enabled") = true,
             "A checked-mode block (enabled=False: an unchecked one).")
        .def(
            "__enter__",
            [](checked_block& b) -> checked_block& {
                ISTHMUS_CHECK(!b.scope, runtime_error,
                              "q.checked(): this block is already entered; make one per with");
                b.scope.emplace(b.enabled);
                return b;
            },
            py::return_value_policy::reference, "Turns checked mode on (or off) on this thread.")
        .def(
            "__exit__", [](checked_block& b, py::args) { b.scope.reset(); },
            "Restores the mode that was in force before the block.")
        .def_static(
            "active", [] { return pl::checked(); },
            "Whether plugin calls from this thread run in checked mode now.");
    py::class_<deterministic_block>(
        m, "deterministic",
        "Deterministic kernel launches, as a context manager:\n\n"
        "    with q.deterministic():\n"
        "        q.parallel_do(dims, x, y, gy, gx, kernel.vjp)\n\n"
        "Inside the block, parallel_do calls from this thread run the kernel's positions on the\n"
        "calling thread in C order, so kernels that add into shared elements (the gradients of\n"
        "a derived kernel, any scatter-add) give bit-identical sums across runs and thread\n"
        "counts, at the price of one thread. deterministic(False) turns it off inside an outer\n"
        "block. Blocks nest.")
        .def(py::init<bool>(), py::arg("enabled") = true,
             "A deterministic block (enabled=False: a parallel one).")
        .def(
            "__enter__",
            [](deterministic_block& b) -> deterministic_block& {
                ISTHMUS_CHECK(!b.scope, runtime_error,
                              "q.deterministic(): this block is already entered; make one per "
                              "with");
                b.scope.emplace(b.enabled);
                return b;
            },
            py::return_value_policy::reference, "Turns deterministic launches on (or off).")
        .def(
            "__exit__", [](deterministic_block& b, py::args) { b.scope.reset(); },
            "Restores the mode that was in force before the block.")
        .def_static(
            "active", [] { return pl::deterministic(); },
            "Whether parallel_do calls from this thread run deterministically now.");
    // See Note [raw parallel_do].
    PyObject* fn = PyCFunction_NewEx(&raw_parallel_do_def, m.ptr(), py::str("isthmus").ptr());
    if (!fn) throw py::error_already_set();
    m.attr("parallel_do") = py::reinterpret_steal<py::object>(fn);
}

} // namespace isthmus::pymod
