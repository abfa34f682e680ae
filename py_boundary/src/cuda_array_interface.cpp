// The CUDA array interface (v3): qvalue.__cuda_array_interface__ and imports from CuPy/Numba/torch.
#include "boundary/bool_bytes.hpp"
#include "boundary/dlpack.hpp"

#include "boundary/dtypes.hpp"
#include "boundary/exchange_streams.hpp"
#include "boundary/gil.hpp"
#include "boundary/qvalue_handle.hpp"
#include "boundary/session.hpp"

#include "isthmus/cuda.hpp"
#include "isthmus/python_ref.hpp"

#include <pybind11/numpy.h>

#include <cstdint>
#include <memory>
#include <unordered_map>

namespace isthmus::boundary {

// Note [cuda array interface]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `__cuda_array_interface__` is a dict describing device memory (shape, typestr, descr,
// data=(pointer, readonly), strides in bytes or None for C order, version 3, stream). Unlike DLPack
// it has no owner object and no deleter, so:
// - Export: the first access pins the storage to its CUDA device for the rest of that qvalue's
//   life (a weakref callback unpins), as `__array_interface__` does on the CPU; the consumer
//   (torch.as_tensor, CuPy, Numba) keeps the qvalue alive. `stream` is isthmus's stream for the
//   device: the consumer makes its own work wait for it, as the v3 protocol requires. When the
//   qvalue dies, isthmus's stream waits for the legacy default stream before the pin ends (Note
//   [export release order] in exchange_streams.hpp: the protocol names no consumer stream). Only
//   tensors located on a CUDA device (tensor::location(), Note [dlpack cuda]) have the attribute;
//   other values raise AttributeError, so that `hasattr` is False and consumers move on to
//   DLPack or NumPy. bfloat16 (no typestr) and views with negative strides (which consumers
//   mishandle) raise AttributeError too, which sends torch to `__dlpack__`.
// - Import: the pointer is wrapped on cuda_resource(cuda::pointer_device(ptr)), pinned, with a
//   reference to the exporting object as owner (dropped with the GIL when the last view dies,
//   after waiting for isthmus's stream: Note [dlpack streams]). A `stream` entry is honoured with
//   cuda::stream_wait_for (isthmus's stream waits through an event; the host does not).
//   Read-only data is copied (ValueError with copy=False), masks are refused, and every entry is
//   validated before anything is wrapped.

namespace {

// Pins held by `__cuda_array_interface__` exports, by qvalue. GIL-guarded.
std::unordered_map<PyObject*, py::object>& cai_pins() {
    static auto* pins = new std::unordered_map<PyObject*, py::object>();
    return *pins;
}

// Unpins when the exporting qvalue dies.
struct cai_pin {
    tensor t;
    resource_id resource;
    int device;
    cai_pin(tensor t_, resource_id r, int dev) : t(std::move(t_)), resource(r), device(dev) {}
    cai_pin(const cai_pin&) = delete;
    cai_pin& operator=(const cai_pin&) = delete;
    ~cai_pin() {
        try { // Note [export release order]
            cuda::stream_wait_for(device, release_wait_stream(false, nullptr));
        } catch (...) { // never throw from a destructor; at exit CUDA may be gone already
        }
        try {
            t.storage()->unpin(resource);
        } catch (...) { // never throw from a destructor; the pin count is the storage's
        }
    }
};

[[noreturn]] void no_interface(const std::string& why) {
    throw py::attribute_error("__cuda_array_interface__: " + why);
}

// A dict entry, or a null handle when absent.
py::handle entry(const py::dict& d, const char* key) {
    return PyDict_GetItemString(d.ptr(), key);
}

int64_t int_entry(py::handle x, const char* what) {
    ISTHMUS_CHECK(x && !PyBool_Check(x.ptr()) && PyLong_Check(x.ptr()), type_error,
                  "__cuda_array_interface__: ", what, " must be an int, got ",
                  x ? type_name(x) : std::string("nothing"));
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(x.ptr(), &overflow);
    if (overflow > 0) { // a pointer above 2^63
        const unsigned long long u = PyLong_AsUnsignedLongLong(x.ptr());
        if (!PyErr_Occurred()) return static_cast<int64_t>(u);
        PyErr_Clear();
    }
    ISTHMUS_CHECK(overflow == 0, value_error, "__cuda_array_interface__: ", what, " ",
                  py::str(x).cast<std::string>(), " does not fit in 64 bits");
    return static_cast<int64_t>(v);
}

std::vector<int64_t> int_tuple(py::handle x, const char* what) {
    ISTHMUS_CHECK(x && (py::isinstance<py::tuple>(x) || py::isinstance<py::list>(x)), type_error,
                  "__cuda_array_interface__: ", what, " must be a tuple of ints, got ",
                  x ? type_name(x) : std::string("nothing"));
    std::vector<int64_t> out;
    for (py::handle v : x) out.push_back(int_entry(v, what));
    return out;
}

} // namespace

py::dict cuda_array_interface(py::object self) {
    const value& v = qvalue_ref(self);
    if (!v.is_tensor())
        no_interface("only tensors on a CUDA device have one, this value is a " + v.kind_name());
    const tensor& t = v.as_tensor();
    const resource_id where = t.location();
    const int dev = cuda_ordinal(where);
    if (dev < 0)
        no_interface("the tensor is on " + get_resource(where).name() +
                     ", not on a CUDA device (use the buffer protocol, __array_interface__ or "
                     "__dlpack__)");
    if (t.dtype() == dtype::bfloat16)
        no_interface("bfloat16 has no typestr in the array interface; use __dlpack__ "
                     "(torch.from_dlpack) for bfloat16 tensors");
    for (int64_t d = 0; d < t.dim(); ++d)
        if (t.size(d) > 1 && t.stride(d) < 0)
            no_interface("the view has negative strides, which consumers such as PyTorch do not "
                         "accept; use __dlpack__ (which exports a copy) or A.contiguous()");
    require_init("__cuda_array_interface__");
    const resource_id res = cuda_resource(dev);

    void* data = nullptr;
    PyObject* key = self.ptr();
    auto& pins = cai_pins();
    const bool first = pins.find(key) == pins.end();
    std::unique_ptr<cai_pin> pin;
    {
        native_section nogil; // pinning may transfer
        if (first) {
            t.storage()->pin(res);
            pin = std::make_unique<cai_pin>(t, res, dev);
        }
        data = t.lock(LOCK_READ, res);
        t.unlock(LOCK_READ, res);
    }
    if (first) {
        py::capsule owner(pin.release(), [](void* p) { delete static_cast<cai_pin*>(p); });
        py::cpp_function on_death([owner, key](py::handle) { cai_pins().erase(key); });
        pins.emplace(key, py::weakref(self, on_death));
    }
    const auto isz = static_cast<int64_t>(t.itemsize());
    py::list shape, strides;
    for (int64_t d = 0; d < t.dim(); ++d) {
        shape.append(t.size(d));
        strides.append(t.stride(d) * isz);
    }
    py::object np_dt = numpy_dtype(t.dtype());
    py::dict out;
    out["version"] = 3;
    out["shape"] = py::tuple(shape);
    out["typestr"] = np_dt.attr("str");
    out["descr"] = np_dt.attr("descr");
    out["data"] = py::make_tuple(t.numel() == 0 ? uintptr_t{0} : reinterpret_cast<uintptr_t>(data),
                                 !t.is_writable()); // Note [read-only broadcast views]
    out["strides"] = t.is_contiguous() ? py::object(py::none()) : py::object(py::tuple(strides));
    out["stream"] = py::int_(reinterpret_cast<uintptr_t>(cuda::stream(dev)));
    return out;
}

tensor tensor_from_cuda_array_interface(py::handle obj, py::handle raw, copy_policy policy) {
    ISTHMUS_CHECK(py::isinstance<py::dict>(raw), type_error,
                  "__cuda_array_interface__ must be a dict, got ", type_name(raw));
    auto d = py::reinterpret_borrow<py::dict>(raw);

    // Validate every entry before touching the memory.
    const int64_t version = int_entry(entry(d, "version"), "version");
    ISTHMUS_CHECK(version >= 0, value_error, "__cuda_array_interface__: version ", version,
                  " is not a version");
    const shape_t shape = int_tuple(entry(d, "shape"), "shape");
    ISTHMUS_CHECK(static_cast<int64_t>(shape.size()) <= max_rank, value_error,
                  "__cuda_array_interface__: ", shape.size(), " dimensions (isthmus allows up to ",
                  max_rank, ")");
    int64_t numel = 1;
    for (int64_t n : shape) {
        ISTHMUS_CHECK(n >= 0, value_error, "__cuda_array_interface__: negative size ", n,
                      " in shape ", shape_str(shape));
        ISTHMUS_CHECK(!__builtin_mul_overflow(numel, n, &numel), value_error,
                      "__cuda_array_interface__: the element count of ", shape_str(shape),
                      " overflows");
    }
    py::handle typestr = entry(d, "typestr");
    ISTHMUS_CHECK(typestr && py::isinstance<py::str>(typestr), type_error,
                  "__cuda_array_interface__: typestr must be a str such as \"<f4\", got ",
                  typestr ? type_name(typestr) : std::string("nothing"));
    py::object np_dt;
    try {
        np_dt = numpy().attr("dtype")(typestr);
    } catch (py::error_already_set&) {
        ISTHMUS_THROW(type_error, "__cuda_array_interface__: typestr \"",
                      typestr.cast<std::string>(), "\" is not a NumPy type string");
    }
    ISTHMUS_CHECK(np_dt.attr("isnative").cast<bool>(), value_error,
                  "__cuda_array_interface__: typestr \"", typestr.cast<std::string>(),
                  "\" is not in native byte order");
    const dtype dt = dtype_from_numpy(np_dt); // type_error for dtypes isthmus lacks
    const auto isz = static_cast<int64_t>(itemsize(dt));

    py::handle data = entry(d, "data");
    ISTHMUS_CHECK(data && py::isinstance<py::tuple>(data) && py::len(data) == 2, type_error,
                  "__cuda_array_interface__: data must be a (pointer, readonly) tuple, got ",
                  data ? py::repr(data).cast<std::string>() : std::string("nothing"));
    const auto ptr = static_cast<uintptr_t>(int_entry(data[py::int_(0)], "data pointer"));
    const bool read_only = py::bool_(data[py::int_(1)]).cast<bool>();
    ISTHMUS_CHECK(ptr != 0 || numel == 0, value_error,
                  "__cuda_array_interface__: the data pointer is 0 for ", numel, " elements");

    shape_t strides;
    if (py::handle st = entry(d, "strides"); st && !st.is_none()) {
        const std::vector<int64_t> bytes = int_tuple(st, "strides");
        ISTHMUS_CHECK(bytes.size() == shape.size(), value_error,
                      "__cuda_array_interface__: ", bytes.size(), " strides for ", shape.size(),
                      " dimensions");
        for (int64_t b : bytes) {
            ISTHMUS_CHECK(b % isz == 0, value_error, "__cuda_array_interface__: stride ", b,
                          " bytes is not a multiple of the item size ", isz);
            strides.push_back(b / isz);
        }
    }
    if (numel > 0 && !strides.empty()) { // the byte span must be addressable
        int64_t span = 0;
        for (size_t i = 0; i < shape.size(); ++i) {
            int64_t part = 0;
            // |stride|, refusing INT64_MIN (its negation overflows)
            const int64_t a = strides[i] < 0 ? -(strides[i] + 1) : strides[i] - 1;
            int64_t elements = 0;
            ISTHMUS_CHECK(a < INT64_MAX && !__builtin_mul_overflow(a + 1, shape[i] - 1, &part) &&
                              !__builtin_add_overflow(span, part, &span) &&
                              !__builtin_add_overflow(span, 1, &elements) &&
                              !__builtin_mul_overflow(elements, isz, &part),
                          value_error, "__cuda_array_interface__: strides ", shape_str(strides),
                          " overflow for shape ", shape_str(shape));
        }
    }
    if (py::handle mask = entry(d, "mask"); mask && !mask.is_none())
        ISTHMUS_THROW(value_error, "__cuda_array_interface__: masked arrays are not supported "
                                   "(the mask entry is set); pass the unmasked data");
    std::optional<int64_t> stream_entry;
    if (py::handle s = entry(d, "stream"); s && !s.is_none()) stream_entry = int_entry(s, "stream");
    void* const stream = cai_producer_stream(stream_entry); // nullptr: the data is ready

    // The device: the pointer's (memory of no device is refused); device 0 for empty arrays.
    require_cuda("__cuda_array_interface__: the data is CUDA device memory", 0);
    int dev = 0;
    if (numel > 0) {
        try {
            dev = cuda::pointer_device(reinterpret_cast<const void*>(ptr));
        } catch (const value_error&) {
            ISTHMUS_THROW(value_error, "__cuda_array_interface__: the data pointer ",
                          reinterpret_cast<const void*>(ptr), " is not CUDA device memory");
        }
    }
    const resource_id res = cuda_resource(dev);
    // Note [misaligned device data]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // The GPU kernels load whole elements (a complex64 as one 8-byte word), and so would a copy
    // kernel: misaligned device data is refused, not copied.
    ISTHMUS_CHECK(ptr % static_cast<uintptr_t>(isz) == 0, value_error,
                  "__cuda_array_interface__: the CUDA data pointer ", reinterpret_cast<void*>(ptr),
                  " is not aligned to its ", isz,
                  "-byte elements, which neither isthmus's kernels nor a device copy can read; "
                  "pass an aligned array (e.g. a copy made by the producer)");
    const char* why = read_only ? "it is read-only (isthmus tensors are writable)" : nullptr;
    ISTHMUS_CHECK(!why || policy != copy_policy::never, value_error,
                  "cannot share the CUDA array without a copy: ", why,
                  "; pass copy=None (or True) to allow a copy");
    // See Note [cuda array interface]: the producer's work on its stream comes first.
    if (stream) cuda::stream_wait_for(dev, stream);
    if (numel == 0) return tensor::empty(shape, dt, res);
    void* p = reinterpret_cast<void*>(ptr);
    if (!why && dt == dtype::bool_) {
        bool valid = true;
        {
            native_section nogil;
            valid = bool_bytes_valid(p, shape, strides, res);
        }
        if (!valid) { // See Note [bool bytes]
            why = "it is a bool array holding bytes other than 0 and 1 (a copy reads them as "
                  "x != 0)";
            ISTHMUS_CHECK(policy != copy_policy::never, value_error,
                          "cannot share the CUDA array without a copy: ", why,
                          "; pass copy=None (or True) to allow a copy");
        }
    }
    if (why || policy == copy_policy::always) {
        tensor out = tensor::empty(shape, dt, res);
        native_section nogil;
        // See Note [bool bytes]: bools are read as byte != 0, whatever bytes they hold.
        out.copy_from(dt == dtype::bool_
                          ? bools_from_bytes(p, shape, strides, res)
                          : tensor::wrap(p, dt, shape, strides, res, {})); // checks the strides
        cuda::synchronize(dev); // the source may go away once we return
        return out;
    }
    // The exporting object stays alive while any view of the storage does.
    PyObject* keep = obj.inc_ref().ptr();
    try {
        return tensor::wrap(p, dt, shape, strides, res, [keep, dev]() {
            if (!python_alive()) return; // leaked at exit (Note [never finalise])
            wait_for_isthmus(dev);
            detail::decref(keep);
        });
    } catch (...) {
        Py_DECREF(keep); // tensor::wrap threw before its storage owned the callback
        throw;
    }
}

} // namespace isthmus::boundary
