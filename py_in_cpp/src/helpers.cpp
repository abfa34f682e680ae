// The PyQuasar manual's helpers: pyint, pybool, pyfunc, with/with_guard, and C++ callbacks for
// Python.
#include "embed.hpp"

#include <cmath>
#include <exception>
#include <iostream>
#include <memory>

namespace isthmus {

namespace {
using embed::gil_hold;
} // namespace

// ---- pyint, pybool ----

pyvalue pyint(long long v) {
    gil_hold g;
    return embed::check(PyLong_FromLongLong(v));
}

pyvalue pyint(unsigned long long v) {
    gil_hold g;
    return embed::check(PyLong_FromUnsignedLongLong(v));
}

pyvalue pyint(double v) {
    ISTHMUS_CHECK(std::isfinite(v) && v == std::trunc(v), value_error,
                  "pyint: expected an integral number, got ", v);
    gil_hold g;
    return embed::check(PyLong_FromDouble(v));
}

pyvalue pyint(std::string_view decimal) {
    // Python's int(str): arbitrary precision, optional sign, surrounding spaces, underscores.
    const std::string s(decimal);
    gil_hold g;
    PyObject* r = PyLong_FromString(s.c_str(), nullptr, 10);
    if (!r || s.find('\0') != std::string::npos) {
        Py_XDECREF(r);
        PyErr_Clear();
        ISTHMUS_THROW(value_error, "pyint: \"", s, "\" is not a decimal integer");
    }
    return pyvalue::steal(r);
}

pyvalue pyint(std::initializer_list<long long> values) {
    std::vector<pyvalue> items;
    items.reserve(values.size());
    for (long long v : values) items.push_back(pyint(v));
    return detail::make_list(items.data(), items.size());
}

pyvalue pybool(bool v) {
    gil_hold g;
    return pyvalue::steal(PyBool_FromLong(v ? 1 : 0));
}

// ---- context managers ----

namespace {
// __exit__(type, value, traceback) for the C++ exception `p`, or (None, None, None). Returns
// whether __exit__ asked to suppress the exception.
bool call_exit(const pyvalue& exit_fn, const pyvalue& ctx, std::exception_ptr p) {
    gil_hold g;
    if (!p) {
        embed::check(PyObject_CallFunctionObjArgs(exit_fn.get(), ctx.get(), Py_None, Py_None,
                                                  Py_None, nullptr));
        return false;
    }
    embed::raise_in_python(p); // the Python exception the C++ one maps to (or is)
    PyObject *type = nullptr, *val = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &val, &tb);
    PyErr_NormalizeException(&type, &val, &tb);
    pyvalue t = pyvalue::steal(type), v = pyvalue::steal(val);
    pyvalue b = tb ? pyvalue::steal(tb) : pyvalue::borrow(Py_None);
    pyvalue r = embed::check(
        PyObject_CallFunctionObjArgs(exit_fn.get(), ctx.get(), t.get(), v.get(), b.get(), nullptr));
    const int suppress = PyObject_IsTrue(r.get());
    if (suppress < 0) embed::throw_python_error();
    return suppress != 0;
}

pyvalue exit_method(const pyvalue& ctx) {
    gil_hold g;
    return embed::check(
        PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(ctx.get())), "__exit__"));
}
} // namespace

void with(const pyvalue& ctx, const std::function<void(pyvalue&)>& body) {
    pyvalue exit_fn = exit_method(ctx); // looked up before __enter__, as Python does
    pyvalue entered = ctx.enter();
    try {
        body(entered);
    } catch (...) {
        std::exception_ptr p = std::current_exception();
        if (!call_exit(exit_fn, ctx, p)) throw;
        return; // suppressed by __exit__
    }
    call_exit(exit_fn, ctx, nullptr);
}

void with_guard::enter(pyvalue ctx) {
    ctx_ = std::move(ctx);
    exit_ = exit_method(ctx_);
    entered_ = ctx_.enter();
}

void with_guard::exit() {
    if (exit_.empty()) return;
    pyvalue fn = std::move(exit_);
    call_exit(fn, ctx_, nullptr);
}

void with_guard::leave(bool unwinding) {
    if (exit_.empty()) return;
    pyvalue fn = std::move(exit_);
    if (!unwinding) {
        call_exit(fn, ctx_, nullptr); // may throw python_error: not unwinding
        return;
    }
    try { // unwinding: a destructor cannot see the exception in flight, so describe it
        call_exit(fn, ctx_,
                  std::make_exception_ptr(
                      runtime_error("a C++ exception is propagating out of the with_guard scope")));
    } catch (const std::exception& e) {
        std::cerr << "isthmus::with_guard: __exit__ raised while a C++ exception was "
                     "propagating: "
                  << e.what() << "\n";
    }
}

// ---- pyfunc ----

pyfunction::pyfunction(pyvalue f) : f_(std::move(f)) {
    ISTHMUS_CHECK(f_.is_callable(), type_error, "pyfunc: expected a callable Python object, got a ",
                  f_.type_name(), " (", f_.repr(), ")");
}

pyfunction pyfunc(const pyvalue& f) {
    return pyfunction(f);
}

// ---- C++ callbacks ----

// Note [callbacks]
// ~~~~~~~~~~~~~~~~
// A C++ callable becomes a built-in function object (PyCFunction with METH_VARARGS | METH_KEYWORDS)
// whose `self` is a capsule owning the std::function; the method definition is allocated once per
// callback and lives as long as the capsule. The call runs with the GIL held (Python holds it when
// it calls us); C++ exceptions are translated by embed::raise_in_python
// (Note [exception round trip]).
namespace {
struct callback_data {
    std::function<pyvalue(const pyvalue&, const pyvalue&)> fn;
    std::string name;
    PyMethodDef def{};
};
constexpr const char* callback_capsule = "isthmus.callback";

PyObject* invoke_callback(PyObject* self, PyObject* args, PyObject* kwargs) {
    auto* data = static_cast<callback_data*>(PyCapsule_GetPointer(self, callback_capsule));
    if (!data) return nullptr;
    embed::python_holds held; // Python called us with the GIL: pyvalue operations take it as held
    try {
        pyvalue a = pyvalue::borrow(args);
        pyvalue k = kwargs && PyDict_Size(kwargs) > 0 ? pyvalue::borrow(kwargs) : pyvalue();
        pyvalue r = data->fn(a, k);
        return r.empty() ? Py_NewRef(Py_None) : r.release();
    } catch (...) {
        embed::raise_in_python(std::current_exception());
        return nullptr;
    }
}

void delete_callback(PyObject* cap) {
    delete static_cast<callback_data*>(PyCapsule_GetPointer(cap, callback_capsule));
}
} // namespace

pyvalue py_callback(std::function<pyvalue(const pyvalue& args, const pyvalue& kwargs)> f,
                    std::string name) {
    ISTHMUS_CHECK(static_cast<bool>(f), value_error, "py_callback: the function is empty");
    gil_hold g;
    auto data = std::make_unique<callback_data>();
    data->fn = std::move(f);
    data->name = std::move(name);
    data->def.ml_name = data->name.c_str();
    data->def.ml_meth =
        reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&invoke_callback));
    data->def.ml_flags = METH_VARARGS | METH_KEYWORDS;
    data->def.ml_doc = "a C++ function (isthmus::py_callback)";
    PyObject* cap = PyCapsule_New(data.get(), callback_capsule, &delete_callback);
    if (!cap) embed::throw_python_error();
    callback_data* raw = data.release(); // owned by the capsule now
    pyvalue capsule = pyvalue::steal(cap);
    return embed::check(PyCFunction_NewEx(&raw->def, capsule.get(), nullptr));
}

} // namespace isthmus
