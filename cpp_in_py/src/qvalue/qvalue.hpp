// The qvalue type in Python: what its files in this folder share, and their binders.
//
// Every attribute of qvalue is defined in this folder (C++) or in isthmus/_qvalue_python.py
// (the attributes written in Python, attached to the type once at import):
//   type.cpp          the CPython type: layout, construction, lifetime (Note [qvalue type])
//   class.cpp         attributes, repr, str, locks, cells, subscripts' entry points
//   methods.cpp       methods in NumPy's spelling: reshape, T, squeeze, cumsum, clip, fill, to...
//   operators.cpp     operators and in-place forms (also the engine of q.add and friends)
//   number_slots.cpp  the operators as CPython number slots (the fast path of a + b)
//   subscripts.cpp    A[key] and A[key] = v with NumPy's rules
//   buffer.cpp        the buffer protocol, __array_interface__, __array__; from_py, asvalue
//   dlpack.cpp        __dlpack__, __dlpack_device__; q.from_dlpack
//   autograd.cpp      requires_grad, grad, grad_fn, is_leaf, backward, detach, retain_grad
// The boundary's view of the type (the handle, the caster) is py_boundary's
// (boundary/qvalue_handle.hpp): the embedded interpreter shares it.
#pragma once

#include "bindings.hpp"

#include <optional>

namespace isthmus::pymod {

// ---- the type (type.cpp; class.cpp adds its attributes) ----

/// The qvalue type as a binding target (Note [qvalue type]): pybind11 functions become its
/// methods and read-only properties, with pybind11's argument handling (the first argument is
/// the qvalue, through the caster in boundary/qvalue_handle.hpp).
class qvalue_class : public py::object {
public:
    explicit qvalue_class(py::object type) : py::object(std::move(type)) {}
    /// Adds method `name` (an overload when it exists already, as pybind11 classes do).
    template <typename F, typename... Extra>
    qvalue_class& def(const char* name, F&& f, const Extra&... extra) {
        py::cpp_function cf(std::forward<F>(f), py::name(name), py::is_method(*this),
                            py::sibling(py::getattr(*this, name, py::none())), extra...);
        py::setattr(*this, cf.attr("__name__"), cf);
        // a class that defines __eq__ and not __hash__ is unhashable (Python's data model)
        if (std::string(name) == "__eq__" &&
            !PyDict_Contains(reinterpret_cast<PyTypeObject*>(ptr())->tp_dict,
                             py::str("__hash__").ptr()))
            py::setattr(*this, "__hash__", py::none());
        return *this;
    }
    /// Adds a read-only property computed by `getter` (which takes the qvalue).
    template <typename G>
    qvalue_class& def_property_readonly(const char* name, G&& getter, const char* doc = nullptr) {
        py::cpp_function fget(std::forward<G>(getter), py::is_method(*this));
        PyObject* prop = PyObject_CallFunctionObjArgs(reinterpret_cast<PyObject*>(&PyProperty_Type),
                                                      fget.ptr(), Py_None, Py_None,
                                                      doc ? py::str(doc).ptr() : Py_None, nullptr);
        if (!prop) throw py::error_already_set();
        py::setattr(*this, name, py::reinterpret_steal<py::object>(prop));
        return *this;
    }
};
/// Makes the qvalue type and adds it to the module as `qvalue` (bind_qvalue calls it first).
qvalue_class make_qvalue_type(py::module_& m);

// ---- operators (operators.cpp; number_slots.cpp, subscripts.cpp) ----

/// One operand of an elementwise op (Note [operands] in operators.cpp): a weak scalar (Python
/// numbers, scalar qvalues) or a tensor (qvalues, NumPy scalars and arrays, lists).
struct operand {
    bool is_scalar = false;
    /// A Python number (bool, int, float, complex; floats held at full precision: Note [python
    /// numbers at full precision] in operators.cpp), the weak side beside a scalar qvalue.
    bool python_number = false;
    scalar s;
    operand() = default;
    operand(const operand&) = delete; // tp may point into the object itself
    operand& operator=(const operand&) = delete;
    /// The tensor operand: one inside a qvalue (borrowed: the caller holds the Python object),
    /// or one made for it (arrays, lists, NumPy scalars) and kept here.
    const tensor& t() const { return *tp; }
    void set(tensor made) {
        own.emplace(std::move(made));
        tp = &*own;
    }
    /// Note [operand lifetime]
    /// ~~~~~~~~~~~~~~~~~~~~~~~
    /// Only a tensor inside a live qvalue may be borrowed (the caller's reference keeps it alive
    /// for the whole op); every tensor made during the conversion (lists, arrays, DLPack) is moved
    /// in with `set`, so the operand owns it.
    void borrow(const tensor& in_qvalue) { tp = &in_qvalue; }
    /// The operand as a tensor beside a tensor of dtype `other`: a scalar becomes a 0-d tensor
    /// of the dtype it promotes to weakly (NEP 50: float32 beside 0.3 stays float32).
    tensor as_tensor_beside(dtype other) const {
        if (!is_scalar) return *tp;
        return s.to_tensor().to(promote_with_scalar(other, kind_of(s.type())));
    }

private:
    std::optional<tensor> own; // made only for a converted operand (qvalues are borrowed)
    const tensor* tp = nullptr;
};
/// Reads an operand; false when `obj` is none of the kinds above.
bool to_operand(py::handle obj, operand& out);
/// Python's NotImplemented.
py::object not_implemented();
/// `a op b` as the operators compute it; NotImplemented for operands of other kinds.
py::object apply_binary(binary_op op, py::handle a, py::handle b);
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
/// argmin/argmax over the flattened tensor `t` (result `r`): with keepdims, shape (1, ..., 1).
tensor flat_index(tensor r, const tensor& t, bool keepdims);

/// `t[key]` with NumPy's rules (Note [Python subscripts] in subscripts.cpp): a view for basic
/// keys, a copy for advanced ones, a scalar value for one integer per dimension.
py::object tensor_getitem(const tensor& t, py::handle key);
/// `t[key] = item` with NumPy's rules: the item broadcast and converted to t's dtype.
void tensor_setitem(const tensor& t, py::handle key, py::handle item);

// ---- binders ----

void bind_qvalue(py::module_& m);
void bind_buffer(py::module_& m);
void bind_operators(py::module_& m);
void bind_qvalue_methods(py::module_& m);
void bind_dlpack(py::module_& m);
/// requires_grad, grad, grad_fn, is_leaf, requires_grad_, retain_grad, detach, backward.
void bind_qvalue_autograd(py::module_& m);
/// Sets qvalue's number slots to the operators' functions (Note [number slots]); after every
/// other binder.
void install_number_slots(py::handle cls);

/// The tensor a qvalue method works on; type_error naming `what` for another kind of value.
inline const tensor& tensor_of(const value& v, const char* what) {
    ISTHMUS_CHECK(v.is_tensor(), type_error, what, " needs a tensor value, this is a ",
                  v.kind_name());
    return v.as_tensor();
}

/// A Python value (a qvalue, None) as an optional tensor (autograd.cpp); type_error naming
/// `what` otherwise.
tensor optional_tensor(py::handle h, const char* what);

} // namespace isthmus::pymod
