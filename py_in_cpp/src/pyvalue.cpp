// pyvalue's operations on the CPython C API; each takes the GIL itself.
#include "embed.hpp"

#include <ostream>

namespace isthmus {

// Note [GIL per operation]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Every exported operation makes sure the calling thread holds the GIL and restores the previous
// state on return, so a pyvalue works on any thread, the GIL holder or not. When an enclosing
// isthmus scope holds it (python::gil, a C++ callback, or a template that took it once for a whole
// call) this is a thread-local check (Note [GIL fast path] in interpreter.cpp); otherwise one
// PyGILState_Ensure/Release pair. References are dropped the same way, so a pyvalue may be
// destroyed on a thread without the GIL; after the interpreter is gone (process exit) they are
// leaked instead (Note [never finalise]).
namespace detail {

namespace {
using embed::gil_hold;

std::string to_std_string(PyObject* s) {
    Py_ssize_t n = 0;
    const char* c = PyUnicode_AsUTF8AndSize(s, &n);
    if (!c) embed::throw_python_error();
    return std::string(c, static_cast<size_t>(n));
}

pyvalue name_object(std::string_view name) {
    return embed::check(PyUnicode_FromStringAndSize(name.data(), Py_ssize_t(name.size())));
}
} // namespace

gil_token gil_ensure() {
    if (embed::holds_gil_fast()) return {-1, nullptr};
    return embed::gil_acquire();
}

void gil_release(gil_token t) noexcept {
    if (t.state >= 0) embed::gil_restore(t);
}

// Note [vectorcall]
// ~~~~~~~~~~~~~~~~~
// Calls go through PyObject_Vectorcall with the arguments on the stack (keyword values after the
// positional ones, their names in one tuple), the same protocol CPython uses between Python
// functions, so a call through pyvalue builds no argument tuple or dict.
// PY_VECTORCALL_ARGUMENTS_OFFSET lets bound methods prepend `self` in place.
//
// Note [call arguments]
// ~~~~~~~~~~~~~~~~~~~~~
// A call proves once that its thread holds the GIL (gil_hold here) and converts C++ numbers to
// Python inside that section, with no further checks; pyvalue arguments are passed borrowed. Only
// other argument types (strings, containers, tensors, user converters) are converted before the
// call, under a gil_scope the template opens, whose GIL this call's check then finds. Measured: the
// template's scope and a check per converted argument were half of pyvalue's overhead over a bare
// pybind11 call (bench/README.md).
namespace {

/// A new reference to a number argument's Python number (objects are passed as they are).
PyObject* number_object(const call_arg& a) {
    switch (a.k) {
    case call_arg::kind::i64:
        return PyLong_FromLongLong(a.num.i);
    case call_arg::kind::u64:
        return PyLong_FromUnsignedLongLong(a.num.u);
    case call_arg::kind::f64:
        return PyFloat_FromDouble(a.num.d);
    case call_arg::kind::boolean:
        return Py_NewRef(a.num.b ? Py_True : Py_False);
    case call_arg::kind::object:
        break;
    }
    return nullptr;
}

/// The references the call made for number arguments, dropped when it ends.
class made_refs {
public:
    explicit made_refs(PyObject** slots) : slots_(slots) {}
    ~made_refs() {
        for (std::size_t i = 0; i < n_; ++i) Py_DECREF(slots_[i]);
    }
    made_refs(const made_refs&) = delete;
    made_refs& operator=(const made_refs&) = delete;
    void add(PyObject* o) { slots_[n_++] = o; }

private:
    PyObject** slots_;
    std::size_t n_ = 0;
};

} // namespace

pyvalue call0(_object* f) {
    gil_hold g;
    return embed::check(PyObject_CallNoArgs(f));
}

pyvalue call(_object* f, const call_arg* args, std::size_t n) {
    if (n == 0) return call0(f);
    gil_hold g;
    // One buffer: the vectorcall stack (a free slot, then n arguments), then the references
    // made for number arguments (at most n).
    constexpr std::size_t small = 8;
    PyObject* small_buf[2 * small + 1];
    std::vector<PyObject*> big;
    PyObject** stack = small_buf;
    if (n > small) {
        big.resize(2 * n + 1);
        stack = big.data();
    }
    made_refs made(stack + n + 1);
    auto object_of = [&](const call_arg& a) -> PyObject* {
        if (a.k == call_arg::kind::object) return a.obj;
        PyObject* o = number_object(a);
        if (!o) embed::throw_python_error();
        made.add(o);
        return o;
    };
    std::size_t npos = 0, nkw = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (!args[i].name) stack[1 + npos++] = object_of(args[i]);
    pyvalue kwnames;
    if (npos != n) {
        kwnames = embed::check(PyTuple_New(Py_ssize_t(n - npos)));
        for (std::size_t i = 0; i < n; ++i) {
            if (!args[i].name) continue;
            PyObject* key =
                PyUnicode_FromStringAndSize(args[i].name->data(), Py_ssize_t(args[i].name->size()));
            if (!key) embed::throw_python_error();
            PyTuple_SET_ITEM(kwnames.get(), Py_ssize_t(nkw), key);
            stack[1 + npos + nkw++] = object_of(args[i]);
        }
    }
    PyObject* r = PyObject_Vectorcall(f, stack + 1, npos | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                      kwnames.empty() ? nullptr : kwnames.get());
    return embed::check(r);
}

pyvalue getattr(_object* o, std::string_view name) {
    gil_hold g;
    pyvalue n = name_object(name);
    return embed::check(PyObject_GetAttr(o, n.get()));
}

bool hasattr(_object* o, std::string_view name) {
    gil_hold g;
    pyvalue n = name_object(name);
    PyObject* r = PyObject_GetAttr(o, n.get());
    if (r) {
        Py_DECREF(r);
        return true;
    }
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        return false;
    }
    embed::throw_python_error();
}

pyvalue getitem(_object* o, _object* key) {
    gil_hold g;
    return embed::check(PyObject_GetItem(o, key));
}

void delitem(_object* o, _object* key) {
    gil_hold g;
    if (PyObject_DelItem(o, key) < 0) embed::throw_python_error();
}

namespace {
using binary_fn = PyObject* (*)(PyObject*, PyObject*);
PyObject* power(PyObject* a, PyObject* b) {
    return PyNumber_Power(a, b, Py_None);
}
PyObject* ipower(PyObject* a, PyObject* b) {
    return PyNumber_InPlacePower(a, b, Py_None);
}
constexpr binary_fn binary_table[] = {PyNumber_Add,
                                      PyNumber_Subtract,
                                      PyNumber_Multiply,
                                      PyNumber_TrueDivide,
                                      PyNumber_FloorDivide,
                                      PyNumber_Remainder,
                                      power,
                                      PyNumber_MatrixMultiply,
                                      PyNumber_Lshift,
                                      PyNumber_Rshift,
                                      PyNumber_And,
                                      PyNumber_Or,
                                      PyNumber_Xor};
constexpr binary_fn inplace_table[] = {PyNumber_InPlaceAdd,
                                       PyNumber_InPlaceSubtract,
                                       PyNumber_InPlaceMultiply,
                                       PyNumber_InPlaceTrueDivide,
                                       PyNumber_InPlaceFloorDivide,
                                       PyNumber_InPlaceRemainder,
                                       ipower,
                                       PyNumber_InPlaceMatrixMultiply,
                                       PyNumber_InPlaceLshift,
                                       PyNumber_InPlaceRshift,
                                       PyNumber_InPlaceAnd,
                                       PyNumber_InPlaceOr,
                                       PyNumber_InPlaceXor};
} // namespace

pyvalue binary(binop op, _object* a, _object* b) {
    gil_hold g;
    return embed::check(binary_table[static_cast<int>(op)](a, b));
}

pyvalue inplace(binop op, _object* a, _object* b) {
    gil_hold g;
    return embed::check(inplace_table[static_cast<int>(op)](a, b));
}

pyvalue unary(unop op, _object* a) {
    gil_hold g;
    switch (op) {
    case unop::neg:
        return embed::check(PyNumber_Negative(a));
    case unop::pos:
        return embed::check(PyNumber_Positive(a));
    case unop::invert:
        return embed::check(PyNumber_Invert(a));
    case unop::abs:
        return embed::check(PyNumber_Absolute(a));
    case unop::not_: {
        const int r = PyObject_Not(a);
        if (r < 0) embed::throw_python_error();
        return pyvalue::steal(PyBool_FromLong(r));
    }
    }
    ISTHMUS_THROW(internal_error, "unknown unary operator");
}

pyvalue compare(cmpop op, _object* a, _object* b) {
    gil_hold g;
    static_assert(Py_LT == 0 && Py_LE == 1 && Py_EQ == 2 && Py_NE == 3 && Py_GT == 4 && Py_GE == 5);
    return embed::check(PyObject_RichCompare(a, b, static_cast<int>(op)));
}

int64_t len(_object* o) {
    gil_hold g;
    const Py_ssize_t n = PyObject_Length(o);
    if (n < 0) embed::throw_python_error();
    return n;
}

std::string str(_object* o) {
    gil_hold g;
    pyvalue s = embed::check(PyObject_Str(o));
    return to_std_string(s.get());
}

std::string repr(_object* o) {
    gil_hold g;
    pyvalue s = embed::check(PyObject_Repr(o));
    return to_std_string(s.get());
}

bool truthy(_object* o) {
    gil_hold g;
    const int r = PyObject_IsTrue(o);
    if (r < 0) embed::throw_python_error();
    return r != 0;
}

bool is_none(_object* o) {
    return o == Py_None;
}

bool isinstance(_object* o, _object* type) {
    gil_hold g;
    const int r = PyObject_IsInstance(o, type);
    if (r < 0) embed::throw_python_error();
    return r != 0;
}

pyvalue type(_object* o) {
    return pyvalue::borrow(reinterpret_cast<PyObject*>(Py_TYPE(o)));
}

std::string type_name(_object* o) {
    gil_hold g;
    return to_std_string(embed::check(PyType_GetName(Py_TYPE(o))).get());
}

bool check_type(_object* o, builtin_type kind) {
    gil_hold g;
    switch (kind) {
    case builtin_type::int_:
        return PyLong_Check(o) && !PyBool_Check(o);
    case builtin_type::float_:
        return PyFloat_Check(o);
    case builtin_type::bool_:
        return PyBool_Check(o);
    case builtin_type::str:
        return PyUnicode_Check(o);
    case builtin_type::bytes:
        return PyBytes_Check(o);
    case builtin_type::list:
        return PyList_Check(o);
    case builtin_type::tuple:
        return PyTuple_Check(o);
    case builtin_type::dict:
        return PyDict_Check(o);
    case builtin_type::callable:
        return PyCallable_Check(o) != 0;
    }
    ISTHMUS_THROW(internal_error, "check_type: unknown built-in type ", static_cast<int>(kind));
}

int64_t hash(_object* o) {
    gil_hold g;
    const Py_hash_t h = PyObject_Hash(o);
    if (h == -1 && PyErr_Occurred()) embed::throw_python_error();
    return h;
}

pyvalue enter(_object* o) {
    gil_hold g;
    pyvalue fn =
        embed::check(PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__enter__"));
    return embed::check(PyObject_CallOneArg(fn.get(), o));
}

void exit(_object* o) {
    gil_hold g;
    pyvalue fn =
        embed::check(PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__exit__"));
    embed::check(PyObject_CallFunctionObjArgs(fn.get(), o, Py_None, Py_None, Py_None, nullptr));
}

pyvalue iter(_object* o) {
    gil_hold g;
    return embed::check(PyObject_GetIter(o));
}

pyvalue next(_object* it) {
    gil_hold g;
    PyObject* r = PyIter_Next(it);
    if (!r && PyErr_Occurred()) embed::throw_python_error();
    return pyvalue::steal(r);
}

pyvalue make_tuple(const pyvalue* items, std::size_t n) {
    gil_hold g;
    pyvalue t = embed::check(PyTuple_New(Py_ssize_t(n)));
    for (std::size_t i = 0; i < n; ++i)
        PyTuple_SET_ITEM(t.get(), Py_ssize_t(i), Py_NewRef(items[i].get()));
    return t;
}

pyvalue make_list(const pyvalue* items, std::size_t n) {
    gil_hold g;
    pyvalue l = embed::check(PyList_New(Py_ssize_t(n)));
    for (std::size_t i = 0; i < n; ++i)
        PyList_SET_ITEM(l.get(), Py_ssize_t(i), Py_NewRef(items[i].get()));
    return l;
}

pyvalue make_dict(const kwarg* items, std::size_t n) {
    gil_hold g;
    pyvalue d = embed::check(PyDict_New());
    for (std::size_t i = 0; i < n; ++i)
        if (PyDict_SetItemString(d.get(), items[i].name.c_str(), items[i].value.get()) < 0)
            embed::throw_python_error();
    return d;
}

pyvalue make_slice(_object* start, _object* stop, _object* step) {
    gil_hold g;
    return embed::check(PySlice_New(start, stop, step));
}

} // namespace detail

// ---- pyvalue and the references ----

void pyvalue::throw_empty() {
    ISTHMUS_THROW(value_error, "the pyvalue is empty (default-constructed or moved from)");
}

pyvalue pyvalue::none() {
    return isthmus::none();
}

pyvalue::pyvalue(const attr_ref& r) : pyvalue(borrow(r.get())) {}
pyvalue::pyvalue(const item_ref& r) : pyvalue(borrow(r.get())) {}

_object* attr_ref::get() const {
    if (cache_.empty()) cache_ = detail::getattr(obj_, name_);
    return cache_.get();
}

void attr_ref::set(const pyvalue& v) {
    embed::gil_hold g;
    if (PyObject_SetAttrString(obj_, name_.c_str(), v.get()) < 0) embed::throw_python_error();
    cache_ = v;
}

_object* item_ref::get() const {
    if (cache_.empty()) cache_ = detail::getitem(obj_, key_.get());
    return cache_.get();
}

void item_ref::set(const pyvalue& v) {
    embed::gil_hold g;
    if (PyObject_SetItem(obj_, key_.get(), v.get()) < 0) embed::throw_python_error();
    cache_ = v;
}

std::ostream& operator<<(std::ostream& os, const pyvalue& v) {
    return os << (v.empty() ? std::string("<empty pyvalue>") : v.str());
}

// ---- modules ----

pyvalue pyimport(std::string_view name) {
    embed::gil_hold g;
    pyvalue n = detail::name_object(name);
    return embed::check(PyImport_Import(n.get()));
}

pyvalue builtins() {
    embed::gil_hold g;
    static PyObject* mod = nullptr; // See Note [never finalise]: kept for the process's life
    if (!mod) mod = pyimport("builtins").release();
    return pyvalue::borrow(mod);
}

namespace {
pyvalue run(std::string_view code, const pyvalue& globals, int start) {
    embed::gil_hold g;
    pyvalue d = globals.empty() ? embed::check(PyDict_New()) : globals;
    ISTHMUS_CHECK(PyDict_Check(d.get()), type_error, "pyeval/pyexec: globals must be a dict, got ",
                  Py_TYPE(d.get())->tp_name);
    if (!PyDict_GetItemString(d.get(), "__builtins__"))
        PyDict_SetItemString(d.get(), "__builtins__", PyEval_GetBuiltins());
    const std::string src(code);
    pyvalue r = embed::check(PyRun_String(src.c_str(), start, d.get(), d.get()));
    return start == Py_eval_input ? r : d;
}
} // namespace

pyvalue pyeval(std::string_view expression, const pyvalue& globals) {
    return run(expression, globals, Py_eval_input);
}

pyvalue pyexec(std::string_view code, const pyvalue& globals) {
    return run(code, globals, Py_file_input);
}

pyvalue none() {
    embed::gil_hold g;
    return pyvalue::borrow(Py_None);
}

pyvalue exception_of(const python_error& e) {
    return pyvalue::borrow(e.exception_object());
}

} // namespace isthmus
