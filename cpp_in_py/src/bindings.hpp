// Shared declarations of the Python module's binding files: runtime state, conversions, binders.
#pragma once

#include "isthmus/config.hpp"
#include "isthmus/dtype.hpp"
#include "isthmus/error.hpp"
#include "isthmus/interrupt.hpp"
#include "isthmus/memory.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/ops/reduce.hpp"
#include "isthmus/storage.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <pybind11/pybind11.h>

#include <atomic>
#include <optional>
#include <string>

namespace isthmus::pymod {

namespace py = pybind11;

// ---- runtime state (module.cpp) ----

/// Throws runtime_error naming `what` unless init() was called (and destroy() was not since).
void require_init(const char* what);
/// True between init() and destroy().
bool initialized() noexcept;
/// A device name ("cpu", "cuda", "cuda:N", any case): -1 for the CPU, N for CUDA device N;
/// nullopt for anything else (each caller raises ValueError with its own message).
std::optional<int> device_number(const std::string& name);

// ---- releasing the GIL (module.cpp) ----

/// Counters of native sections (Note [native sections]).
struct native_counters {
    std::atomic<int> active{0};      ///< threads inside a native section now
    std::atomic<int> max_active{0};  ///< the most seen at once since the last reset
    std::atomic<int64_t> entered{0}; ///< sections entered since the last reset
};
native_counters& native_stats() noexcept;

/// Releases the GIL for native work (like py::gil_scoped_release) and counts the threads inside.
///
/// Note [native sections]: every binding that computes (ops, copies, transfers) runs its native
/// part inside a native_section, so other Python threads run meanwhile and two threads doing
/// large ops use two cores. The section also counts how many threads are inside at once, which
/// `isthmus._native_stats()` reports: the GIL test proves overlap by that count rather than by
/// timing. Three relaxed atomic operations per section cost a few nanoseconds.
class native_section {
public:
    native_section() noexcept {
        native_counters& c = native_stats();
        c.entered.fetch_add(1, std::memory_order_relaxed);
        const int now = c.active.fetch_add(1, std::memory_order_relaxed) + 1;
        int seen = c.max_active.load(std::memory_order_relaxed);
        while (now > seen &&
               !c.max_active.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
        }
    }
    ~native_section() { native_stats().active.fetch_sub(1, std::memory_order_relaxed); }
    native_section(const native_section&) = delete;
    native_section& operator=(const native_section&) = delete;

private:
    py::gil_scoped_release release_;
};

// ---- dtypes (conversions.cpp) ----

/// The dtype an argument names: a string ("float32", "f4", "bfloat16", ...), a numpy.dtype, a
/// NumPy scalar type or a Python type (float -> float64, as NumPy). Throws type_error.
dtype dtype_from_py(py::handle obj);
/// dtype_from_py, or nullopt for None.
std::optional<dtype> optional_dtype(py::handle obj);
/// The dtype of a NumPy array or numpy.dtype object; throws type_error for dtypes isthmus lacks
/// (object, strings, datetimes, longdouble, ...).
dtype dtype_from_numpy(const py::handle& np_dtype);
/// The numpy.dtype of `dt`; throws type_error for bfloat16, which NumPy has no dtype for.
py::object numpy_dtype(dtype dt);
/// What `A.dtype` shows: the numpy.dtype, or the string "bfloat16".
py::object dtype_attr(dtype dt);
/// The buffer-protocol format string of `dt` (struct module syntax); bfloat16 throws type_error.
const char* buffer_format(dtype dt);

// ---- values (conversions.cpp) ----

/// The `numpy` module (imported once).
py::module_& numpy();
/// The name of an object's type, for messages ("float", "list").
inline std::string type_name(py::handle obj) {
    return Py_TYPE(obj.ptr())->tp_name;
}
/// True for qvalue instances.
bool is_qvalue(py::handle obj);
/// The value a qvalue object holds (no copy), or nullptr when `obj` is not a qvalue.
const value* qvalue_ptr(py::handle obj);
/// A Python number (bool, int, float, complex, NumPy scalar) as a scalar, converted to `dt`
/// when given. Python floats become scalar_dtype() and complex numbers cscalar_dtype().
scalar scalar_from_py(py::handle obj, std::optional<dtype> dt);
/// True for NumPy scalars (np.float64, np.int32, ...; not Python's own numbers).
bool is_numpy_scalar(py::handle obj);
/// True for Python numbers and NumPy scalars (not 0-d arrays).
bool is_py_number(py::handle obj);
/// `q.value(obj, dtype)`: a new value holding a copy of `obj` (qvalue, number, string, list,
/// NumPy array or anything np.asarray accepts).
value value_from_py(py::handle obj, std::optional<dtype> dt);
/// `q.asvalue(obj)`: the qvalue itself, a zero-copy tensor for arrays, else value_from_py.
value asvalue(py::handle obj);
/// The value of `item` for an assignment into a tensor of dtype `target`: Python numbers
/// converted exactly to `target` (OverflowError when out of range), anything else as asvalue.
value assigned_value(py::handle item, dtype target);
/// An integer argument (anything with __index__, not bool): type_error otherwise, and
/// overflow_error naming `fn` and `what` when it does not fit in int64.
int64_t int64_from_py(py::handle obj, const char* fn, const char* what);
/// A str argument as UTF-8: type_error for other types, value_error naming `fn` and `what` for
/// text with a lone surrogate (no UTF-8 form) or a NUL character (C APIs would cut it there).
std::string text_from_py(py::handle obj, const char* fn, const char* what);
/// `A.to_py()`: a NumPy array copy (tensors), a NumPy scalar (scalars), str, None or a nested
/// list (cells).
py::object to_py(const value& v);
/// The single element of a tensor as a scalar of the tensor's dtype.
scalar scalar_from_tensor(const tensor& t);
/// Sizes given as varargs (`zeros(2, 3)`) or one sequence (`zeros([2, 3])`, `zeros((2, 3))`).
shape_t sizes_from_args(const py::args& args, const char* fn);
/// One non-negative size (Python int or anything with __index__).
int64_t size_from_py(py::handle obj, const char* fn);

// ---- NumPy exchange (buffer.cpp) ----

/// How tensor_from_array treats copies (NumPy 2's `copy=` keyword: True, None, False).
enum class copy_policy { always, if_needed, never };
/// A tensor from a NumPy array: zero-copy (wrapping the array, which is kept alive) when the
/// layout allows and `policy` is not always; a new tensor of dtype `dt` otherwise.
tensor tensor_from_array(py::handle array, copy_policy policy,
                         std::optional<dtype> dt = std::nullopt);
/// A new NumPy array holding a copy of `t`.
py::object array_copy(const tensor& t);

// ---- DLPack exchange (dlpack.cpp) ----

/// True for objects with `__dlpack__` or `__cuda_array_interface__` other than qvalues and NumPy
/// arrays (torch tensors, CuPy, Numba or JAX arrays, ...): the ones that cross through DLPack
/// (or the CUDA array interface) rather than the NumPy paths.
bool is_dlpack_producer(py::handle obj);
/// A tensor from a DLPack producer or capsule: zero-copy (the producer's memory, released through
/// its deleter) unless `policy` or the data (read-only, misaligned) asks for a copy. `device` is
/// from_dlpack's keyword (None, "cpu", "cuda[:n]", (1, 0), (2, n)). CUDA producers get isthmus's
/// stream (Note [dlpack streams]). Throws BufferError for unsupported devices and for tensors
/// that require grad, RuntimeError for CUDA data without CUDA, ValueError when policy is never
/// and a copy is needed.
tensor tensor_from_dlpack(py::handle obj, copy_policy policy, py::handle device = py::none());
/// The CUDA ordinal of resource `r` (cuda:n -> n), or -1 when `r` is not a registered CUDA device.
int cuda_ordinal(resource_id r);
/// Registers the CUDA devices when needed (keeping the default device) and checks that `device`
/// exists; RuntimeError "<what>, and CUDA is not available here: <cause>" without CUDA,
/// ValueError for a device number out of range.
void require_cuda(const std::string& what, int device);
/// Waits for isthmus's stream on `device` (a stream sync), swallowing errors: release paths of
/// foreign device memory (Note [dlpack streams] in dlpack.cpp).
void wait_for_isthmus(int device) noexcept;
/// A legacy DLPack capsule ("dltensor") sharing `t`'s memory as it is laid out (no checks, no
/// q.init() needed; the GIL must be held). The storage is pinned to the CPU (cuda_device -1) or
/// to CUDA device `cuda_device` until the consumer calls the deleter; for a device,
/// `consumer_stream` (a cudaStream_t, 1 the legacy default stream; nullptr: none) is made to
/// wait for isthmus's stream. Negative strides are passed as they are: callers exclude them.
py::object dlpack_capsule(const tensor& t, int cuda_device = -1, void* consumer_stream = nullptr);

// ---- __cuda_array_interface__ (cuda_array_interface.cpp) ----

/// `A.__cuda_array_interface__` (version 3) for a tensor located on a CUDA device; AttributeError
/// for other values, so that consumers testing hasattr move on to DLPack or NumPy.
py::dict cuda_array_interface(py::object self);
/// A tensor sharing the device memory that `interface` (the value of `obj`'s
/// `__cuda_array_interface__`: CuPy, Numba, torch) describes: `obj` is kept alive, the `stream`
/// entry waited for (an event), read-only data copied (ValueError with policy never).
/// RuntimeError without CUDA.
tensor tensor_from_cuda_array_interface(py::handle obj, py::handle interface, copy_policy policy);

// ---- ops (operators.cpp) ----

/// One operand of an elementwise op (Note [operands] in operators.cpp): a weak scalar (Python
/// numbers, scalar qvalues) or a tensor (qvalues, NumPy scalars and arrays, lists).
struct operand {
    bool is_scalar = false;
    scalar s;
    operand() = default;
    operand(const operand&) = delete; // tp may point into the object itself
    operand& operator=(const operand&) = delete;
    /// The tensor operand: one inside a qvalue (borrowed: the caller holds the Python object),
    /// or one made for it (arrays, lists, NumPy scalars) and kept here.
    const tensor& t() const { return *tp; }
    void set(tensor made) {
        own = std::move(made);
        tp = &own;
    }
    /// Note [operand lifetime]: only a tensor inside a live qvalue may be borrowed (the
    /// caller's reference keeps it alive for the whole op); every tensor made during the
    /// conversion (lists, arrays, DLPack) is moved in with `set`, so the operand owns it.
    void borrow(const tensor& in_qvalue) { tp = &in_qvalue; }
    /// The operand as a tensor (a 0-d one for scalars).
    tensor as_tensor() const { return is_scalar ? s.to_tensor() : *tp; }

private:
    tensor own;
    const tensor* tp = &own;
};
/// Reads an operand; false when `obj` is none of the kinds above.
bool to_operand(py::handle obj, operand& out);
/// Python's NotImplemented.
py::object not_implemented();
/// `a op b` as the operators compute it; NotImplemented for operands of other kinds.
py::object apply_binary(binary_op op, py::handle a, py::handle b);
/// Any array-like as a tensor (numbers as 0-d tensors); type_error naming `fn` otherwise.
tensor tensor_arg(py::handle obj, const char* fn);
/// `a op= b` on a tensor qvalue `self` (returns self); NotImplemented for scalars and operands
/// of other kinds (Python then computes `a = a op b`).
py::object apply_inplace(binary_op op, py::handle self, py::handle other);
/// `a @ b`; NotImplemented for operands of other kinds.
py::object apply_matmul(py::handle a, py::handle b);
/// `op(v)` for a scalar or tensor value; a scalar result for a scalar argument.
py::object apply_unary(unary_op op, const value& v);
/// A new qvalue for `r`; a scalar value when both operands were scalars.
py::object wrap_result(tensor r, bool both_scalars);
/// The `axis=` argument of reductions: None, an int or a sequence of ints.
reduce_axes axes_from_py(py::handle axis);
/// A reduction result: a scalar value for 0-d results (like NumPy's scalars), else a qvalue.
py::object reduced(tensor r);

/// `t[key]` with NumPy's rules (Note [Python subscripts] in operators.cpp): a view for basic
/// keys, a copy for advanced ones, a scalar value for one integer per dimension.
py::object tensor_getitem(const tensor& t, py::handle key);
/// `t[key] = item` with NumPy's rules: the item broadcast and converted to t's dtype.
void tensor_setitem(const tensor& t, py::handle key, py::handle item);

// ---- errors (errors.cpp) ----

/// Sets the Python error for a C++ exception (isthmus errors as in Note [error mapping], pybind11
/// errors as pybind11 would); for C callbacks (buffer protocol) that must return -1.
void set_python_error(std::exception_ptr p) noexcept;

// ---- binders, one per file ----

void bind_errors(py::module_& m);

/// Makes long native operations interruptible by Ctrl-C: installs the interrupt poll that runs
/// Python's signal handlers (Note [Python's interrupt poll], interrupts.cpp).
void install_interrupt_poll();
/// Raises the exception that stopped an interrupted operation (KeyboardInterrupt, or what a
/// user's signal handler raised).
void raise_interrupted(const interrupted& e) noexcept;
void bind_qvalue(py::module_& m);
void bind_buffer(py::module_& m);
void bind_functions(py::module_& m);
void bind_operators(py::module_& m);
/// Sets qvalue's number slots to the operators' functions (Note [number slots]).
void install_number_slots(py::handle cls);
void bind_module_ops(py::module_& m);
/// q.zeros ... q.eye and the random numbers (module_creation.cpp).
void bind_module_creation(py::module_& m);
/// A list of ints (or one int) of argument `what` of function `fn` (module_ops.cpp).
shape_t int_list(py::handle v, const char* fn, const char* what);
/// A number argument (a Python or NumPy number, a scalar qvalue) (module_ops.cpp).
scalar scalar_arg(py::handle v, const char* fn, const char* what);
void bind_qvalue_methods(py::module_& m);
void bind_dlpack(py::module_& m);
void bind_plugins(py::module_& m);
void bind_placement(py::module_& m);

} // namespace isthmus::pymod
