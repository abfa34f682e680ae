// q.native_function: plugin functions as a CPython type with vectorcall, their attributes.
#include "native_function.hpp"

#include "plugin_overloads.hpp"

#include "isthmus/small_vector.hpp"

#include <structmember.h>

#include <array>
#include <cstdint>
#include <span>
#include <utility>

namespace isthmus::pymod {

namespace pl = isthmus::plugin_host;

namespace {

// ---- native_function: a plugin function as a vectorcall Python object ---------------------------

// Note [native_function fast path]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Plugin functions are a small CPython type with vectorcall, not pybind11 functions: a call
// converts the positional arguments straight from the vector (Python floats and ints without any
// temporary Python objects), resolves the overload and calls the plugin; no argument tuple, no
// pybind11 dispatcher. That is what keeps a Python -> plugin call within the cost of a bare
// pybind11 call (bench/plugin_calls.py).
struct native_function_object {
    PyObject_HEAD vectorcallfunc vectorcall;
    std::shared_ptr<pl::function>* fn;
};

PyTypeObject* g_function_type = nullptr;

// Note [scalar fast path] (plugin_host.hpp), Python side: exact Python floats, ints and bools for a
// lone overload of number parameters go into ABI values here, with the same rules as the generic
// path (an int or bool is accepted for a real, a bool for an integer, a float never for an
// integer); anything else (NumPy scalars, int overflow, a mismatch) returns false and the call
// takes the generic path, which produces the usual conversions and messages.
bool int_fits(long long x, int32_t code) {
    switch (code) {
    case ISTHMUS_DT_INT8:
        return std::in_range<int8_t>(x);
    case ISTHMUS_DT_INT16:
        return std::in_range<int16_t>(x);
    case ISTHMUS_DT_INT32:
        return std::in_range<int32_t>(x);
    case ISTHMUS_DT_UINT8:
        return std::in_range<uint8_t>(x);
    case ISTHMUS_DT_UINT16:
        return std::in_range<uint16_t>(x);
    case ISTHMUS_DT_UINT32:
        return std::in_range<uint32_t>(x);
    case ISTHMUS_DT_UINT64:
        return x >= 0;
    default: // int64, or any integer (the plugin checks)
        return true;
    }
}

bool scalar_args(const isthmus_function* f, PyObject* const* args, Py_ssize_t n,
                 isthmus_value* out) {
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* o = args[i];
        const int32_t kind = f->params[i].kind;
        isthmus_value& v = out[i];
        v.owner = nullptr;
        if (PyFloat_CheckExact(o)) {
            if (kind != ISTHMUS_PARAM_FLOAT) return false;
            v.kind = ISTHMUS_VALUE_FLOAT, v.dtype = ISTHMUS_DT_FLOAT64;
            v.u.f = PyFloat_AS_DOUBLE(o);
        } else if (PyBool_Check(o)) {
            const bool b = o == Py_True;
            if (kind == ISTHMUS_PARAM_FLOAT)
                v.kind = ISTHMUS_VALUE_FLOAT, v.dtype = ISTHMUS_DT_BOOL, v.u.f = b ? 1.0 : 0.0;
            else
                v.kind = ISTHMUS_VALUE_BOOL, v.dtype = ISTHMUS_DT_BOOL, v.u.i = b ? 1 : 0;
        } else if (PyLong_CheckExact(o)) {
            if (kind == ISTHMUS_PARAM_BOOL) return false;
            int overflow = 0;
            const long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow || (kind == ISTHMUS_PARAM_INT && !int_fits(x, f->params[i].dtype)))
                return false; // the generic path raises OverflowError naming the parameter
            if (kind == ISTHMUS_PARAM_FLOAT)
                v.kind = ISTHMUS_VALUE_FLOAT, v.dtype = ISTHMUS_DT_INT64,
                v.u.f = static_cast<double>(x);
            else
                v.kind = ISTHMUS_VALUE_INT, v.dtype = ISTHMUS_DT_INT64, v.u.i = x;
        } else {
            return false;
        }
    }
    return true;
}

PyObject* fn_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    auto* f = reinterpret_cast<native_function_object*>(self);
    const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    try {
        if (kwnames && PyTuple_GET_SIZE(kwnames) > 0)
            ISTHMUS_THROW(type_error, (*f->fn)->name(),
                          ": plugin functions take positional arguments only");
        require_init((*f->fn)->name().c_str());
        const pl::function& fn = **f->fn;
        if (const isthmus_function* sf = fn.scalar_overload(); sf && sf->nparams == n) {
            std::array<isthmus_value, 8> raw;
            if (scalar_args(sf, args, n, raw.data())) {
                const value r = fn.call_abi(sf, raw.data(), static_cast<int32_t>(n));
                return result_to_py(r).release().ptr();
            }
        }
        // The parameters, when one overload takes this many arguments (for int conversions).
        const isthmus_function* only = fn.overloads().size() == 1 && fn.overloads()[0]->nparams == n
                                           ? fn.overloads()[0]
                                           : nullptr;
        auto param = [&](Py_ssize_t i) { return only ? &only->params[i] : nullptr; };
        small_vector<value, 8> vals; // up to eight arguments without a heap block
        vals.reserve(static_cast<size_t>(n));
        for (Py_ssize_t i = 0; i < n; ++i)
            vals.push_back(call_arg(args[i], fn.name(), static_cast<size_t>(i), param(i)));
        return result_to_py((*f->fn)->call(std::span<const value>(vals.data(), vals.size())))
            .release()
            .ptr();
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (...) {
        set_python_error(std::current_exception());
    }
    return nullptr;
}

void fn_dealloc(PyObject* self) {
    auto* f = reinterpret_cast<native_function_object*>(self);
    PyTypeObject* tp = Py_TYPE(self);
    delete f->fn;
    tp->tp_free(self);
    Py_DECREF(tp);
}

PyObject* fn_repr(PyObject* self) {
    auto* f = reinterpret_cast<native_function_object*>(self);
    return PyUnicode_FromString(("<native function " + (*f->fn)->signature() + " from plugin " +
                                 (*f->fn)->owner()->name() + ">")
                                    .c_str());
}

PyObject* fn_get_name(PyObject* self, void*) {
    return PyUnicode_FromString(
        (*reinterpret_cast<native_function_object*>(self)->fn)->name().c_str());
}
PyObject* fn_get_signature(PyObject* self, void*) {
    return PyUnicode_FromString(
        (*reinterpret_cast<native_function_object*>(self)->fn)->signature().c_str());
}
PyObject* fn_get_doc(PyObject* self, void*) {
    const auto& fn = *reinterpret_cast<native_function_object*>(self)->fn;
    std::string d = fn->signature();
    for (const isthmus_function* o : fn->overloads())
        if (o->doc && *o->doc) d += std::string("\n\n") + o->doc;
    return PyUnicode_FromString(d.c_str());
}
PyObject* fn_get_overloads(PyObject* self, void*) {
    try {
        const auto& fn = *reinterpret_cast<native_function_object*>(self)->fn;
        return function_overloads(*fn).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

PyObject* fn_get_plugin(PyObject* self, void*) {
    return PyUnicode_FromString(
        (*reinterpret_cast<native_function_object*>(self)->fn)->owner()->path().c_str());
}

PyObject* fn_get_plugin_name(PyObject* self, void*) {
    return PyUnicode_FromString(
        (*reinterpret_cast<native_function_object*>(self)->fn)->owner()->name().c_str());
}

// The `<name><suffix>` function of the same plugin, `closure` the suffix: "_vjp" (Note [derived
// backward] in isthmus/plugin/derive.hpp) or "_jvp" (Note [derived forward mode]); or None.
PyObject* fn_get_derived(PyObject* self, void* closure) {
    try {
        const auto& fn = *reinterpret_cast<native_function_object*>(self)->fn;
        const std::string n = fn->name() + static_cast<const char*>(closure);
        if (!fn->owner()->has_function(n)) Py_RETURN_NONE;
        return wrap_function(fn->owner()->get_function(n)).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

PyGetSetDef fn_getset[] = {{"__name__", fn_get_name, nullptr, nullptr, nullptr},
                           {"signature", fn_get_signature, nullptr, nullptr, nullptr},
                           {"__doc__", fn_get_doc, nullptr, nullptr, nullptr},
                           {"plugin_path", fn_get_plugin, nullptr, nullptr, nullptr},
                           {"plugin", fn_get_plugin_name, nullptr,
                            "The name of the plugin the function comes from.", nullptr},
                           {"overloads", fn_get_overloads, nullptr,
                            "The overloads as dicts: name, signature, doc, result and params "
                            "(each: name, kind, dtype, ndim, vec_len, flags, type_name, type).",
                            nullptr},
                           {"vjp", fn_get_derived, nullptr,
                            "The backward pass derived from a generic function: <name>_vjp of "
                            "the same plugin, called with the arguments and one gradient per "
                            "result, returning one gradient per parameter (None: not "
                            "differentiable); None for a function registered with concrete types.",
                            const_cast<char*>("_vjp")},
                           {"jvp", fn_get_derived, nullptr,
                            "The forward mode derived from a generic function registered with "
                            "ip::with_jvp: <name>_jvp of the same plugin, called with the "
                            "arguments and one tangent per differentiable parameter, returning "
                            "the results and then their tangents; None otherwise.",
                            const_cast<char*>("_jvp")},
                           {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMemberDef fn_members[] = {{"__vectorcalloffset__", T_PYSSIZET,
                             static_cast<Py_ssize_t>(offsetof(native_function_object, vectorcall)),
                             READONLY, nullptr},
                            {nullptr, 0, 0, 0, nullptr}};

} // namespace

void make_function_type(py::module_& m) {
    static PyType_Slot slots[] = {{Py_tp_dealloc, reinterpret_cast<void*>(&fn_dealloc)},
                                  {Py_tp_call, reinterpret_cast<void*>(&PyVectorcall_Call)},
                                  {Py_tp_repr, reinterpret_cast<void*>(&fn_repr)},
                                  {Py_tp_getset, fn_getset},
                                  {Py_tp_members, fn_members},
                                  {0, nullptr}};
    // Only wrap_function makes them: without DISALLOW_INSTANTIATION the type inherited
    // object's tp_new, and q.native_function() (or copy.copy of one) made an object without a
    // function, which crashed on its first use.
    static PyType_Spec spec = {
        "isthmus.native_function", sizeof(native_function_object), 0,
        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
    PyObject* t = PyType_FromSpec(&spec);
    if (!t) throw py::error_already_set();
    g_function_type = reinterpret_cast<PyTypeObject*>(t);
    m.add_object("native_function", py::reinterpret_borrow<py::object>(t));
}

py::object wrap_function(std::shared_ptr<pl::function> fn) {
    PyObject* o = g_function_type->tp_alloc(g_function_type, 0);
    if (!o) throw py::error_already_set();
    auto* f = reinterpret_cast<native_function_object*>(o);
    f->vectorcall = &fn_vectorcall;
    f->fn = new std::shared_ptr<pl::function>(std::move(fn));
    return py::reinterpret_steal<py::object>(o);
}

bool is_native_function(py::handle h) {
    return g_function_type && Py_TYPE(h.ptr()) == g_function_type;
}

} // namespace isthmus::pymod
