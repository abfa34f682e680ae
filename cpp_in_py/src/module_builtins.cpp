// The module's functions as builtins of isthmus itself: real signatures in help() and inspect.
#include "bindings.hpp"

#include <array>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace isthmus::pymod {

// Note [module functions as builtins]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// pybind11 makes each m.def a builtin whose __self__ is pybind11's internal function record, so
// help(q.zeros) reads "zeros(...) method of pybind11_detail_function_record_v1_...
// instance", and the docstring opens with pybind11's rendering ("zeros(*args, dtype: object =
// None) -> isthmus._isthmus.qvalue"), which inspect.signature cannot read. Once every binder ran,
// publish_module_functions() puts in the module's place of each such function a builtin whose
// __self__ is the module and __module__ "isthmus", as a C extension's own functions are, and
// whose doc opens with a __text_signature__ ("name(a, b=None, /, *, c=0)\n--\n\n"):
//   - the one the binding wrote at the head of its docstring, where pybind11's rendering cannot
//     say it (`py::args` is always "*args": "zeros(*sizes, dtype=None)\n--\n\n..."), else
//   - pybind11's rendering with the annotations and the return type removed (names, defaults,
//     `*`, `/`, `*args` and `**kwargs` kept), which inspect.signature parses.
// The builtin forwards each call with PyObject_Vectorcall to the pybind11 function, whose
// dispatch, overloads and error messages are unchanged (one C call more). A builtin whose
// __self__ is the module carries no data of its own, so each one is its own C function: a
// template instance that reads its slot of a fixed table.
// tests/python/cpp_in_py/test_help_signatures.py checks every public function of the module.

namespace {

constexpr size_t max_module_functions = 512;

std::array<PyObject*, max_module_functions> g_targets{}; // strong references, never released
std::array<PyMethodDef, max_module_functions> g_defs{};
std::deque<std::string> g_strings; // names and docs: PyMethodDef points into them
size_t g_used = 0;

template <size_t I>
PyObject* forward(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return PyObject_Vectorcall(g_targets[I], args, static_cast<size_t>(nargs), kwnames);
}

using fastcall_fn = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);

template <size_t... I>
constexpr std::array<fastcall_fn, sizeof...(I)> forwarders(std::index_sequence<I...>) {
    return {&forward<I>...};
}
constexpr auto g_forwarders = forwarders(std::make_index_sequence<max_module_functions>{});

// Walks text that holds quotes and nested brackets one character at a time (the three parsers
// below share it).
struct bracket_scan {
    int depth = 0;
    char quote = 0;
    // Consumes s[i] (and the character an escape protects, advancing i); true when s[i] is plain
    // text at bracket depth 0, outside quotes.
    bool top_level(std::string_view s, size_t& i) {
        const char c = s[i];
        if (quote) {
            if (c == '\\')
                ++i;
            else if (c == quote)
                quote = 0;
            return false;
        }
        if (c == '\'' || c == '"')
            quote = c;
        else if (c == '(' || c == '[' || c == '{')
            ++depth;
        else if (c == ')' || c == ']' || c == '}')
            --depth;
        else
            return depth == 0;
        return false;
    }
};

// The end of the bracketed text that opens at `open` (quotes and nested brackets skipped), or
// npos.
size_t closing_bracket(std::string_view s, size_t open) {
    bracket_scan scan;
    for (size_t i = open; i < s.size(); ++i) {
        const bool closes = !scan.quote && (s[i] == ')' || s[i] == ']' || s[i] == '}');
        scan.top_level(s, i);
        if (closes && scan.depth == 0) return i;
    }
    return std::string_view::npos;
}

// The parameters of pybind11's rendering "(a: int, b: str = 'x', *, c: object = None)", split at
// the commas outside brackets and quotes.
std::vector<std::string_view> split_parameters(std::string_view inside) {
    std::vector<std::string_view> out;
    bracket_scan scan;
    size_t start = 0;
    for (size_t i = 0; i < inside.size(); ++i) {
        if (scan.top_level(inside, i) && inside[i] == ',') {
            out.push_back(inside.substr(start, i - start));
            start = i + 1;
        }
    }
    if (inside.find_first_not_of(' ', start) != std::string_view::npos)
        out.push_back(inside.substr(start));
    return out;
}

std::string_view trimmed(std::string_view s) {
    const size_t b = s.find_first_not_of(' ');
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// "b: str = 'x'" -> "b='x'"; "a: int" -> "a"; "*args", "*", "/" unchanged.
std::string text_parameter(std::string_view p) {
    p = trimmed(p);
    const size_t colon = p.find(':');
    if (colon == std::string_view::npos) return std::string(p);
    std::string out(trimmed(p.substr(0, colon)));
    // The default follows the first " = " outside brackets and quotes of the annotation.
    std::string_view rest = p.substr(colon + 1);
    bracket_scan scan;
    for (size_t i = 0; i + 2 < rest.size(); ++i) {
        if (scan.top_level(rest, i) && rest.substr(i, 3) == " = ") {
            out += "=";
            out += trimmed(rest.substr(i + 3));
            break;
        }
    }
    return out;
}

// The doc of the builtin that stands for `fn` under `name` (See Note [module functions as
// builtins]), or "" when pybind11's doc is not one rendered signature and a text.
std::string builtin_doc(const std::string& name, const std::string& pybind_name,
                        std::string_view doc) {
    // pybind11's doc of one overload: "<name>(<params>) -> <result>\n" then "\n<user doc>\n".
    if (doc.substr(0, pybind_name.size() + 1) != pybind_name + "(") return {};
    const size_t close = closing_bracket(doc, pybind_name.size());
    if (close == std::string_view::npos) return {};
    const std::string_view inside =
        doc.substr(pybind_name.size() + 1, close - pybind_name.size() - 1);
    const size_t line_end = doc.find('\n', close);
    std::string_view user =
        line_end == std::string_view::npos ? std::string_view{} : doc.substr(line_end + 1);
    if (!user.empty() && user.front() == '\n') user.remove_prefix(1);
    while (!user.empty() && user.back() == '\n') user.remove_suffix(1);
    // A signature the binding wrote: "<pybind name>(...)\n--\n\n" at the head of its doc.
    if (user.substr(0, pybind_name.size() + 1) == pybind_name + "(") {
        const size_t end = user.find(")\n--\n\n");
        const size_t para = user.find("\n\n");
        if (end != std::string_view::npos && para != std::string_view::npos && end < para)
            return name + std::string(user.substr(pybind_name.size()));
    }
    std::string sig = name + "(";
    bool first = true;
    for (std::string_view p : split_parameters(inside)) {
        if (!first) sig += ", ";
        sig += text_parameter(p);
        first = false;
    }
    return sig + ")\n--\n\n" + std::string(user);
}

} // namespace

void publish_module_functions(py::module_& m) {
    py::object module_name = py::str("isthmus");
    py::dict d = m.attr("__dict__");
    std::vector<std::pair<std::string, py::object>> found;
    for (auto [key, fn] : d) {
        if (!PyCFunction_Check(fn.ptr())) continue;
        PyObject* self = PyCFunction_GET_SELF(fn.ptr());
        // A builtin of a module already, or written with the C API (from_dlpack: no __self__).
        if (!self || PyModule_Check(self)) continue;
        found.emplace_back(key.cast<std::string>(), py::reinterpret_borrow<py::object>(fn));
    }
    for (auto& [name, fn] : found) {
        ISTHMUS_CHECK(g_used < max_module_functions, runtime_error, "isthmus: more than ",
                      max_module_functions,
                      " module functions; raise max_module_functions in module_builtins.cpp");
        const py::object pdoc = fn.attr("__doc__");
        const std::string pybind_name = fn.attr("__name__").cast<std::string>();
        std::string doc = builtin_doc(name, pybind_name,
                                      pdoc.is_none() ? std::string() : pdoc.cast<std::string>());
        ISTHMUS_CHECK(!doc.empty(), runtime_error, "isthmus: the module function ", name,
                      " has no pybind11 signature to publish (an overloaded m.def?)");
        const size_t slot = g_used++;
        g_targets[slot] = fn.release().ptr();
        const std::string& stored_name = g_strings.emplace_back(name);
        const std::string& stored_doc = g_strings.emplace_back(std::move(doc));
        g_defs[slot] = PyMethodDef{
            stored_name.c_str(),
            reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(g_forwarders[slot])),
            METH_FASTCALL | METH_KEYWORDS, stored_doc.c_str()};
        PyObject* builtin = PyCFunction_NewEx(&g_defs[slot], m.ptr(), module_name.ptr());
        if (!builtin) throw py::error_already_set();
        m.attr(name.c_str()) = py::reinterpret_steal<py::object>(builtin);
    }
}

} // namespace isthmus::pymod
