// The qvalue type seen from the boundary: is an object a qvalue, and the value it holds.
#include "boundary/qvalue_handle.hpp"

#include "boundary/values.hpp"

#include <atomic>

namespace isthmus::boundary {

bool is_qvalue(py::handle obj) {
    // Every operator asks this of both operands: the qvalue type object is looked up in
    // pybind11's registry once it exists rather than on every call (it lives as long as the
    // process). An embedding program may convert values before the module registered the type:
    // then nothing is a qvalue yet.
    static std::atomic<PyTypeObject*> type{nullptr};
    PyTypeObject* t = type.load(std::memory_order_acquire);
    if (!t) {
        const py::detail::type_info* info = py::detail::get_type_info(typeid(value));
        if (!info) return false;
        t = info->type;
        type.store(t, std::memory_order_release);
    }
    return PyObject_TypeCheck(obj.ptr(), t) != 0;
}

const value* qvalue_ptr(py::handle obj) {
    if (!is_qvalue(obj)) return nullptr;
    // Note [qvalue fast load]: a qvalue instance has pybind11's simple layout (one C++ type, one
    // holder), whose first slot is the value's address once constructed; reading it skips the
    // type-registry lookups of a cast, which every operator did for each operand. A qvalue
    // still being constructed, or any other layout, takes pybind11's cast (which raises).
    const auto* inst = reinterpret_cast<const py::detail::instance*>(obj.ptr());
    if (inst->simple_layout && inst->simple_holder_constructed && inst->simple_value_holder[0])
        return static_cast<const value*>(inst->simple_value_holder[0]);
    return &obj.cast<const value&>();
}

// Note [outbound rule]: runtime values leave for Python through one of three doors
// (docs/boundary.md, "The outbound rule"): op results as qvalues (result_out: a tensor qvalue,
// or a scalar qvalue where NumPy gives a scalar: ops whose operands were all scalars, full
// reductions, an integer for every dimension), values handed to Python code as native objects
// (plugin results and C++ to_py: Python numbers, str, None; tensors as qvalues or, for C++
// hosts, NumPy arrays over the same memory), and explicit copies (A.to_py()).
py::object qvalue_of(value v) {
    return py::cast(std::move(v));
}

py::object result_out(tensor r, result_form f) {
    if (f == result_form::scalar_if_0d && r.dim() == 0)
        return qvalue_of(value(scalar_from_tensor(r)));
    return qvalue_of(value(std::move(r)));
}

} // namespace isthmus::boundary
