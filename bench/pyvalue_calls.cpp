// Benchmark: C++ -> Python call overhead through pyvalue beside bare pybind11, and the time to
// hand a runtime tensor to NumPy / torch at 1 KB and 1 GB (not a test; prints ratios).
//
// Usage: build/bench/bench_pyvalue_calls [--quick]
#include <isthmus/py.hpp>

#include <pybind11/embed.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace isthmus;

namespace {

using clock_type = std::chrono::steady_clock;

/// Nanoseconds per iteration of `f` (median of `reps` batches of `n` iterations).
double ns_per(int reps, long n, const std::function<void(long)>& f) {
    f(n / 10 + 1);
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
        auto a = clock_type::now();
        f(n);
        t.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - a).count() /
                    static_cast<double>(n));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

void row(const char* what, double ours, double peer, const char* peer_name) {
    std::printf("%-44s %9.1f ns  %-9s %9.1f ns  %5.2fx\n", what, ours, peer_name, peer,
                ours / peer);
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const long n = quick ? 20000 : 300000;
    const int reps = quick ? 3 : 7;
    python::interpreter interp;

    pyvalue g = pyexec(R"(
def f0():
    return None
def f1(x):
    return x
def f2(x, y):
    return x
class C:
    def m(self, x):
        return x
obj = C()
)");
    pyvalue f0 = g["f0"], f1 = g["f1"], f2 = g["f2"], obj = g["obj"];

    std::printf("C++ -> Python calls (ns per call; ratio = pyvalue / pybind11, target <= 1.2)\n");
    std::printf("%-44s %12s  %-9s %12s  %6s\n", "call", "pyvalue", "peer", "", "ratio");
    {
        python::gil held; // both sides with the GIL held by the caller, as pybind11 requires
        py::object p0 = py::reinterpret_borrow<py::object>(f0.ptr());
        py::object p1 = py::reinterpret_borrow<py::object>(f1.ptr());
        py::object p2 = py::reinterpret_borrow<py::object>(f2.ptr());
        py::object pobj = py::reinterpret_borrow<py::object>(obj.ptr());
        py::object pm = pobj.attr("m");
        pyvalue m = obj.attr("m");
        // interleave the two sides, to share the machine's noise
        for (int round = 0; round < 2; ++round) {
            const double a0 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) f0();
            });
            const double b0 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) p0();
            });
            const double a1 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) f1(i);
            });
            const double b1 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) p1(i);
            });
            const double a2 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) f2(1.5, i);
            });
            const double b2 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) p2(1.5, i);
            });
            const double a3 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) m(i);
            });
            const double b3 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) pm(i);
            });
            const double a4 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) obj.attr("m")(i);
            });
            const double b4 = ns_per(reps, n, [&](long k) {
                for (long i = 0; i < k; ++i) pobj.attr("m")(i);
            });
            if (round == 0) continue; // warm-up round
            row("f() (no arguments)", a0, b0, "pybind11");
            row("f(i) (one int converted)", a1, b1, "pybind11");
            row("f(1.5, i) (two arguments)", a2, b2, "pybind11");
            row("bound method m(i)", a3, b3, "pybind11");
            row("obj.attr(\"m\")(i) (lookup + call)", a4, b4, "pybind11");
        }
    }
    {
        // without holding the GIL: each pyvalue call takes and drops it (PyGILState)
        const double a = ns_per(reps, n / 4, [&](long k) {
            for (long i = 0; i < k; ++i) f1(i);
        });
        python::gil held;
        py::object p1 = py::reinterpret_borrow<py::object>(f1.ptr());
        const double b = ns_per(reps, n, [&](long k) {
            for (long i = 0; i < k; ++i) p1(i);
        });
        row("f(i), caller without the GIL", a, b, "pybind11");
    }
    {
        // the same, beside a pybind11 caller that takes the GIL for each call too
        const double a = ns_per(reps, n / 4, [&](long k) {
            for (long i = 0; i < k; ++i) f1(i);
        });
        const double b = ns_per(reps, n / 4, [&](long k) {
            for (long i = 0; i < k; ++i) {
                py::gil_scoped_acquire acquire;
                py::reinterpret_borrow<py::object>(f1.ptr())(i);
            }
        });
        row("f(i), without the GIL (peer acquires too)", a, b, "pybind11");
    }

    std::printf("\nTensor hand-over (ns per hand-over; constant whatever the size)\n");
    pyvalue torch;
    try {
        torch = pyimport("torch");
    } catch (const python_error&) {
        std::printf("(torch not installed: torch rows skipped)\n");
    }
    const long small_n = 1024 / 4;
    const long big_n = quick ? (64L << 20) / 4 : (1L << 30) / 4;
    for (long count : {small_n, big_n}) {
        tensor t = tensor::empty({count}, dtype::float32, MEMRESOURCE_CPU);
        t.fill(1.0);
        const double bytes = static_cast<double>(count) * 4;
        char label[96];
        const long k = 20000;
        const double to_np = ns_per(reps, k, [&](long kk) {
            for (long i = 0; i < kk; ++i) (void)to_numpy(t);
        });
        std::snprintf(label, sizeof label, "to_numpy, %.0f %s",
                      bytes >= 1 << 30 ? bytes / (1 << 30) : bytes / 1024,
                      bytes >= 1 << 30 ? "GB" : "KB");
        std::printf("%-44s %9.1f ns\n", label, to_np);
        if (!torch.empty()) {
            pyvalue a = to_numpy(t);
            pyvalue from_numpy = torch.attr("from_numpy");
            const double tt = ns_per(reps, k, [&](long kk) {
                for (long i = 0; i < kk; ++i) (void)to_torch(t);
            });
            const double peer = ns_per(reps, k, [&](long kk) {
                python::gil held;
                py::object f = py::reinterpret_borrow<py::object>(from_numpy.ptr());
                py::object pa = py::reinterpret_borrow<py::object>(a.ptr());
                for (long i = 0; i < kk; ++i) (void)f(pa);
            });
            std::snprintf(label, sizeof label, "to_torch (vs torch.from_numpy), %.0f %s",
                          bytes >= 1 << 30 ? bytes / (1 << 30) : bytes / 1024,
                          bytes >= 1 << 30 ? "GB" : "KB");
            row(label, tt, peer, "from_np");
        }
    }
    return 0;
}
