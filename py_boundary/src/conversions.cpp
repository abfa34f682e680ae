// Python <-> isthmus values: numbers, lists, arrays, sizes and text in; values back to Python.
#include "boundary/conversions.hpp"

#include "boundary/arrays.hpp"
#include "boundary/dlpack.hpp"
#include "boundary/dtypes.hpp"
#include "boundary/gil.hpp"
#include "boundary/qvalue_handle.hpp"

#include "isthmus/config.hpp"
#include "isthmus/error.hpp"

#include <pybind11/numpy.h>

#include <complex>
#include <limits>
#include <string>

namespace isthmus::boundary {

// ---- numbers ----

bool is_numpy_scalar(py::handle obj) {
    PyObject* o = obj.ptr();
    if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o) || PyComplex_CheckExact(o))
        return false;
    // A type check, not isinstance: PyObject_IsInstance looks `__class__` up on every object that
    // is not an instance (every array argument of every call takes this path).
    static PyTypeObject* generic =
        reinterpret_cast<PyTypeObject*>(py::object(numpy().attr("generic")).release().ptr());
    return PyObject_TypeCheck(o, generic) && !PyUnicode_Check(o) && !PyBytes_Check(o);
}

bool is_py_number(py::handle obj) {
    if (PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) ||
        PyComplex_Check(obj.ptr()))
        return true;
    return is_numpy_scalar(obj);
}

namespace {

// A typed number (a NumPy scalar, a qvalue scalar) is cast, as astype casts (Note [exact
// number conversion]); a complex one goes to a real dtype only as bool (its truth).
scalar convert_scalar(const scalar& s, std::optional<dtype> dt) {
    if (!dt || *dt == s.type()) return s;
    ISTHMUS_CHECK(!is_complex(s.type()) || is_complex(*dt) || is_bool(*dt), type_error,
                  "cannot convert the complex number ", s.to_string(), " to ", name(*dt));
    return s.cast(*dt);
}

} // namespace

// A Python number given a dtype converts by value (Note [exact number conversion]).
static scalar convert_number(const scalar& s, std::optional<dtype> dt) {
    return dt ? s.to_checked(*dt) : s;
}

scalar at_scalar_precision(const scalar& exact) {
    if (is_complex(exact.type()))
        return cscalar_dtype() == dtype::complex64 ? scalar(complex64_t(exact.to<complex128_t>()))
                                                   : exact;
    if (is_floating(exact.type())) return scalar::of(exact.to<double>(), scalar_dtype());
    return exact;
}

scalar scalar_from_py(py::handle obj, std::optional<dtype> dt) {
    PyObject* o = obj.ptr();
    if (PyBool_Check(o)) return convert_number(scalar(o == Py_True), dt);
    if (PyLong_Check(o)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow == 0) return convert_number(scalar(static_cast<int64_t>(v)), dt);
        if (overflow > 0) {
            const unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (!PyErr_Occurred()) return convert_number(scalar(static_cast<uint64_t>(u)), dt);
            PyErr_Clear();
        }
        // beyond 64 bits: nonzero, so True as a bool (NumPy's np.array(2**64, bool))
        if (dt && is_bool(*dt)) return scalar(true);
        if (dt && (is_inexact(*dt))) { // beyond 64 bits, but a float holds it (as in NumPy)
            const double d = PyLong_AsDouble(o);
            if (!(d == -1.0 && PyErr_Occurred())) return convert_number(scalar(d), dt);
            PyErr_Clear();
        }
        ISTHMUS_THROW(overflow_error, "Python integer ", py::str(obj).cast<std::string>(),
                      " out of bounds for ", dt ? std::string(name(*dt)) : std::string("int64"),
                      " (isthmus numbers are at most 64 bits)");
    }
    // Note [numpy float scalars]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~
    // np.float64 and np.complex128 subclass Python's float and complex; they keep their dtype (the
    // NumPy-scalar branch below), not the `scalar` precision.
    const bool numpy_scalar = !PyFloat_CheckExact(o) && !PyComplex_CheckExact(o) &&
                              (PyFloat_Check(o) || PyComplex_Check(o)) && is_numpy_scalar(obj);
    if (PyFloat_Check(o) && !numpy_scalar) {
        const scalar exact(PyFloat_AS_DOUBLE(o));
        return dt ? convert_number(exact, dt) : at_scalar_precision(exact); // exact, then dt
    }
    if (PyComplex_Check(o) && !numpy_scalar) {
        const scalar exact(complex128_t(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
        return dt ? convert_number(exact, dt) : at_scalar_precision(exact);
    }
    if (is_py_number(obj)) { // a NumPy scalar: keeps its dtype
        const dtype own = dtype_from_numpy(obj.attr("dtype"));
        scalar s;
        switch (own) {
        case dtype::bool_:
            s = scalar(obj.attr("item")().cast<bool>());
            break;
        case dtype::int64:
            s = scalar(obj.attr("item")().cast<int64_t>());
            break;
        case dtype::uint64:
            s = scalar(obj.attr("item")().cast<uint64_t>());
            break;
        case dtype::complex64:
            s = scalar(complex64_t(obj.attr("item")().cast<std::complex<double>>()));
            break;
        case dtype::complex128:
            s = scalar(obj.attr("item")().cast<std::complex<double>>());
            break;
        default:
            s = scalar::of(obj.attr("item")().cast<double>(), own);
            break;
        }
        return convert_scalar(s, dt);
    }
    ISTHMUS_THROW(type_error, "expected a number, got ", type_name(obj));
}

scalar scalar_from_tensor(const tensor& t) {
    switch (t.dtype()) {
    case dtype::bool_:
        return scalar(t.item<bool>());
    case dtype::int64:
        return scalar(t.item<int64_t>());
    case dtype::uint64:
        return scalar(t.item<uint64_t>());
    case dtype::complex64:
        return scalar(t.item<complex64_t>());
    case dtype::complex128:
        return scalar(t.item<complex128_t>());
    default:
        return scalar::of(t.item<double>(), t.dtype());
    }
}

// ---- values from Python ----

namespace {

// Note [lists]
// ~~~~~~~~~~~~
// A list (or tuple) becomes a tensor through np.asarray, so nested lists get NumPy's shape rules
// and dtype inference, with one exception that follows Quasar: Python floats make `scalar` tensors
// (float32 unless init(precision="float64")) and complex numbers `cscalar` ones, where NumPy would
// pick float64/complex128. Integers stay int64 and booleans bool, as in NumPy. A list that holds a
// string or a qvalue at its top level becomes a 1-d cell (Quasar's {...}) of the converted elements
// instead. A list of integers that NumPy makes float64 (it mixes values past int64's and uint64's
// ranges) stays float64: the scalar dtype is only for lists that hold floats (a fuzz finding:
// float32 would round the integers).
bool list_is_cell(py::handle seq) {
    for (py::handle item : seq)
        if (py::isinstance<py::str>(item) || is_qvalue(item)) return true;
    return false;
}

// True when a nested list or tuple holds a float or complex number, Python's or NumPy's
// (Note [lists]). NumPy has already accepted the list, so its depth is bounded.
bool holds_inexact(py::handle obj) {
    PyObject* o = obj.ptr();
    if (PyList_Check(o) || PyTuple_Check(o)) {
        for (py::handle item : obj)
            if (holds_inexact(item)) return true;
        return false;
    }
    if (PyFloat_Check(o) || PyComplex_Check(o)) return true;
    static py::object* inexact = new py::object(numpy().attr("inexact"));
    return py::isinstance(obj, *inexact);
}

// Python's recursion check around a conversion that recurses into nested lists or cells, so a
// list that contains itself (or nests thousands deep) raises RecursionError instead of
// overflowing the C stack. See Note [cell cycles].
//
// Note [native nesting limit]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Python's limit alone is not enough. It counts Python frames and any library may raise it
// (torch.compile's inductor raises it to 2000), while a level of these conversions takes more C
// stack than a Python frame: after an inductor compile, a cell nested 1e5 deep crashed the process
// in to_py instead of raising. So the guard also caps the nesting of conversions on this thread at
// max_nesting, whatever the interpreter allows.
class recursion_guard {
public:
    static constexpr int max_nesting = 1000;
    explicit recursion_guard(const char* where) {
        if (depth_ >= max_nesting) {
            PyErr_Format(PyExc_RecursionError, "maximum nesting depth (%d) exceeded%s", max_nesting,
                         where);
            throw py::error_already_set();
        }
        if (Py_EnterRecursiveCall(where) != 0) throw py::error_already_set();
        ++depth_;
    }
    ~recursion_guard() {
        --depth_;
        Py_LeaveRecursiveCall();
    }
    recursion_guard(const recursion_guard&) = delete;
    recursion_guard& operator=(const recursion_guard&) = delete;

private:
    static thread_local int depth_;
};
thread_local int recursion_guard::depth_ = 0;

value cell_from_list(py::handle seq) {
    recursion_guard guard(" while converting a nested list to a cell");
    auto c = std::make_shared<cell>();
    for (py::handle item : seq) c->items.push_back(value_from_py(item, std::nullopt));
    c->shape = {static_cast<int64_t>(c->items.size())};
    return value(std::move(c));
}

value copy_value(const value& v, std::optional<dtype> dt) {
    switch (v.kind()) {
    case value_kind::tensor: {
        const tensor& t = v.as_tensor();
        native_section nogil;
        return value(t.to(dt.value_or(t.dtype()), /*copy=*/true));
    }
    case value_kind::scalar:
        return value(convert_scalar(v.as_scalar(), dt));
    case value_kind::cell: {
        ISTHMUS_CHECK(!dt, type_error, "value: dtype= does not apply to a cell");
        auto c = std::make_shared<cell>(v.as_cell()); // a new cell sharing the elements
        return value(std::move(c));
    }
    default:
        ISTHMUS_CHECK(!dt, type_error, "value: dtype= does not apply to a ", v.kind_name());
        return v;
    }
}

// A torch tensor (a type known to carry an exchange table): straight to its import. Out of line,
// so that value_in's frame, one per level of a nested list, stays small (a self-referential list
// must reach Python's recursion limit before the C stack's end, also under the sanitizers).
[[gnu::noinline]] value exchange_value(py::handle obj, const inbound& in) {
    return value(tensor_from_dlpack(obj, in.copy, py::none(), in.transient));
}

} // namespace

// Note [inbound rule]
// ~~~~~~~~~~~~~~~~~~~
// Every entry point that takes a Python object where a runtime value goes (q.value, q.asvalue,
// q.from_py, module functions, operators' array operands, plugin arguments, C++ from_py<tensor>)
// converts it here, so one kind of object meets one rule everywhere (docs/boundary.md has the
// table). In order:
// - a qvalue: the value itself (a copy for copy=always or another dtype; ValueError for that
//   with copy=never);
// - None, str: the none and string values (no dtype);
// - Python numbers and NumPy scalars: scalars (Note [exact number conversion]);
// - NumPy arrays: shared when the layout allows, else copied (Note [wrapping rules]);
// - torch tensors and other DLPack or CUDA-array-interface producers: shared through DLPack
//   (tensor_from_dlpack: tensors that require grad raise BufferError, conjugate/negative views
//   are resolved into a copy, CUDA data needs CUDA);
// - lists and tuples: a new tensor with NumPy's dtype inference (floats take the `scalar`
//   precision unless typed, Note [lists]); ragged ones and ones holding strings or values become
//   cells; copy=never raises ValueError, as np.asarray(list, copy=False) does;
// - anything else NumPy understands (buffer objects, __array__, __array_interface__) through
//   np.asarray: shared when NumPy shares, then as a NumPy array;
// - the rest: TypeError naming the entry point.
value value_in(py::handle obj, const inbound& in) {
    if (!in.dt && has_known_exchange_api(obj)) return exchange_value(obj, in);
    if (const value* v = qvalue_ptr(obj)) {
        if (in.copy == copy_policy::always) return copy_value(*v, in.dt);
        if (!in.dt || !v->is_tensor() || v->as_tensor().dtype() == *in.dt) {
            if (in.dt && !v->is_tensor()) return copy_value(*v, in.dt);
            return *v;
        }
        ISTHMUS_CHECK(in.copy != copy_policy::never, value_error, in.fn, ": a conversion from ",
                      name(v->as_tensor().dtype()), " to ", name(*in.dt),
                      " copies; pass copy=None (or True) to allow it");
        return copy_value(*v, in.dt);
    }
    if (obj.is_none()) {
        ISTHMUS_CHECK(!in.dt, type_error, in.fn, ": dtype= does not apply to None");
        return value();
    }
    if (py::isinstance<py::str>(obj)) {
        ISTHMUS_CHECK(!in.dt, type_error, in.fn, ": dtype= does not apply to a string");
        Py_ssize_t n = 0;
        const char* p = PyUnicode_AsUTF8AndSize(obj.ptr(), &n);
        if (!p) { // lone surrogates have no UTF-8 form (NUL characters are kept)
            PyErr_Clear();
            ISTHMUS_THROW(value_error, in.fn, ": the string ", py::repr(obj).cast<std::string>(),
                          " is not valid UTF-8 text (it holds a lone surrogate)");
        }
        return value(std::string(p, static_cast<size_t>(n)));
    }
    if (is_py_number(obj)) return value(scalar_from_py(obj, in.dt));
    if (py::isinstance<py::array>(obj)) return value(tensor_from_array(obj, in.copy, in.dt));
    if (is_dlpack_producer(obj)) { // torch tensors and other DLPack producers
        if (!in.dt) return value(tensor_from_dlpack(obj, in.copy, py::none(), in.transient));
        const tensor t = tensor_from_dlpack(
            obj, in.copy == copy_policy::never ? copy_policy::never : copy_policy::if_needed,
            py::none(), in.transient);
        if (t.dtype() == *in.dt && in.copy != copy_policy::always) return value(t);
        ISTHMUS_CHECK(in.copy != copy_policy::never, value_error, in.fn, ": a conversion from ",
                      name(t.dtype()), " to ", name(*in.dt),
                      " copies; pass copy=None (or True) to allow it");
        native_section nogil;
        return value(t.to(*in.dt, /*copy=*/true));
    }
    const bool sequence = py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj);
    if (sequence) {
        ISTHMUS_CHECK(in.copy != copy_policy::never, value_error, in.fn, ": a ", type_name(obj),
                      " cannot be shared without a copy; pass copy=None (or True)");
        if (list_is_cell(obj)) {
            ISTHMUS_CHECK(!in.dt, type_error, in.fn, ": dtype= does not apply to a cell");
            return cell_from_list(obj);
        }
    }
    // Lists, tuples and anything else NumPy understands (buffers, __array__ objects).
    py::object arr;
    if (sequence) {
        if (in.dt && *in.dt != dtype::bfloat16)
            arr = numpy().attr("asarray")(obj, numpy_dtype(*in.dt));
        else
            arr = numpy().attr("asarray")(obj);
    } else if (in.dt && *in.dt != dtype::bfloat16 && in.copy != copy_policy::never) {
        arr = numpy().attr("asarray")(obj, numpy_dtype(*in.dt)); // NumPy's cast, as for lists
    } else {
        try {
            // a copy asked for is made once, below (tensor_from_array)
            arr = asarray_with_copy(obj, in.copy == copy_policy::always ? copy_policy::if_needed
                                                                        : in.copy);
        } catch (py::error_already_set& e) {
            if (!e.matches(PyExc_ValueError) || in.copy != copy_policy::never) throw;
            ISTHMUS_THROW(value_error, in.fn, ": a ", type_name(obj),
                          " cannot be shared without a copy (it exposes no array memory)");
        }
    }
    ISTHMUS_CHECK(py::isinstance<py::array>(arr), type_error, in.fn, ": a ", type_name(obj),
                  " is not array-like");
    if (!sequence && arr.attr("dtype").attr("kind").cast<std::string>() == "O")
        ISTHMUS_THROW(type_error, in.fn,
                      ": expected an array-like (qvalue, NumPy array, torch tensor, number, "
                      "list, buffer), got ",
                      type_name(obj));
    const dtype inferred = dtype_from_numpy(arr.attr("dtype")); // rejects object/str arrays
    std::optional<dtype> target = in.dt;
    if (!target && sequence && (inferred == dtype::float64 || inferred == dtype::complex128) &&
        holds_inexact(obj)) {
        if (inferred == dtype::float64) target = scalar_dtype();
        if (inferred == dtype::complex128) target = cscalar_dtype();
    }
    // A list's array is a temporary: copied into memory of the runtime's own (a wrapped array
    // would stay pinned to the CPU for the tensor's life, Note [export pins]).
    const copy_policy policy = sequence ? copy_policy::always : in.copy;
    return value(tensor_from_array(arr, policy, target));
}

tensor tensor_in(py::handle obj, const inbound& in) {
    if (const value* v = qvalue_ptr(obj); v && v->is_tensor() && in.copy != copy_policy::always &&
                                          (!in.dt || v->as_tensor().dtype() == *in.dt))
        return v->as_tensor();
    value v = value_in(obj, in);
    if (v.is_tensor()) return v.as_tensor();
    if (v.is_scalar()) return v.as_scalar().to_tensor();
    ISTHMUS_THROW(type_error, in.fn,
                  ": expected an array-like (qvalue, NumPy array, torch tensor, number, list, "
                  "buffer), got ",
                  v.is_none() ? std::string("None") : type_name(obj),
                  v.is_none() ? "" : " holding a " + v.kind_name());
}

value value_from_py(py::handle obj, std::optional<dtype> dt) {
    return value_in(obj, {copy_policy::always, dt, "value"});
}

value assigned_value(py::handle item, dtype target) {
    // See Note [exact number conversion]: A[i] = 300 on int8 raises as NumPy 2 does.
    PyObject* o = item.ptr();
    if (PyBool_Check(o) || PyLong_Check(o) ||
        ((PyFloat_Check(o) || PyComplex_Check(o)) && !is_numpy_scalar(item)))
        return value(scalar_from_py(item, target));
    return asvalue(item);
}

value asvalue(py::handle obj) {
    return value_in(obj, {copy_policy::if_needed, std::nullopt, "asvalue"});
}

// ---- values to Python ----

namespace {

py::object cell_to_py(const cell& c, size_t dim, size_t& next) {
    recursion_guard guard(" while converting a cell to a list");
    py::list out;
    const int64_t n = dim < c.shape.size() ? c.shape[dim] : 0;
    for (int64_t i = 0; i < n; ++i) {
        if (dim + 1 == c.shape.size())
            out.append(to_py(c.items[next++]));
        else
            out.append(cell_to_py(c, dim + 1, next));
    }
    return out;
}

} // namespace

py::object to_py(const value& v) {
    switch (v.kind()) {
    case value_kind::none:
        return py::none();
    case value_kind::string:
        return py::str(v.as_string());
    case value_kind::tensor:
        return array_copy(v.as_tensor());
    case value_kind::scalar: {
        // A NumPy scalar of the value's dtype (what indexing a NumPy array gives).
        const tensor t = v.as_scalar().to_tensor();
        return array_copy(t)[py::tuple()];
    }
    case value_kind::cell: {
        const cell& c = v.as_cell();
        if (c.shape.empty()) return py::list();
        size_t next = 0;
        return cell_to_py(c, 0, next);
    }
    case value_kind::object:
        break;
    }
    ISTHMUS_THROW(type_error, "to_py: a ", v.kind_name(), " value has no Python equivalent");
}

// ---- text ----

std::string text_from_py(py::handle obj, const char* fn, const char* what) {
    ISTHMUS_CHECK(PyUnicode_Check(obj.ptr()), type_error, fn, ": ", what, " must be a str, got ",
                  type_name(obj));
    Py_ssize_t n = 0;
    const char* p = PyUnicode_AsUTF8AndSize(obj.ptr(), &n);
    if (!p) { // lone surrogates have no UTF-8 form
        PyErr_Clear();
        ISTHMUS_THROW(value_error, fn, ": ", what, " ", py::repr(obj).cast<std::string>(),
                      " is not valid Unicode text (it holds a lone surrogate)");
    }
    std::string out(p, static_cast<size_t>(n));
    ISTHMUS_CHECK(out.find('\0') == std::string::npos, value_error, fn, ": ", what,
                  " contains a NUL character");
    return out;
}

// ---- sizes ----

int64_t int64_from_py(py::handle obj, const char* fn, const char* what) {
    ISTHMUS_CHECK(PyIndex_Check(obj.ptr()) && !PyBool_Check(obj.ptr()), type_error, fn, ": ", what,
                  " must be an int, got ", type_name(obj));
    const auto n = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
    if (!n) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
    ISTHMUS_CHECK(overflow == 0, overflow_error, fn, ": ", what, " ",
                  py::str(n).cast<std::string>(), " does not fit in int64");
    return static_cast<int64_t>(v);
}

int64_t size_from_py(py::handle obj, const char* fn) {
    if (PyBool_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
        ISTHMUS_THROW(type_error, fn, ": sizes must be integers, got ", type_name(obj), " ",
                      py::repr(obj).cast<std::string>());
    const auto n = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
    if (!n) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
    ISTHMUS_CHECK(overflow <= 0, overflow_error, fn, ": size ", py::str(n).cast<std::string>(),
                  " does not fit in int64");
    ISTHMUS_CHECK(overflow == 0 && v >= 0, value_error, fn, ": sizes must be non-negative, got ",
                  py::str(n).cast<std::string>());
    return static_cast<int64_t>(v);
}

shape_t sizes_from_args(const py::args& args, const char* fn) {
    shape_t shape;
    if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) {
        py::handle seq = args[0];
        if (is_qvalue(seq)) { // a size vector held in a qvalue (e.g. from q.size)
            const value& v = qvalue_ref(seq);
            ISTHMUS_CHECK(v.is_tensor() && v.as_tensor().dim() == 1, type_error, fn,
                          ": sizes must be integers or one sequence of integers");
            for (int64_t s : v.as_tensor().to_vector<int64_t>()) {
                ISTHMUS_CHECK(s >= 0, value_error, fn, ": sizes must be non-negative, got ", s);
                shape.push_back(s);
            }
            return shape;
        }
        ISTHMUS_CHECK(py::isinstance<py::list>(seq) || py::isinstance<py::tuple>(seq) ||
                          py::isinstance<py::array>(seq),
                      type_error, fn,
                      ": sizes must be integers or one list/tuple of integers, got ",
                      type_name(seq));
        for (py::handle s : seq) shape.push_back(size_from_py(s, fn));
        return shape;
    }
    for (py::handle s : args) shape.push_back(size_from_py(s, fn));
    return shape;
}

} // namespace isthmus::boundary
