// Where work runs, from Python: q.device scopes, q.placement, q.to (and qvalue.to), the transfer
// threshold.
#include "bindings.hpp"

#include "isthmus/cuda.hpp"
#include "isthmus/schedule.hpp"

#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace isthmus::pymod {

namespace {

// A device name ("cpu", "cuda", "cuda:N", case-insensitive) as a registered resource.
resource_id resource_of(const std::string& given, const char* fn) {
    const std::optional<int> number = device_number(given);
    ISTHMUS_CHECK(number.has_value(), value_error, fn, ": unknown device \"", given,
                  "\"; expected \"cpu\", \"cuda\" or \"cuda:N\"");
    if (*number < 0) return MEMRESOURCE_CPU;
    const int n = *number;
    ISTHMUS_CHECK(cuda::available(), runtime_error, fn, "(\"", given,
                  "\"): CUDA is not available: ", cuda::unavailable_reason());
    ISTHMUS_CHECK(cuda::initialized(), runtime_error, fn, "(\"", given,
                  "\"): the CUDA devices are not started; call init(\"cuda\") first");
    const int count = cuda::device_count();
    ISTHMUS_CHECK(n < count, value_error, fn, ": CUDA device ", n, " does not exist (", count,
                  " device", count == 1 ? "" : "s", ")");
    return cuda_resource(n);
}

std::string name_of(resource_id r) {
    return get_resource(r).name();
}

// Note [device scope object]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// `with q.device("cuda:1"):` enters an isthmus::device_scope on the calling thread and leaves it at
// the end of the block. The object is single-use at a time (entering it twice without leaving
// raises), and leaving it on another thread than the one that entered it raises, since scopes are
// per thread.
class py_device_scope {
public:
    py_device_scope(resource_id r, std::string name) : resource_(r), name_(std::move(name)) {}
    py_device_scope& enter() {
        ISTHMUS_CHECK(!scope_, runtime_error, "device(\"", name_,
                      "\") is already entered; make a new q.device(...) for a nested scope");
        scope_.emplace(resource_);
        thread_ = std::this_thread::get_id();
        return *this;
    }
    void exit() {
        ISTHMUS_CHECK(scope_.has_value(), runtime_error, "device(\"", name_, "\") was not entered");
        ISTHMUS_CHECK(thread_ == std::this_thread::get_id(), runtime_error, "device(\"", name_,
                      "\") must be left on the thread that entered it");
        scope_.reset();
    }
    const std::string& name() const { return name_; }

private:
    resource_id resource_;
    std::string name_;
    std::optional<device_scope> scope_;
    std::thread::id thread_;
};

} // namespace

py::object value_to_device(py::handle a, const std::string& device, bool copy) {
    require_init("to");
    tensor t = tensor_arg(a, "to");
    const resource_id r = resource_of(device, "to");
    tensor out;
    {
        native_section ns;
        out = to_resource(t, r, copy);
    }
    if (!copy && is_qvalue(a)) return py::reinterpret_borrow<py::object>(a);
    return result_out(std::move(out), result_form::tensor);
}

void bind_placement(py::module_& m) {
    py::class_<py_device_scope>(m, "device_scope",
                                "A scope in which new values and ops go to one device; made by "
                                "q.device(...), used with `with`.")
        .def("__enter__", &py_device_scope::enter, py::return_value_policy::reference_internal)
        .def(
            "__exit__", [](py_device_scope& s, py::args) { s.exit(); }, "Leaves the scope.")
        .def_property_readonly("device", &py_device_scope::name, "The scope's device name.")
        .def("__repr__",
             [](const py_device_scope& s) { return "<isthmus.device_scope " + s.name() + ">"; });

    m.def(
        "device",
        [](const std::string& device) {
            require_init("device");
            const resource_id r = resource_of(device, "device");
            return std::make_unique<py_device_scope>(r, name_of(r));
        },
        py::arg("device"),
        "A scope for `with`: inside it, on this thread, new values are made on `device` (\"cpu\",\n"
        "\"cuda\", \"cuda:N\") and every op runs there, whatever its inputs (which are copied\n"
        "there through the coherence model). Scopes nest; the innermost wins.");

    m.def(
        "placement",
        [](py::args values) {
            require_init("placement");
            std::vector<tensor> ts;
            ts.reserve(values.size());
            for (py::handle v : values) ts.push_back(tensor_arg(v, "placement"));
            std::vector<const tensor*> ptrs;
            for (const tensor& t : ts) ptrs.push_back(&t);
            return name_of(choose_resource(ptrs));
        },
        "placement(*values)\n--\n\n"
        "The device an op on these values would run on now (the scheduling rule of\n"
        "docs/memory-model.md): \"cpu\", \"cuda:0\", ...");

    m.def(
        "set_transfer_threshold",
        [](int64_t elements) {
            ISTHMUS_CHECK(elements >= 0, value_error,
                          "set_transfer_threshold: expected a count of elements >= 0, got ",
                          elements);
            set_transfer_threshold(elements);
        },
        py::arg("elements"),
        "Ops whose inputs are valid only away from the default device move to it when they read\n"
        "at least this many elements (default 65536, or $ISTHMUS_TRANSFER_MIN_ELEMENTS).");
    m.def(
        "transfer_threshold", [] { return transfer_threshold(); },
        "The current transfer threshold in elements (see set_transfer_threshold).");

    m.def("to", value_to_device, py::arg("a"), py::arg("device"), py::arg("copy") = false,
          "`a` with its data on `device` (\"cpu\", \"cuda\", \"cuda:N\"), so later ops run there\n"
          "without a transfer. Without copy the same value is returned, now also valid on the\n"
          "device (its other copies stay valid); with copy=True a new value made on the device.\n"
          "A value sharing memory with NumPy or torch stays pinned there (use copy=True).");
}

} // namespace isthmus::pymod
