// Plugins from Python: import_native, compile_string/compile_file, and the values of plugin calls.
#include "bindings.hpp"

#include "isthmus/plugin_host.hpp"
#include "native_function.hpp"
#include "plugin_overloads.hpp"
#include "plugin_values.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <structmember.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace isthmus::pymod {

namespace pl = isthmus::plugin_host;

namespace {

// ---- values crossing into plugin calls ---------------------------------------------------------

const char* code_name(int32_t code) {
    static const char* const names[] = {
        "bool",   "int8",    "int16",    "int32",   "int64",   "uint8",     "uint16",    "uint32",
        "uint64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
    return code >= 0 && code <= ISTHMUS_DT_COMPLEX128 ? names[code] : "any";
}

} // namespace

// Note [runtime-made types refuse __new__]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// pybind11 gives a class without a constructor a __new__ that makes an instance whose C++ value
// was never constructed, and `q.native_kernel.__new__(q.native_kernel)` then crashed at its
// repr or first use. The types whose instances only the runtime makes (plugin kernels, objects,
// events) get a __new__ that raises TypeError instead; pybind11 makes the real ones without
// calling __new__ (it allocates them itself), so nothing else changes. q.native_function, a
// type of its own, is made non-instantiable by its type flags (native_function.cpp).
void refuse_python_new(py::handle cls, const char* made_by) {
    const std::string type_name = py::str(cls.attr("__qualname__")).cast<std::string>();
    py::cpp_function refuse([type_name, made_by](py::args, py::kwargs) -> py::object {
        throw py::type_error("cannot create 'isthmus." + type_name + "' instances: " + made_by);
    });
    py::setattr(cls, "__new__",
                py::reinterpret_steal<py::object>(PyStaticMethod_New(refuse.ptr())));
}

std::string int_text(py::handle h) {
    const auto bits = h.attr("bit_length")().cast<int64_t>();
    if (bits <= 256) return py::str(h).cast<std::string>();
    return std::string(PyObject_RichCompareBool(h.ptr(), py::int_(0).ptr(), Py_LT) == 1 ? "-"
                                                                                        : "") +
           "a " + std::to_string(bits) + "-bit integer";
}

namespace {

// Note [integer parameters] (plugin.hpp), Python side: a Python int outside int64 becomes a
// uint64 scalar when it fits one (for uint64 parameters), a float64 for a real parameter, and
// is otherwise an OverflowError naming the parameter's type; narrower ranges are checked by the
// host before the call (plugin_host::detail::check_range), the fast path by scalar_args.
value big_int_value(py::handle h, const isthmus_param* p) {
    PyObject* o = h.ptr();
    if (p && (p->kind == ISTHMUS_PARAM_FLOAT || p->kind == ISTHMUS_PARAM_COMPLEX)) {
        const double d = PyLong_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            ISTHMUS_THROW(overflow_error, "Python integer ", int_text(h),
                          " is too large to convert to ", code_name(p->dtype));
        }
        return value(scalar(d));
    }
    if (p && p->kind != ISTHMUS_PARAM_INT && p->kind != ISTHMUS_PARAM_ANY)
        ISTHMUS_THROW(type_error, "expected ", p->type_name, ", got the Python integer ",
                      int_text(h));
    if (PyObject_RichCompareBool(o, py::int_(0).ptr(), Py_GT) == 1) {
        const unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (!(u == static_cast<unsigned long long>(-1) && PyErr_Occurred()))
            return value(scalar(static_cast<uint64_t>(u)));
        PyErr_Clear();
    }
    ISTHMUS_THROW(overflow_error, "Python integer ", int_text(h), " is out of bounds for ",
                  p && p->kind == ISTHMUS_PARAM_INT && p->dtype >= 0 ? code_name(p->dtype)
                                                                     : "int64 and uint64");
}

// Note [plugin argument conversion]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Python numbers convert exactly (float -> float64 scalar, int -> int64, bool, complex ->
// complex128), not through the `scalar` precision, so a float64 plugin parameter sees the Python
// float unrounded. An int beyond int64 follows Note [integer parameters] with the parameter `p`
// when the caller knows it (NULL: unknown). qvalues pass as they are; Python callables become host
// callbacks; native objects pass their instance. Everything else (arrays and torch tensors shared
// zero-copy, lists, buffers) follows the inbound rule through asvalue() (Note [inbound rule]).
} // namespace

value arg_value(py::handle h, const isthmus_param* p, bool transient) {
    PyObject* o = h.ptr();
    // Arrays and tensors: asvalue's conversion (Note [inbound rule]); torch tensors first,
    // without the tests below (a lookup in a small cache).
    auto array_like = [&] {
        return boundary::value_in(
            h, {boundary::copy_policy::if_needed, std::nullopt, "asvalue", transient});
    };
    if (has_known_exchange_api(h)) return array_like();
    if (PyFloat_CheckExact(o)) return value(scalar(PyFloat_AS_DOUBLE(o)));
    if (PyBool_Check(o)) return value(scalar(o == Py_True));
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) return big_int_value(h, p);
        return value(scalar(static_cast<int64_t>(v)));
    }
    if (PyComplex_CheckExact(o))
        return value(scalar(complex128_t(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o))));
    if (PyUnicode_Check(o)) {
        Py_ssize_t n = 0;
        const char* text = PyUnicode_AsUTF8AndSize(o, &n);
        if (!text) { // lone surrogates have no UTF-8 form
            PyErr_Clear();
            ISTHMUS_THROW(value_error, "the str ", py::repr(h).cast<std::string>(),
                          " is not valid Unicode text (it holds a lone surrogate)");
        }
        return value(std::string(text, static_cast<size_t>(n)));
    }
    if (is_qvalue(h)) return qvalue_ref(h);
    if (is_native_object(h)) return native_object_value(h);
    if (py::isinstance<py::array>(h) || is_dlpack_producer(h)) return array_like();
    if (PyCallable_Check(o) && !is_native_function(h))
        return value(std::static_pointer_cast<object>(std::make_shared<pl::callable_object>(
            python_callable(py::reinterpret_borrow<py::object>(h)),
            py::str(py::getattr(h, "__qualname__", py::str(type_name(h)))).cast<std::string>())));
    return asvalue(h);
}

// Argument `i` of a call to `what` with parameter `p` (NULL: unknown); an overflow names the
// argument like the host's own checks do.

value call_arg(py::handle h, std::string_view what, size_t i, const isthmus_param* p,
               bool transient) {
    // Note [written arguments]
    // ~~~~~~~~~~~~~~~~~~~~~~~~
    // A tensor parameter the plugin writes (ISTHMUS_PARAM_WRITE: a kernel's output, a function's
    // in-place argument) must be the caller's own memory: a copy (of a read-only or byte-swapped
    // NumPy array, a list, a bool array with other bytes) would take the writes and be dropped,
    // the call returning as if it had worked. Such arguments are converted without copies, and
    // one that cannot be shared is a ValueError naming it. (ufunc out= writes a copy back; a
    // kernel may read what it writes, so a write-back would change what the kernel sees.)
    std::string unshared; // why a written argument cannot be shared
    if (p && p->kind == ISTHMUS_PARAM_TENSOR && (p->flags & ISTHMUS_PARAM_WRITE) != 0 &&
        !is_qvalue(h)) {
        try {
            return boundary::value_in(
                h, {boundary::copy_policy::never, std::nullopt, "argument", transient});
        } catch (const value_error& e) {
            unshared = e.what(); // without the advice on copy=, which a written argument ignores
            unshared = unshared.substr(0, unshared.find("; pass copy="));
            if (unshared.rfind("argument: ", 0) == 0) unshared.erase(0, 10);
        }
    }
    try {
        value v = arg_value(h, p, transient); // what is not array-like fails here, as everywhere
        if (!unshared.empty())
            ISTHMUS_THROW(value_error, what, ": argument ", i + 1,
                          p->name ? " (" + std::string(p->name) + ")" : std::string(),
                          " is written, so it must be shared without a copy, but: ", unshared,
                          ". Pass a writable array of the parameter's dtype or a qvalue");
        return v;
    } catch (const overflow_error& e) {
        ISTHMUS_THROW(overflow_error, what, ": argument ", i + 1,
                      p && p->name ? " (" + std::string(p->name) + ")" : std::string(), ": ",
                      e.what());
    } catch (const type_error& e) {
        ISTHMUS_THROW(type_error, what, ": argument ", i + 1,
                      p && p->name ? " (" + std::string(p->name) + ")" : std::string(), ": ",
                      e.what());
    } catch (const value_error& e) {
        if (!unshared.empty()) throw; // names the argument already
        ISTHMUS_THROW(value_error, what, ": argument ", i + 1,
                      p && p->name ? " (" + std::string(p->name) + ")" : std::string(), ": ",
                      e.what());
    }
}

// Results: Python numbers for scalars, str, None, qvalue for tensors, native objects, and a
// tuple for several results (a plugin's ISTHMUS_VALUE_TUPLE arrives as a 1-d cell: Note [tuple
// results in the ABI]; plugins make no other cells).
py::object result_to_py(const value& v) {
    switch (v.kind()) {
    case value_kind::cell: {
        const cell& c = v.as_cell();
        py::tuple t(c.items.size());
        for (size_t i = 0; i < c.items.size(); ++i) t[i] = result_to_py(c.items[i]);
        return t;
    }
    case value_kind::none:
        return py::none();
    case value_kind::scalar: {
        const scalar& s = v.as_scalar();
        const dtype dt = s.type();
        if (is_bool(dt)) return py::bool_(s.to<bool>());
        if (dt == dtype::uint64) return py::int_(s.to<uint64_t>());
        if (is_integer(dt)) return py::int_(s.to<int64_t>());
        if (is_complex(dt)) {
            const auto c = s.to<complex128_t>();
            return py::reinterpret_steal<py::object>(PyComplex_FromDoubles(c.real(), c.imag()));
        }
        return py::float_(s.to<double>());
    }
    case value_kind::string:
        return py::str(v.as_string());
    case value_kind::object:
        if (auto po = std::dynamic_pointer_cast<pl::plugin_object>(v.as_object()))
            return wrap_object(std::move(po));
        return qvalue_of(v);
    default:
        return qvalue_of(v);
    }
}

pl::host_callable python_callable(py::object fn) {
    // The holder drops its reference under the GIL, whichever thread releases it.
    std::shared_ptr<py::object> h(new py::object(std::move(fn)), [](py::object* p) {
        py::gil_scoped_acquire gil;
        delete p;
    });
    return [h](std::span<const value> args) -> value {
        py::gil_scoped_acquire gil;
        py::tuple t(args.size());
        for (size_t i = 0; i < args.size(); ++i) t[i] = result_to_py(args[i]);
        py::object r = (*h)(*t);
        return r.is_none() ? value() : arg_value(r);
    };
}

py::object wrap_object(std::shared_ptr<pl::plugin_object> o) {
    return py::cast(native_object{std::move(o)});
}

bool is_native_object(py::handle h) {
    return py::isinstance<native_object>(h);
}

value native_object_value(py::handle h) {
    return value(std::static_pointer_cast<object>(h.cast<const native_object&>().o));
}

namespace {

// ---- modules and the names they add to isthmus
// ---------------------------------------------------

std::mutex g_mu;
std::map<std::string, py::object>* g_modules = nullptr; // library path -> module (never freed)
// plugin name -> the names its latest imported library added to `isthmus` (never freed)
std::map<std::string, std::vector<std::string>>* g_names_of = nullptr;

// The plugin name of a function or kernel on `isthmus`, or "" for anything else.
std::string plugin_of(py::handle obj) {
    if (!py::hasattr(obj, "plugin") || !py::hasattr(obj, "plugin_path")) return {};
    return py::str(obj.attr("plugin")).cast<std::string>();
}

// Note [native names on q]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// import_native adds every function and kernel of the plugin to the `isthmus` package as well
// (PyQuasar's q.color_temperature). A name that isthmus already has (a built-in, or a function of
// another plugin) raises ValueError before any name is added; importing the same library again
// returns the same module, whose names become the current ones again (See Note [the edit loop]).
//
// Note [the edit loop]
// ~~~~~~~~~~~~~~~~~~~~
// A notebook user edits a kernel and runs compile_string again under the same plugin name: the
// new library (another cache entry) replaces the old one's names on `isthmus`, and names the
// new version no longer defines are removed. The old library stays loaded for as long as
// anything refers to it (its module, a q.native_function or kernel held in a variable, a
// native object, a value it made), so those keep working with the old code; new lookups through
// `q.<name>` or the new module reach the new code. Only a plugin of the same name replaces:
// a name defined by another plugin, or by isthmus itself, stays an error.
// Puts `names` (a plugin's functions and kernels) on `isthmus` for plugin `plugin`: refuses a
// name isthmus or another plugin has, replaces an earlier version's (Note [the edit loop]) and
// removes the earlier version's names that `names` lacks.
void install_names(py::module_& q, const std::string& plugin, const std::string& path,
                   const std::vector<std::pair<std::string, py::object>>& names) {
    for (const auto& [n, obj] : names) {
        if (!py::hasattr(q, n.c_str())) continue;
        py::object existing = q.attr(n.c_str());
        if (plugin_of(existing) == plugin) continue; // an earlier version: replaced
        std::string from = "isthmus itself";
        if (py::hasattr(existing, "plugin_path"))
            from = "plugin " + py::str(existing.attr("plugin_path")).cast<std::string>();
        ISTHMUS_THROW(value_error, "import_native: plugin ", plugin, " (", path, ") defines \"", n,
                      "\", which isthmus already has (from ", from, "); rename it in the plugin");
    }
    std::vector<std::string>& added = (*g_names_of)[plugin];
    for (const auto& old : added) {
        const bool kept = std::any_of(names.begin(), names.end(),
                                      [&](const auto& nv) { return nv.first == old; });
        if (!kept && py::hasattr(q, old.c_str()) && plugin_of(q.attr(old.c_str())) == plugin)
            py::delattr(q, old.c_str());
    }
    added.clear();
    for (const auto& [n, obj] : names) {
        added.push_back(n);
        q.attr(n.c_str()) = obj;
    }
}

py::object import_library(const std::shared_ptr<pl::library>& lib) {
    std::lock_guard lk(g_mu);
    if (!g_modules) g_modules = new std::map<std::string, py::object>();
    if (!g_names_of) g_names_of = new std::map<std::string, std::vector<std::string>>();
    py::module_ q = py::module_::import("isthmus");
    std::vector<std::pair<std::string, py::object>> names;
    if (auto it = g_modules->find(lib->path()); it != g_modules->end()) {
        // Imported before: its names become the current ones again (an edit undone).
        py::object mod = it->second;
        for (const char* group : {"functions", "kernels"})
            for (py::handle n : mod.attr(group))
                names.emplace_back(n.cast<std::string>(), mod.attr(n));
        install_names(q, lib->name(), lib->path(), names);
        return mod;
    }
    for (const auto& n : lib->function_names())
        names.emplace_back(n, wrap_function(lib->get_function(n)));
    for (const auto& n : lib->kernel_names())
        names.emplace_back(n, py::cast(native_kernel{lib->get_kernel(n)}));
    py::module_ types = py::module_::import("types");
    py::object mod = types.attr("ModuleType")(lib->name(), lib->describe());
    install_names(q, lib->name(), lib->path(), names);
    mod.attr("__file__") = lib->path();
    py::list fnames, knames;
    for (const auto& f : lib->function_names()) fnames.append(f);
    for (const auto& k : lib->kernel_names()) knames.append(k);
    mod.attr("functions") = py::tuple(fnames);
    mod.attr("kernels") = py::tuple(knames);
    for (const auto& [n, obj] : names) mod.attr(n.c_str()) = obj;
    g_modules->emplace(lib->path(), mod);
    return mod;
}

// compile_string and compile_file: their options from the Python arguments, the compile without
// the GIL (`compile` returns the library), then the import.
template <typename Compile>
py::object
compile_and_import(std::vector<std::string> flags, const std::optional<std::string>& lang,
                   const std::optional<std::string>& cuda_compiler, bool tiered, Compile compile) {
    pl::compile_options o;
    o.flags = std::move(flags);
    o.language = lang.value_or("");
    o.cuda_compiler = cuda_compiler.value_or("");
    o.tiered = tiered; // See Note [compile tiers]: isthmus/__init__.py waits for them at exit
    std::shared_ptr<pl::library> lib;
    {
        py::gil_scoped_release nogil;
        lib = compile(o);
    }
    return import_library(lib);
}

PyObject* g_compile_error = nullptr;

// Note [call_python bridge] (plugin_host.hpp), Python side: "a.b.c" imports the longest importable
// module prefix ("a.b", else "a") and looks up the rest as attributes; a name without a dot is
// a builtin ("len"). Tensor arguments arrive as NumPy arrays, the natural input of the Python
// functions a plugin reaches for. The GIL is taken here: the caller may be a plugin function called
// from Python (GIL held) or a parallel_do body (GIL released, possibly on an OpenMP thread).
value call_python_bridge(const std::string& qualified, std::span<const value> args) {
    py::gil_scoped_acquire gil;
    py::object target;
    const size_t dot = qualified.find('.');
    if (dot == std::string::npos) {
        py::module_ builtins = py::module_::import("builtins");
        ISTHMUS_CHECK(py::hasattr(builtins, qualified.c_str()), value_error, "call_python: \"",
                      qualified,
                      "\" is not a builtin; name a module function as \"module.function\"");
        target = builtins.attr(qualified.c_str());
    } else {
        // Import the longest importable prefix: "a.b.c" tries "a.b", then "a"; when even the
        // first component is missing, its ModuleNotFoundError propagates as it is.
        std::string mod = qualified;
        std::string rest;
        while (true) {
            const size_t cut = mod.rfind('.');
            rest = qualified.substr(cut + 1);
            mod = mod.substr(0, cut);
            if (PyObject* m = PyImport_ImportModule(mod.c_str())) {
                target = py::reinterpret_steal<py::object>(m);
                break;
            }
            if (!PyErr_ExceptionMatches(PyExc_ModuleNotFoundError) ||
                mod.find('.') == std::string::npos)
                throw py::error_already_set();
            PyErr_Clear();
        }
        size_t start = 0;
        while (start <= rest.size()) {
            const size_t end = std::min(rest.find('.', start), rest.size());
            target = target.attr(rest.substr(start, end - start).c_str());
            start = end + 1;
        }
    }
    ISTHMUS_CHECK(PyCallable_Check(target.ptr()), type_error, "call_python: ", qualified, " is a ",
                  type_name(target), ", not a callable");
    py::tuple t(args.size());
    for (size_t i = 0; i < args.size(); ++i) // tensors arrive as NumPy arrays (copies)
        t[i] = args[i].is_tensor() ? numpy().attr("asarray")(result_to_py(args[i]))
                                   : result_to_py(args[i]);
    py::object r = target(*t);
    return r.is_none() ? value() : arg_value(r);
}

// Note [compile notices] (plugins/src/compile_notice.cpp), Python side: a slow compile's word
// goes to isthmus.compile_log.report (the "isthmus.compile" logger); a host that registered
// only the native module, without the isthmus package, gets the line on stderr.
void python_compile_notice(const pl::compile_notice& n) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    try {
        py::module_::import("isthmus.compile_log")
            .attr("report")(n.plugin, n.language, n.compiler, n.library, n.waiting, n.message);
    } catch (py::error_already_set&) {
        const char* v = std::getenv("ISTHMUS_VERBOSE");
        if (!(v && std::string(v) == "0")) std::fprintf(stderr, "%s\n", n.message.c_str());
    }
}

} // namespace

void bind_plugins(py::module_& m) {
    make_function_type(m);
    pl::detail::set_python_bridge(&call_python_bridge);
    pl::set_compile_notice_handler(&python_compile_notice);

    // q.CompileError: a RuntimeError carrying the compiler's diagnostics.
    g_compile_error = PyErr_NewExceptionWithDoc(
        "isthmus.CompileError",
        "Raised by compile_string / compile_file when the C++ compiler fails; `diagnostics` "
        "holds the compiler's messages (line numbers relative to the given source).",
        PyExc_RuntimeError, nullptr);
    m.add_object("CompileError", py::reinterpret_borrow<py::object>(g_compile_error));
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const pl::compile_error& e) {
            py::object cls = py::reinterpret_borrow<py::object>(g_compile_error);
            py::object inst = cls(e.what());
            inst.attr("diagnostics") = e.diagnostics();
            PyErr_SetObject(g_compile_error, inst.ptr());
        }
    });

    m.def(
        "import_native",
        [](const std::string& path_or_name) {
            require_init("import_native");
            std::shared_ptr<pl::library> lib;
            {
                py::gil_scoped_release nogil;
                lib = pl::load(path_or_name);
            }
            return import_library(lib);
        },
        py::arg("path_or_name"),
        "Loads a compiled plugin and makes its functions and kernels callable from Python.\n\n"
        "path_or_name: a path to the shared object, or a plugin name looked up in\n"
        "  ISTHMUS_PLUGIN_PATH and then the working directory (name, libname.so, name.so).\n\n"
        "Returns a module holding the plugin's functions (native_function), kernels\n"
        "(native_kernel, run with parallel_do), `functions` and `kernels` (tuples of names).\n"
        "Each function and kernel also becomes an attribute of isthmus itself: after\n"
        "import_native(\"host_demo\"), q.<name> is the plugin's <name>.\n\n"
        "Raises RuntimeError before init() or when the library does not load or is not an\n"
        "isthmus plugin (ABI mismatch), ValueError when a name clashes with one isthmus or\n"
        "another plugin already has.");
    m.def(
        "compile_string",
        [](const std::string& name, const std::string& source, std::vector<std::string> flags,
           std::optional<std::string> lang, std::optional<std::string> cuda_compiler, bool tiered) {
            require_init("compile_string");
            return compile_and_import(
                std::move(flags), lang, cuda_compiler, tiered,
                [&](const pl::compile_options& o) { return pl::compile_string(name, source, o); });
        },
        py::arg("name"), py::arg("source"), py::arg("flags") = std::vector<std::string>{},
        py::kw_only(), py::arg("lang") = py::none(), py::arg("cuda_compiler") = py::none(),
        py::arg("tiered").noconvert() = true,
        "Compiles plugin source into a cached plugin and imports it like import_native.\n\n"
        "name: the plugin's name, the one its source declares with ISTHMUS_PLUGIN(name, m).\n"
        "source: C++ source, or CUDA source with lang=\"cuda\" (isthmus/plugin.hpp is included\n"
        "  for it).\n"
        "flags: extra compiler flags (e.g. [\"-O3\"]).\n"
        "lang: None (C++), \"c++\" or \"cuda\".\n"
        "cuda_compiler: \"auto\" (None), \"nvrtc\" or \"nvcc\": CUDA source whose kernels are\n"
        "  declared with ISTHMUS_KERNEL compiles its device code with NVRTC when it is found,\n"
        "  other CUDA source with nvcc.\n"
        "tiered: a C++ source with kernels only (no m.def, no types) and no codegen flags\n"
        "  comes back as a quick -O1 build, while its -O3 build runs in the background and\n"
        "  replaces it when ready (same results; kernel.tier says which runs;\n"
        "  wait_for_compiles() waits). False: the -O3 build before returning.\n\n"
        "Returns the plugin module (its functions, its kernels, `functions` and `kernels`).\n"
        "Every function and kernel the source defines also becomes an attribute of isthmus\n"
        "itself: after compile_string(\"it\", src) defining kernel addk, q.addk is that kernel\n"
        "(q.parallel_do(dims, x, y, q.addk)). Compiling changed source under the same name\n"
        "again replaces those attributes (values and callables made before keep the old code).\n"
        "Cache: $ISTHMUS_CACHE_DIR, else ~/.cache/isthmus (an unchanged source loads at once).\n\n"
        "Raises CompileError (a RuntimeError) with the compiler's diagnostics when the source\n"
        "does not compile or the CUDA compiler it needs is not found; ValueError when the\n"
        "source's ISTHMUS_PLUGIN name differs from `name` or one of its names clashes with\n"
        "another plugin's or isthmus's own; RuntimeError before init().");
    m.def(
        "compile_file",
        [](const std::string& path, std::vector<std::string> flags, std::optional<std::string> lang,
           std::optional<std::string> cuda_compiler, bool tiered) {
            require_init("compile_file");
            return compile_and_import(
                std::move(flags), lang, cuda_compiler, tiered,
                [&](const pl::compile_options& o) { return pl::compile_file(path, o); });
        },
        py::arg("path"), py::arg("flags") = std::vector<std::string>{}, py::kw_only(),
        py::arg("lang") = py::none(), py::arg("cuda_compiler") = py::none(),
        py::arg("tiered").noconvert() = true,
        "compile_string on a file's contents: compiles the plugin source at `path` (a .cu file\n"
        "is CUDA unless lang says otherwise; the plugin is named after the file's stem) and\n"
        "returns its module. Its functions and kernels become attributes of isthmus, as with\n"
        "compile_string; flags, lang, cuda_compiler and tiered are compile_string's. Raises what\n"
        "compile_string raises, and RuntimeError when there is no such file.");
    m.def(
        "nvrtc_library",
        []() -> std::optional<std::string> {
            std::string lib;
            {
                py::gil_scoped_release nogil;
                lib = pl::nvrtc_library();
            }
            if (lib.empty()) return std::nullopt;
            return lib;
        },
        "The NVRTC library compile_string uses for CUDA source (None when none is found; see\n"
        "docs/plugins.md for where it looks).");
    m.def(
        "wait_for_compiles",
        [] {
            py::gil_scoped_release nogil; // a failed build's notice takes the GIL
            pl::wait_for_compiles();
        },
        "Waits until every optimised build that compile_string started in the background has\n"
        "finished and replaced its quick build (see compile_string's `tiered`). At exit\n"
        "isthmus does not wait: a detached process finishes the builds left into the cache.");
    m.def("_stop_background_builds", [] {
        std::vector<pl::pending_build> left;
        {
            py::gil_scoped_release nogil;
            left = pl::stop_background_builds();
        }
        py::list r;
        for (const auto& b : left)
            r.append(py::dict(py::arg("name") = b.name, py::arg("source") = b.source,
                              py::arg("flags") = b.flags, py::arg("cache_dir") = b.cache_dir));
        return r;
    });
    m.def("_add_nvrtc_search_dir", &pl::add_nvrtc_search_dir, py::arg("dir"));
    m.def(
        "plugin_cache_dir", [] { return pl::cache_dir(); },
        "The directory compile_string caches plugins in.");
    m.def(
        "plugin_compiler", [] { return pl::compiler(); },
        "The C++ compiler command compile_string runs: $CXX, else \"g++\".");
    m.def(
        "plugin_include_dir", [] { return pl::plugin_include_dir(); },
        "The directory holding isthmus/plugin.hpp (for building plugins by hand).");
    m.attr("PLUGIN_ABI_VERSION") = ISTHMUS_PLUGIN_ABI_VERSION;
    bind_plugin_kernels(m);
    bind_plugin_objects(m);
}

} // namespace isthmus::pymod
