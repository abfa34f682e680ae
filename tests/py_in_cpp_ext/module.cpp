// A separate extension module that links libisthmus.so and calls back into Python via pyvalue.
#include <isthmus/py.hpp>

#include <pybind11/pybind11.h>

#include <atomic>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;
using isthmus::pyvalue;

namespace {
pyvalue as_pyvalue(const py::object& o) {
    return pyvalue::borrow(o.ptr());
}

// The path of the file that holds isthmus's code, as this process mapped it.
std::string library_path() {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void*>(&isthmus::python::ensure), &info) || !info.dli_fname)
        throw std::runtime_error("dladdr failed");
    return info.dli_fname;
}
} // namespace

PYBIND11_MODULE(isthmus_embed_ext, m) {
    // f(x) called from C++ through pyvalue, with the GIL held by the caller (re-entrant).
    m.def("apply", [](py::object f, py::object x) {
        return py::reinterpret_steal<py::object>(as_pyvalue(f)(as_pyvalue(x)).release());
    });
    // sum(f(i) for i in range(n)), with the GIL released between the calls: every pyvalue
    // operation takes it back itself.
    m.def("sum_calls", [](py::object f, int n) {
        pyvalue fv = as_pyvalue(f);
        py::gil_scoped_release nogil;
        long long total = 0;
        for (int i = 0; i < n; ++i) total += isthmus::from_py<long long>(fv(i));
        return total;
    });
    // `threads` C++ threads each call f(i) `n` times while this thread waits without the GIL.
    m.def("threaded_calls", [](py::object f, int threads, int n) {
        pyvalue fv = as_pyvalue(f);
        std::atomic<long long> total{0};
        {
            py::gil_scoped_release nogil;
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; ++t)
                pool.emplace_back([&] {
                    for (int i = 0; i < n; ++i) total += isthmus::from_py<long long>(fv(i));
                });
            for (auto& th : pool) th.join();
        }
        return total.load();
    });
    // A runtime tensor made here, handed to NumPy without a copy.
    m.def("arange_tensor", [](int n) {
        std::vector<double> v(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
        return py::reinterpret_steal<py::object>(
            isthmus::to_numpy(isthmus::tensor::from_vector(v)).release());
    });
    // Throws the C++ error named by `kind` from inside a Python callback called by C++.
    m.def("call_and_throw", [](py::object f) {
        return py::reinterpret_steal<py::object>(as_pyvalue(f)().release());
    });
    // from_py<tensor> (Note [inbound rule]): fills the tensor it got with v, so the caller sees
    // whether it shared x's memory; returns the number of elements.
    m.def("fill_from_py", [](py::object x, double v, bool allow_copy) {
        isthmus::tensor t = isthmus::tensor_from_py(as_pyvalue(x), allow_copy);
        t.fill(v);
        return t.numel();
    });
    m.def("library_path", &library_path);
    m.def("interpreter_initialized", [] { return isthmus::python::is_initialized(); });
}
