// The qvalue type object: a CPython type of the project's own (layout, construction, lifetime).
#include "qvalue/qvalue.hpp"

#include <structmember.h> // PyMemberDef, T_PYSSIZET, READONLY

#include <new>

namespace isthmus::pymod {

// Note [qvalue type] (py_boundary/src/qvalue_handle.cpp) says why qvalue is not a pybind11
// class. Here it is made: a heap type from a spec, instances of qvalue_object, weak-referenceable
// (the NumPy and CUDA-array-interface exports pin through weakref callbacks), not subclassable
// (is_qvalue is an exact type compare). Methods, properties and operators are added by the
// binders through qvalue_class (bindings.hpp); the number slots and the buffer slots are set
// on the type after them (install_number_slots, bind_buffer).
namespace {

void qvalue_dealloc(PyObject* self) {
    auto* q = reinterpret_cast<boundary::qvalue_object*>(self);
    PyTypeObject* type = Py_TYPE(self);
    if (q->weakrefs) PyObject_ClearWeakRefs(self);
    q->v.~value();
    type->tp_free(self);
    Py_DECREF(type); // instances of heap types hold a reference to their type
}

// qvalue(obj=None, dtype=None): the same as isthmus.value(obj, dtype).
PyObject* qvalue_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static const char* kw[] = {"obj", "dtype", nullptr};
    PyObject* obj = Py_None;
    PyObject* dt = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:qvalue", const_cast<char**>(kw), &obj, &dt))
        return nullptr;
    try {
        require_init("qvalue()");
        value v = value_from_py(obj, optional_dtype(dt));
        PyObject* o = type->tp_alloc(type, 0);
        if (!o) return nullptr;
        auto* q = reinterpret_cast<boundary::qvalue_object*>(o);
        new (&q->v) value(std::move(v));
        q->weakrefs = nullptr;
        return o;
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

PyMemberDef qvalue_members[] = {
    {"__weaklistoffset__", T_PYSSIZET,
     static_cast<Py_ssize_t>(offsetof(boundary::qvalue_object, weakrefs)), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot qvalue_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&qvalue_dealloc)},
    {Py_tp_new, reinterpret_cast<void*>(&qvalue_new)},
    {Py_tp_members, qvalue_members},
    {Py_tp_doc, const_cast<char*>("qvalue(obj=None, dtype=None)\n--\n\n"
                                  "A native isthmus value: a tensor, scalar, string, cell or "
                                  "object. qvalue(obj, dtype) is isthmus.value(obj, dtype).")},
    {0, nullptr}};

PyType_Spec qvalue_spec = {"isthmus.qvalue", static_cast<int>(sizeof(boundary::qvalue_object)), 0,
                           Py_TPFLAGS_DEFAULT, qvalue_slots};

} // namespace

qvalue_class make_qvalue_type(py::module_& m) {
    PyObject* type = PyType_FromSpec(&qvalue_spec);
    if (!type) throw py::error_already_set();
    auto cls = qvalue_class(py::reinterpret_steal<py::object>(type));
    cls.attr("__module__") = "isthmus";
    m.attr("qvalue") = cls;
    // the module keeps the type for the life of the process (qvalues may outlive the module)
    boundary::set_qvalue_type(reinterpret_cast<PyTypeObject*>(cls.inc_ref().ptr()));
    return cls;
}

} // namespace isthmus::pymod
