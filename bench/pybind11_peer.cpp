// A bare pybind11 module for bench/python_ops.py: the same trivial calls as qvalue's, without
// isthmus, so the benchmark can print isthmus's per-call overhead as a ratio to pybind11's.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <vector>

namespace py = pybind11;

namespace {

// Holds a shape like a qvalue does, so `ndim` and `numel()` do comparable work.
struct peer_value {
    std::vector<int64_t> shape{1000};
};

} // namespace

PYBIND11_MODULE(isthmus_bench_peer, m) {
    m.doc() = "bench-only: trivial pybind11 functions and a class with a property and a method";
    m.def(
        "noop", [](py::handle) {}, py::arg("x"));
    py::class_<peer_value>(m, "value")
        .def(py::init<>())
        .def_property_readonly(
            "ndim", [](const peer_value& v) { return static_cast<int64_t>(v.shape.size()); })
        .def("numel", [](const peer_value& v) {
            int64_t n = 1;
            for (int64_t s : v.shape) n *= s;
            return n;
        });
}
