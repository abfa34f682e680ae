// Plugin functions' and kernels' descriptor records for Python (Note [plugin signatures] in
// isthmus/signatures.py; stubgen and inspect.signature read them).
#include "plugin_overloads.hpp"

#include <iterator>
#include <string>

namespace isthmus::pymod {

namespace {

const char* param_kind_name(int32_t kind) {
    static const char* names[] = {"any",    "bool", "int",    "float",    "complex", "string",
                                  "tensor", "vec",  "object", "callback", "position"};
    return kind >= 0 && kind < static_cast<int32_t>(std::size(names)) ? names[kind] : "unknown";
}

// The ABI's dtype codes follow isthmus::dtype's order; ISTHMUS_DT_ANY (or a bad code) is None.
py::object dtype_code_name(int32_t code) {
    if (code < 0 || code > static_cast<int32_t>(dtype::complex128)) return py::none();
    return py::str(std::string(name(static_cast<dtype>(code))));
}

py::dict param_record(const isthmus_param& p) {
    py::dict d;
    d["name"] = p.name ? p.name : "";
    d["kind"] = param_kind_name(p.kind);
    d["dtype"] = dtype_code_name(p.dtype);
    d["ndim"] = p.ndim;
    d["vec_len"] = p.vec_len;
    py::list flags;
    if (p.flags & ISTHMUS_PARAM_WRITE) flags.append("write");
    if (p.flags & ISTHMUS_PARAM_READ) flags.append("read");
    if (p.flags & ISTHMUS_PARAM_AT_POSITION) flags.append("at_position");
    d["flags"] = py::tuple(flags);
    d["type_name"] = p.type_name ? p.type_name : "";
    d["type"] = p.type && p.type->name ? py::object(py::str(p.type->name)) : py::none();
    return d;
}

// One overload: name, signature line, doc, the result spelled after "->" (empty: none) and
// the parameter records (the caller's; a kernel's position is not among them).
py::dict overload_record(const char* name, const char* signature, const char* doc, int32_t nparams,
                         const isthmus_param* params) {
    py::dict d;
    const std::string sig = signature ? signature : "";
    d["name"] = name ? name : "";
    d["signature"] = sig;
    d["doc"] = doc ? doc : "";
    const auto arrow = sig.rfind("->");
    std::string result = arrow == std::string::npos ? "" : sig.substr(arrow + 2);
    result.erase(0, result.find_first_not_of(' '));
    d["result"] = result;
    py::list ps;
    for (int32_t i = 0; i < nparams; ++i) ps.append(param_record(params[i]));
    d["params"] = py::tuple(ps);
    d["variadic"] = nparams < 0;
    return d;
}

} // namespace

py::tuple function_overloads(const plugin_host::function& fn) {
    py::list r;
    for (const isthmus_function* o : fn.overloads())
        r.append(overload_record(o->name, o->signature, o->doc, o->nparams, o->params));
    return py::tuple(r);
}

py::tuple kernel_overloads(const plugin_host::kernel& k) {
    const isthmus_kernel* a = k.abi();
    py::dict d = overload_record(a->name, a->signature, a->doc, a->nparams, a->params);
    d["pos_ndim"] = a->pos_ndim;
    return py::make_tuple(d);
}

} // namespace isthmus::pymod
