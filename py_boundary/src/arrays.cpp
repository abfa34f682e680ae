// NumPy arrays across the Python boundary: tensor_from_array (zero-copy where it can), array_copy.
#include "boundary/arrays.hpp"

#include "boundary/bool_bytes.hpp"
#include "boundary/conversions.hpp"
#include "boundary/dtypes.hpp"
#include "boundary/gil.hpp"
#include "boundary/qvalue_handle.hpp"

#include "isthmus/error.hpp"
#include "isthmus/python_ref.hpp"

#include <pybind11/numpy.h>

#include <bit>
#include <memory>
#include <vector>

namespace isthmus::boundary {

copy_policy copy_policy_of(py::handle copy, const char* fn) {
    if (copy.is_none()) return copy_policy::if_needed;
    ISTHMUS_CHECK(PyBool_Check(copy.ptr()), type_error, fn,
                  ": copy must be None, True or False, got ", type_name(copy));
    return copy.ptr() == Py_True ? copy_policy::always : copy_policy::never;
}

// np.asarray(obj, copy=...) on NumPy 2; NumPy 1's asarray has no `copy` keyword, so there
// copy=True is np.array(obj, copy=True) and copy=False refuses the objects that always need a
// conversion (lists, tuples, numbers), as NumPy 2 does.
py::object asarray_with_copy(py::handle obj, copy_policy policy) {
    static const bool numpy2 = numpy().attr("__version__").cast<std::string>().rfind("1.", 0) != 0;
    if (numpy2) {
        py::object copy = policy == copy_policy::always  ? py::object(py::bool_(true))
                          : policy == copy_policy::never ? py::object(py::bool_(false))
                                                         : py::object(py::none());
        return numpy().attr("asarray")(obj, py::arg("copy") = copy);
    }
    if (policy == copy_policy::always) return numpy().attr("array")(obj, py::arg("copy") = true);
    ISTHMUS_CHECK(
        policy != copy_policy::never ||
            !(py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj) || is_py_number(obj)),
        value_error, "from_py(copy=False): a ", type_name(obj), " cannot be shared without a copy");
    return numpy().attr("asarray")(obj);
}

namespace {

// Note [array release]
// ~~~~~~~~~~~~~~~~~~~~
// A tensor that wraps a NumPy array owns one reference to the array, dropped when the storage
// dies. That may happen on any thread (whichever drops the last view), with or without the GIL:
// the release drops it with detail::decref (directly with the GIL, deferred without it, leaked
// once the interpreter is gone: Note [deferred decref], Note [never finalise]). It captures the
// bare reference, a callable of one pointer that std::function keeps without a heap block;
// tensor::wrap runs it exactly once, or throws before owning it, and then the reference is
// still the caller's to drop.

// NumPy's flag bits (numpy/ndarraytypes.h), as pybind11 exposes them.
constexpr int np_aligned = py::detail::npy_api::NPY_ARRAY_ALIGNED_;
constexpr int np_writeable = py::detail::npy_api::NPY_ARRAY_WRITEABLE_;

} // namespace

tensor tensor_from_array(py::handle obj, copy_policy policy, std::optional<dtype> dt) {
    auto arr = py::reinterpret_borrow<py::array>(obj);
    // The descriptor and its fields are read from NumPy's structs, not through attributes: this
    // runs for every array argument of every call (a kernel launch's largest fixed cost).
    const py::dtype np_dt = arr.dtype();
    const dtype src_dt = dtype_from_numpy(np_dt);
    const dtype dst_dt = dt.value_or(src_dt);
    const auto isz = static_cast<int64_t>(arr.itemsize());
    const auto nd = static_cast<size_t>(arr.ndim());
    shape_t shape(nd), strides(nd);
    bool strides_ok = true;
    for (size_t i = 0; i < nd; ++i) {
        shape[i] = static_cast<int64_t>(arr.shape(static_cast<py::ssize_t>(i)));
        const auto s = static_cast<int64_t>(arr.strides(static_cast<py::ssize_t>(i)));
        if (s % isz != 0) strides_ok = false;
        strides[i] = s / isz;
    }
    const int flags = py::detail::array_proxy(arr.ptr())->flags;
    // '=' native, '|' not applicable (one byte), '<' or '>' explicit (See Note [wrapping rules]).
    const char order = np_dt.byteorder();
    const bool native = order == '=' || order == '|' ||
                        order == (std::endian::native == std::endian::big ? '>' : '<');
    const bool aligned = (flags & np_aligned) != 0;
    const bool writeable = (flags & np_writeable) != 0;

    // Note [wrapping rules]
    // ~~~~~~~~~~~~~~~~~~~~~
    // An array is shared without a copy when isthmus can address it as a tensor and write to it:
    // native byte order, aligned, strides that are whole elements, and writeable. A read-only array
    // is copied rather than wrapped, since isthmus tensors are always writable (copy=False then
    // raises ValueError).
    if (policy != copy_policy::always && dst_dt == src_dt) {
        const char* why = !native       ? "it is not in native byte order"
                          : !aligned    ? "it is not aligned"
                          : !strides_ok ? "its strides are not multiples of the item size"
                          : !writeable  ? "it is read-only (isthmus tensors are writable)"
                                        : nullptr;
        if (!why && src_dt == dtype::bool_ && numel_of(shape) > 0) {
            bool valid = true;
            {
                native_section nogil;
                valid = bool_bytes_valid(const_cast<void*>(arr.data()), shape, strides,
                                         MEMRESOURCE_CPU);
            }
            if (!valid) // See Note [bool bytes]
                why = "it is a bool array holding bytes other than 0 and 1 (a copy reads them "
                      "as x != 0)";
        }
        if (!why) {
            if (numel_of(shape) == 0) return tensor::empty(shape, src_dt, MEMRESOURCE_CPU);
            // See Note [array release].
            PyObject* keep = arr.inc_ref().ptr();
            try {
                return tensor::wrap(const_cast<void*>(arr.data()), src_dt, std::move(shape),
                                    std::move(strides), MEMRESOURCE_CPU,
                                    [keep] { detail::decref(keep); });
            } catch (...) {
                Py_DECREF(keep);
                throw;
            }
        }
        ISTHMUS_CHECK(policy != copy_policy::never, value_error,
                      "cannot share the array without a copy: ", why,
                      "; pass copy=None (or True) to allow a copy");
    } else {
        ISTHMUS_CHECK(policy != copy_policy::never, value_error,
                      "cannot share the array without a copy: a conversion from ", name(src_dt),
                      " to ", name(dst_dt), " copies");
    }

    // A copy into a new isthmus-owned tensor (never pinned).
    tensor out = tensor::empty(shape, dst_dt, MEMRESOURCE_CPU);
    if (out.numel() == 0) return out;
    py::array src = arr;
    if (!native || !aligned || !strides_ok) {
        src = numpy().attr("ascontiguousarray")(arr, np_dt.attr("newbyteorder")("="));
        strides = contiguous_strides(shape);
    }
    {
        native_section nogil;
        void* data = const_cast<void*>(src.data());
        // See Note [bool bytes]: bools are read as byte != 0, whatever bytes they hold.
        out.copy_from(src_dt == dtype::bool_
                          ? bools_from_bytes(data, shape, strides, MEMRESOURCE_CPU)
                          : tensor::wrap(data, src_dt, shape, strides, MEMRESOURCE_CPU, {}));
    }
    return out;
}

py::object array_copy(const tensor& t) {
    auto np_dt = py::reinterpret_borrow<py::dtype>(numpy_dtype(t.dtype()));
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
    py::array out(np_dt, shape);
    if (t.numel() == 0) return out;
    tensor dst = tensor::wrap(out.mutable_data(), t.dtype(), t.shape(), {}, MEMRESOURCE_CPU, {});
    {
        native_section nogil;
        dst.copy_from(t);
    }
    return out;
}

} // namespace isthmus::boundary
