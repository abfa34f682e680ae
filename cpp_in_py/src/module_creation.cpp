// Module-level creation functions in NumPy's spelling: q.zeros, q.full, q.arange, q.eye, q.rand,
// ...
#include "bindings.hpp"

#include "isthmus/ops/creation.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <string>

namespace isthmus::pymod {

// Note [module functions] (module_ops.cpp) holds here too.

namespace {

shape_t size_arg(py::handle size, const char* fn) {
    if (size.is_none()) return {};
    shape_t s = int_list(size, fn, "size");
    for (int64_t n : s) ISTHMUS_CHECK(n >= 0, value_error, fn, ": negative size ", n);
    return s;
}

// Sizes as varargs (rand(2, 3)), one sequence (rand((2, 3))) or the size= keyword.
shape_t sizes_or_keyword(const py::args& args, const py::kwargs& kwargs, const char* fn,
                         py::handle& dt) {
    dt = py::none();
    shape_t shape;
    bool have_size = false;
    for (auto [k, v] : kwargs) {
        const std::string key = k.cast<std::string>();
        if (key == "dtype") {
            dt = v;
        } else if (key == "size" || key == "shape") {
            ISTHMUS_CHECK(args.empty(), type_error, fn,
                          ": give the sizes either as arguments or "
                          "as size=, not both");
            shape = size_arg(v, fn);
            have_size = true;
        } else {
            ISTHMUS_THROW(type_error, fn, "() got an unexpected keyword argument '", key, "'");
        }
    }
    if (!have_size) shape = sizes_from_args(args, fn);
    return shape;
}

dtype dtype_or(py::handle dt, dtype fallback) {
    return dt.is_none() ? fallback : dtype_from_py(dt);
}

} // namespace

void bind_module_creation(py::module_& m) {
    m.def(
        "full",
        [](py::handle shape, py::handle fill, py::handle dt) {
            require_init("full");
            const shape_t s = size_arg(shape, "full");
            scalar v = scalar_arg(fill, "full", "fill_value");
            // NumPy: the dtype of the fill value unless given (Python floats: `scalar`).
            const dtype d = dtype_or(dt, v.type());
            if (!is_qvalue(fill)) v = scalar_from_py(fill, d); // Note [exact number conversion]
            native_section nogil;
            return value(isthmus::full(s, v, d));
        },
        py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = py::none(),
        "A tensor of `shape` filled with fill_value (dtype: fill_value's unless given).");
    m.def(
        "zeros_like",
        [](py::handle a, py::handle dt) {
            require_init("zeros_like");
            return value(isthmus::zeros_like(tensor_arg(a, "zeros_like"), optional_dtype(dt)));
        },
        py::arg("a"), py::arg("dtype") = py::none(), "Zeros with a's shape and dtype.");
    m.def(
        "ones_like",
        [](py::handle a, py::handle dt) {
            require_init("ones_like");
            return value(isthmus::ones_like(tensor_arg(a, "ones_like"), optional_dtype(dt)));
        },
        py::arg("a"), py::arg("dtype") = py::none(), "Ones with a's shape and dtype.");
    m.def(
        "full_like",
        [](py::handle a, py::handle fill, py::handle dt) {
            require_init("full_like");
            const tensor t = tensor_arg(a, "full_like");
            const std::optional<dtype> d = optional_dtype(dt);
            scalar v = scalar_arg(fill, "full_like", "fill_value");
            if (!is_qvalue(fill)) v = scalar_from_py(fill, d.value_or(t.dtype()));
            return value(isthmus::full_like(t, v, d));
        },
        py::arg("a"), py::arg("fill_value"), py::arg("dtype") = py::none(),
        "fill_value with a's shape and dtype.");
    m.def(
        "uninit_like",
        [](py::handle a, py::handle dt) {
            require_init("uninit_like");
            return value(isthmus::uninit_like(tensor_arg(a, "uninit_like"), optional_dtype(dt)));
        },
        py::arg("a"), py::arg("dtype") = py::none(),
        "An uninitialised tensor with a's shape and dtype (NumPy's empty_like).");
    m.def(
        "arange",
        [](py::handle start, py::handle stop, py::handle step, py::handle dt) {
            require_init("arange");
            const std::optional<dtype> d = optional_dtype(dt);
            if (stop.is_none()) {
                ISTHMUS_CHECK(step.is_none(), type_error,
                              "arange: give stop when giving step: arange(start, stop, step)");
                const scalar n = exact_scalar_arg(start, "arange", "stop");
                native_section nogil;
                return value(isthmus::arange(n, d));
            }
            const scalar a = exact_scalar_arg(start, "arange", "start");
            const scalar b = exact_scalar_arg(stop, "arange", "stop");
            const scalar c =
                step.is_none() ? scalar(int64_t{1}) : exact_scalar_arg(step, "arange", "step");
            native_section nogil;
            return value(isthmus::arange(a, b, c, d));
        },
        py::arg("start"), py::arg("stop") = py::none(), py::arg("step") = py::none(),
        py::arg("dtype") = py::none(),
        "NumPy's arange: start, start+step, ... below stop; arange(n) is 0 .. n-1. Integer\n"
        "arguments give int64, others the `scalar` dtype unless dtype is given.");
    m.def(
        "linspace",
        [](double start, double stop, py::handle num_arg, bool endpoint, py::handle dt) {
            require_init("linspace");
            const int64_t num = int64_from_py(num_arg, "linspace", "num");
            const dtype d = dtype_or(dt, scalar_dtype());
            native_section nogil;
            return value(isthmus::linspace(start, stop, num, endpoint, d));
        },
        py::arg("start"), py::arg("stop"), py::arg("num") = py::int_(50),
        py::arg("endpoint") = true, py::arg("dtype") = py::none(),
        "num evenly spaced values from start to stop.");
    m.def(
        "eye",
        [](py::handle n_arg, py::handle m_arg, py::handle k_arg, py::handle dt) {
            require_init("eye");
            // Sizes past int64 get the same typed message as every other size.
            const int64_t n = int64_from_py(n_arg, "eye", "N");
            std::optional<int64_t> mcols;
            if (!m_arg.is_none()) mcols = int64_from_py(m_arg, "eye", "M");
            const int64_t k = int64_from_py(k_arg, "eye", "k");
            const dtype d = dtype_or(dt, scalar_dtype());
            native_section nogil;
            return value(isthmus::eye(n, mcols, k, d));
        },
        py::arg("N"), py::arg("M") = py::none(), py::arg("k") = py::int_(0),
        py::arg("dtype") = py::none(), "An N x M matrix with ones on diagonal k.");
    m.def(
        "copy",
        [](py::handle a) {
            require_init("copy");
            const tensor t = tensor_arg(a, "copy");
            native_section nogil;
            return value(isthmus::copy(t));
        },
        py::arg("a"), "A C-contiguous copy.");

    // ---- random numbers (Note [counter-based random numbers] in creation.hpp) ----
    m.def(
        "manual_seed",
        [](uint64_t seed) {
            require_init("manual_seed");
            isthmus::manual_seed(seed);
        },
        py::arg("seed"),
        "Seeds the default generator: the same seed gives the same numbers on any thread count.");
    m.def(
        "rand",
        [](py::args args, py::kwargs kwargs) {
            require_init("rand");
            py::handle dt;
            const shape_t s = sizes_or_keyword(args, kwargs, "rand", dt);
            const dtype d = dtype_or(dt, scalar_dtype());
            native_section nogil;
            return value(isthmus::rand(s, d));
        },
        "rand(*sizes, size=None, dtype=None)\n--\n\n"
        "Uniform values in [0, 1): rand(2, 3), rand((2, 3)) or rand(size=(2, 3)); dtype= a\n"
        "floating or complex dtype (default `scalar`).");
    m.def(
        "randn",
        [](py::args args, py::kwargs kwargs) {
            require_init("randn");
            py::handle dt;
            const shape_t s = sizes_or_keyword(args, kwargs, "randn", dt);
            const dtype d = dtype_or(dt, scalar_dtype());
            native_section nogil;
            return value(isthmus::randn(s, d));
        },
        "randn(*sizes, size=None, dtype=None)\n--\n\n"
        "Standard normal values: randn(2, 3), randn((2, 3)) or randn(size=(2, 3)); dtype= a\n"
        "floating or complex dtype (default `scalar`).");
    m.def(
        "randint",
        [](py::handle low_arg, py::handle high_arg, py::handle size, py::handle dt) {
            require_init("randint");
            const shape_t s = size_arg(size, "randint");
            const int64_t low = int64_from_py(low_arg, "randint", "low");
            const bool has_high = !high_arg.is_none();
            const int64_t lo = has_high ? low : 0,
                          hi = has_high ? int64_from_py(high_arg, "randint", "high") : low;
            const dtype d = dtype_or(dt, dtype::int64);
            native_section nogil;
            return value(isthmus::randint(lo, hi, s, d));
        },
        py::arg("low"), py::arg("high") = py::none(), py::arg("size") = py::none(),
        py::arg("dtype") = py::none(),
        "Uniform integers in [low, high) (randint(n): [0, n)), as NumPy's randint.");
    m.def(
        "uniform",
        [](double low, double high, py::handle size, py::handle dt) {
            require_init("uniform");
            const shape_t s = size_arg(size, "uniform");
            const dtype d = dtype_or(dt, scalar_dtype());
            native_section nogil;
            return value(isthmus::uniform(s, low, high, d));
        },
        py::arg("low") = 0.0, py::arg("high") = 1.0, py::arg("size") = py::none(),
        py::arg("dtype") = py::none(), "Uniform values in [low, high).");
    m.def(
        "normal",
        [](double loc, double scale, py::handle size, py::handle dt) {
            require_init("normal");
            const shape_t s = size_arg(size, "normal");
            const dtype d = dtype_or(dt, scalar_dtype());
            native_section nogil;
            return value(isthmus::normal(s, loc, scale, d));
        },
        py::arg("loc") = 0.0, py::arg("scale") = 1.0, py::arg("size") = py::none(),
        py::arg("dtype") = py::none(), "Normal values with mean loc and standard deviation scale.");
}

} // namespace isthmus::pymod
