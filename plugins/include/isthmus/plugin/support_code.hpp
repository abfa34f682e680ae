// The author layer's non-template code: inline by default, else compiled once per cache key.
#pragma once

// Note [support object] in isthmus/plugin/base.hpp: with ISTHMUS_PLUGIN_SEPARATE these are
// definitions of hidden external functions, compiled once by the plugin cache; without it (the
// default, where isthmus/plugin.hpp includes this file) they are inline.
#include "isthmus/plugin.hpp"

#include <atomic>
#include <mutex>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wattributes" // noinline added to an inline declaration

namespace isthmus::plugin {

namespace detail {

ISTHMUS_PLUGIN_SUPPORT std::string arg_label(int64_t i) {
    const call_state& st = t_state;
    if (i < st.skip) return "the instance";
    const int64_t k = i - st.skip;
    const char* name = st.params && k < st.nparams ? st.params[k].name : nullptr;
    return "argument " + std::to_string(k + 1) +
           (name && *name ? " (" + std::string(name) + ")" : std::string());
}

ISTHMUS_PLUGIN_SUPPORT int report(isthmus_call* call) noexcept {
    int32_t code = ISTHMUS_ERR_RUNTIME;
    std::string msg;
    try {
        throw;
    } catch (const error& e) {
        code = e.code();
        msg = e.what();
    } catch (const std::bad_alloc&) {
        code = ISTHMUS_ERR_MEMORY;
        msg = "out of memory";
    } catch (const std::out_of_range& e) {
        code = ISTHMUS_ERR_INDEX;
        msg = e.what();
    } catch (const std::invalid_argument& e) {
        code = ISTHMUS_ERR_VALUE;
        msg = e.what();
    } catch (const std::exception& e) {
        msg = e.what();
    } catch (...) {
        msg = "unknown C++ exception in plugin";
    }
    if (call && call->host && call->host->set_error) call->host->set_error(call, code, msg.c_str());
    return 1;
}

[[gnu::noinline]] ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, const char* x) {
    s += x;
}
[[gnu::noinline]] ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, const std::string& x) {
    s += x;
}
[[gnu::noinline]] ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, std::string_view x) {
    s += x;
}
[[gnu::noinline]] ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, long long x) {
    s += std::to_string(x);
}
[[gnu::noinline]] ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, unsigned long long x) {
    s += std::to_string(x);
}
[[gnu::noinline]] ISTHMUS_PLUGIN_SUPPORT void put(std::string& s, double x) {
    s += std::to_string(x);
}

ISTHMUS_PLUGIN_SUPPORT const char* storage::keep(std::string s) {
    return strings.emplace_back(std::move(s)).c_str();
}

ISTHMUS_PLUGIN_SUPPORT std::string signature_of(const std::string& name,
                                                const std::vector<isthmus_param>& ps,
                                                const char* result, size_t skip_front) {
    std::string s = name + "(";
    for (size_t i = skip_front; i < ps.size(); ++i) {
        if (i > skip_front) s += ", ";
        s += std::string(ps[i].name) + ": " + ps[i].type_name;
    }
    s += ")";
    if (result && *result) s += std::string(" -> ") + result;
    return s;
}

ISTHMUS_PLUGIN_SUPPORT std::string device_text(int32_t type, int32_t id) {
    if (type == ISTHMUS_DEVICE_CPU) return "the CPU";
    if (type == ISTHMUS_DEVICE_CUDA) return cat("cuda:", id);
    return cat("device type ", type);
}

ISTHMUS_PLUGIN_SUPPORT std::string tuple_text(const int64_t* v, int n) {
    std::string s = "(";
    for (int d = 0; d < n; ++d) s += (d ? ", " : "") + std::to_string(v[d]);
    return s + ")";
}

ISTHMUS_PLUGIN_SUPPORT std::string access_message(int modifier, int dim, int64_t i, int64_t n,
                                                  const int64_t* index, const int64_t* shape,
                                                  int rank, int arg, const char* label) {
    std::string s;
    if (modifier & k_access_stencil) // See Note [stencil interiors]
        s = cat("index ", i, " is out of bounds for dimension ", dim, " with size ", n,
                " in the interior of a stencil, where the '",
                access_name(modifier & ~k_access_stencil),
                " map is skipped: the kernel reads further from the position than its "
                ".stencil radius says");
    else if (modifier == static_cast<int>(access::unchecked) ||
             modifier == static_cast<int>(access::checked))
        s = cat("index ", i, " is out of bounds for dimension ", dim, " with size ", n,
                modifier == static_cast<int>(access::checked) ? " ('checked access)"
                                                              : " (unchecked view, checked mode)");
    else
        s = cat("index ", i, " has no element to map to: dimension ", dim, " has size ", n, " ('",
                access_name(modifier), " access)");
    if (arg >= 0) s += " in " + (label ? std::string(label) : cat("argument ", arg + 1));
    if (index) s += cat(arg >= 0 ? ": index " : " at index ", tuple_text(index, rank));
    if (shape) s += cat(index ? " into shape " : " of shape ", tuple_text(shape, rank));
    return s;
}

[[noreturn]] ISTHMUS_PLUGIN_SUPPORT void throw_device_index_error(const device_index_error& e) {
    if (e.modifier == k_device_tape_full) // See Note [derived backward on the GPU]
        throw value_error(cat("a position of the derived backward needed ", e.failing_index,
                              " entries on its tape, and a GPU thread's tape holds ",
                              e.failing_size,
                              "; run the derived kernel on the CPU, where the "
                              "tape grows"));
    const int shown = e.rank < 8 ? e.rank : 8;
    int64_t index[8], shape[8];
    for (int d = 0; d < shown; ++d) index[d] = e.index[d], shape[d] = e.shape[d];
    const bool whole = e.rank <= 8; // the tuples are complete
    const std::string label = e.arg >= 0 ? arg_label(e.arg) : std::string();
    throw index_error(access_message(e.modifier, e.dim, e.failing_index, e.failing_size,
                                     whole ? index : nullptr, whole ? shape : nullptr, shown, e.arg,
                                     label.c_str()));
}

[[noreturn, gnu::noinline]] ISTHMUS_PLUGIN_SUPPORT void throw_access_error(int modifier, int dim,
                                                                           const int64_t* index,
                                                                           const int64_t* shape,
                                                                           int rank, int arg) {
    const std::string label = arg >= 0 ? arg_label(arg) : std::string();
    throw index_error(access_message(modifier, dim, index[dim], shape[dim], index, shape, rank, arg,
                                     label.c_str()));
}

ISTHMUS_PLUGIN_SUPPORT_CALL double load_as_double(const void* data, int32_t dt, int64_t i) {
    switch (dt) {
    case ISTHMUS_DT_BOOL:
        return static_cast<const bool*>(data)[i];
    case ISTHMUS_DT_INT8:
        return static_cast<const int8_t*>(data)[i];
    case ISTHMUS_DT_INT16:
        return static_cast<const int16_t*>(data)[i];
    case ISTHMUS_DT_INT32:
        return static_cast<const int32_t*>(data)[i];
    case ISTHMUS_DT_INT64:
        return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case ISTHMUS_DT_UINT8:
        return static_cast<const uint8_t*>(data)[i];
    case ISTHMUS_DT_UINT16:
        return static_cast<const uint16_t*>(data)[i];
    case ISTHMUS_DT_UINT32:
        return static_cast<const uint32_t*>(data)[i];
    case ISTHMUS_DT_UINT64:
        return static_cast<double>(static_cast<const uint64_t*>(data)[i]);
    case ISTHMUS_DT_FLOAT32:
        return static_cast<const float*>(data)[i];
    case ISTHMUS_DT_FLOAT64:
        return static_cast<const double*>(data)[i];
    default:
        throw type_error(cat("isthmus::plugin: cannot read ", dtype_name(dt), " elements"));
    }
}

ISTHMUS_PLUGIN_SUPPORT const char* kind_name(int32_t k) {
    static const char* const names[] = {"none",   "bool",   "int",    "float",    "complex",
                                        "string", "tensor", "object", "callable", "tuple"};
    return k >= 0 && k <= ISTHMUS_VALUE_TUPLE ? names[k] : "unknown";
}

ISTHMUS_PLUGIN_SUPPORT_CALL isthmus_value new_tuple(int64_t n) {
    isthmus_call* c = current_call();
    const isthmus_host* h = c->host;
    if (h->struct_size < offsetof(isthmus_host, new_tuple) + sizeof(h->new_tuple) || !h->new_tuple)
        throw error("isthmus::plugin: this host cannot take several results (its isthmus_host "
                    "table has no new_tuple slot: it predates tuple results); return one value, "
                    "or use a newer isthmus");
    isthmus_value v{};
    if (h->new_tuple(c, n, &v) != 0) throw error("the host could not allocate a tuple");
    return v;
}

ISTHMUS_PLUGIN_SUPPORT std::string tuple_result_name(const char* const* names, size_t n) {
    std::string s = "(";
    for (size_t i = 0; i < n; ++i) s += std::string(i ? ", " : "") + names[i];
    return s + ")";
}

[[noreturn]] ISTHMUS_PLUGIN_SUPPORT void bad_arg(const char* expected, const isthmus_value& v) {
    throw type_error(cat("expected ", expected, ", got ", kind_name(v.kind)));
}

ISTHMUS_PLUGIN_SUPPORT_CALL double as_double(const isthmus_value& v) {
    switch (v.kind) {
    case ISTHMUS_VALUE_BOOL:
    case ISTHMUS_VALUE_INT:
        if (v.dtype == ISTHMUS_DT_UINT64) return static_cast<double>(static_cast<uint64_t>(v.u.i));
        return static_cast<double>(v.u.i);
    case ISTHMUS_VALUE_FLOAT:
        return v.u.f;
    default:
        bad_arg("a number", v);
    }
}

ISTHMUS_PLUGIN_SUPPORT_CALL void vec_elements(const isthmus_value& v, int n, double* out) {
    if (v.kind != ISTHMUS_VALUE_TENSOR) bad_arg(cat("a vector of ", n, " elements").c_str(), v);
    const isthmus_tensor& t = v.u.t;
    int64_t numel = 1;
    for (int d = 0; d < t.ndim; ++d) numel *= t.shape[d];
    if (numel != n || t.ndim > 1)
        throw value_error(cat("expected a vector of ", n, " elements, got a tensor of ", numel,
                              " element(s) and ", t.ndim, " dimension(s)"));
    const int64_t s = t.ndim == 1 ? t.strides[0] : 0;
    for (int i = 0; i < n; ++i) out[i] = load_as_double(t.data, t.dtype, i * s);
}

ISTHMUS_PLUGIN_SUPPORT void rethrow_for_arg(const error& e, size_t i) {
    throw error(arg_label(static_cast<int64_t>(i)) + ": " + e.what(), e.code());
}

// Runs `convert`; an error it raises names argument `arg` (none for -1).
template <typename F>
auto named_conversion(int64_t arg, F convert) -> decltype(convert()) {
    if (arg < 0) return convert();
    try {
        return convert();
    } catch (const error& e) {
        rethrow_for_arg(e, static_cast<size_t>(arg));
    }
}

ISTHMUS_PLUGIN_SUPPORT_CALL bool arg_bool(const isthmus_value& v, int64_t arg) {
    return named_conversion(arg, [&] {
        if (v.kind != ISTHMUS_VALUE_BOOL && v.kind != ISTHMUS_VALUE_INT) bad_arg("a bool", v);
        return v.u.i != 0;
    });
}

// Whether the integer `v` fits T.
template <typename T>
bool fits_integer(const isthmus_value& v) {
    if (v.dtype == ISTHMUS_DT_UINT64) return std::in_range<T>(static_cast<uint64_t>(v.u.i));
    return std::in_range<T>(v.u.i);
}
// Whether the integer `v` fits the T of dtype code `dtype` among Ts (true for any other dtype).
template <typename... Ts>
bool fits_dtype(const isthmus_value& v, int32_t dtype) {
    bool ok = true;
    ((dtype == dtype_code<Ts>::value ? (void)(ok = fits_integer<Ts>(v)) : (void)0), ...);
    return ok;
}

ISTHMUS_PLUGIN_SUPPORT_CALL int64_t arg_integer(const isthmus_value& v, int32_t dtype,
                                                int64_t arg) {
    return named_conversion(arg, [&] {
        if (v.kind != ISTHMUS_VALUE_INT && v.kind != ISTHMUS_VALUE_BOOL) bad_arg("an integer", v);
        // Note [integer parameters]
        // ~~~~~~~~~~~~~~~~~~~~~~~~~
        // An integer that does not fit the parameter's type is an error (NumPy 2's rule for Python
        // integers), never a wrapped value. The host checks first, naming the parameter; this is
        // the check for hosts and callers that do not.
        const bool ok =
            fits_dtype<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>(
                v, dtype);
        if (!ok) {
            if (v.dtype == ISTHMUS_DT_UINT64)
                throw overflow_error(cat("integer ", static_cast<uint64_t>(v.u.i),
                                         " is out of bounds for ", dtype_name(dtype)));
            throw overflow_error(
                cat("integer ", v.u.i, " is out of bounds for ", dtype_name(dtype)));
        }
        return v.u.i;
    });
}

ISTHMUS_PLUGIN_SUPPORT_CALL double arg_number(const isthmus_value& v, int64_t arg) {
    return named_conversion(arg, [&] { return as_double(v); });
}

ISTHMUS_PLUGIN_SUPPORT_CALL const isthmus_tensor& arg_tensor(const isthmus_value& v, int64_t arg) {
    return named_conversion(arg, [&]() -> const isthmus_tensor& {
        if (v.kind != ISTHMUS_VALUE_TENSOR) bad_arg("a tensor", v);
        return v.u.t;
    });
}

ISTHMUS_PLUGIN_SUPPORT_CALL const isthmus_tensor& arg_view(const isthmus_value& v, int32_t dtype,
                                                           int rank, int64_t arg) {
    return named_conversion(arg, [&]() -> const isthmus_tensor& {
        if (v.kind != ISTHMUS_VALUE_TENSOR) bad_arg("a tensor", v);
        check_view_of(v.u.t, dtype, rank);
        return v.u.t;
    });
}

ISTHMUS_PLUGIN_SUPPORT_CALL void arg_vec(const isthmus_value& v, int n, double* out, int64_t arg) {
    named_conversion(arg, [&] { vec_elements(v, n, out); });
}

ISTHMUS_PLUGIN_SUPPORT void check_arg_count(const isthmus_kernel* self, size_t n, int32_t nargs) {
    if (static_cast<size_t>(nargs) != n)
        throw type_error(cat(self->signature, ": expected ", n, " argument(s), got ", nargs));
}

ISTHMUS_PLUGIN_SUPPORT_CALL void check_device(const isthmus_kernel* self, const isthmus_value& v,
                                              size_t index, int32_t type, int32_t id) {
    if (v.kind != ISTHMUS_VALUE_TENSOR) return;
    const isthmus_tensor& t = v.u.t;
    if (t.device_type != type || (type == ISTHMUS_DEVICE_CUDA && t.device_id != id))
        throw value_error(cat(self->signature, ": ", arg_label(static_cast<int64_t>(index)),
                              " is a tensor on ", device_text(t.device_type, t.device_id),
                              " but the kernel runs on ", device_text(type, id)));
}

ISTHMUS_PLUGIN_SUPPORT_CALL void check_view_of(const isthmus_tensor& t, int32_t dtype, int rank) {
    if (t.dtype != dtype)
        throw type_error(
            cat("expected a tensor of ", dtype_name(dtype), ", got ", dtype_name(t.dtype)));
    if (t.ndim != rank)
        throw type_error(cat("expected a tensor with ", rank, " dimension(s), got ", t.ndim));
}

} // namespace detail

ISTHMUS_PLUGIN_SUPPORT void callback::invoke(const isthmus_value* args, int32_t nargs,
                                             isthmus_value* result) const {
    isthmus_call* c = detail::t_state.call;
    isthmus_call* own = nullptr;
    if (!c) {
        if (!detail::g_host || !detail::g_host->begin_call)
            throw error("isthmus::plugin: cannot call the host outside a call");
        own = c = detail::g_host->begin_call(detail::g_host);
    }
    const int rc = cb_->invoke(cb_->data, c, args, nargs, result);
    if (own) {
        char msg[1024] = {0};
        const int32_t code = c->host->end_call(own, msg, sizeof msg);
        if (rc != 0 || code != 0) throw error(msg, code ? code : ISTHMUS_ERR_RUNTIME);
    } else if (rc != 0) {
        // The host already recorded the error in this call; unwind to the plugin boundary, which
        // reports nothing new (the first error wins).
        throw error("a host callback failed");
    }
}

ISTHMUS_PLUGIN_SUPPORT module_base::module_base(const char* name, const char* description)
    : s_(new detail::module_state) {
    isthmus_plugin& d = s_->desc;
    d.abi_version = ISTHMUS_PLUGIN_ABI_VERSION;
    d.struct_size = sizeof(isthmus_plugin);
    d.name = s_->st.keep(name);
    d.description = description ? s_->st.keep(description) : nullptr;
    d.features = ISTHMUS_FEATURE_CHECKED_MODE; // See Note [view checks]
}

ISTHMUS_PLUGIN_SUPPORT void module_base::drop_checked_mode() {
    s_->desc.features &= ~ISTHMUS_FEATURE_CHECKED_MODE;
}

ISTHMUS_PLUGIN_SUPPORT module_base::~module_base() {
    for (auto it = s_->kept_objects.rbegin(); it != s_->kept_objects.rend(); ++it) it->drop(it->p);
    delete s_;
}

ISTHMUS_PLUGIN_SUPPORT void* module_base::keep(void* p, void (*drop)(void*)) {
    try {
        s_->kept_objects.push_back({p, drop});
    } catch (...) {
        drop(p);
        throw;
    }
    return p;
}

ISTHMUS_PLUGIN_SUPPORT names plugin::module::padded_names(const name_list& given, size_t n) {
    names r(n);
    for (size_t i = 0; i < n; ++i)
        r[i] = i < given.size() && *given[i] ? std::string(given[i]) : detail::cat("arg", i);
    return r;
}

namespace detail {
// The parameter table of a registration, kept as long as the module: `all[skip, skip + n)`, named
// from `given` (else arg<k>).
ISTHMUS_PLUGIN_SUPPORT std::vector<isthmus_param>& named_params(module_state& s, const char* what,
                                                                const isthmus_param* all,
                                                                const name_list& given, size_t n,
                                                                size_t skip) {
    // A name list that does not match the parameters once gave arg<k> to the missing ones and
    // dropped the extra ones without a word: the plugin now fails to load, saying which.
    if (!given.empty() && given.size() != n)
        throw value_error(cat("\"", what, "\" names ", given.size(), " parameter(s) but has ", n,
                              "; give one name per parameter, in order (a kernel's position takes "
                              "none), or no list for arg0, arg1, ..."));
    std::vector<isthmus_param>& ps = s.st.params.emplace_back();
    for (size_t k = 0; k < n; ++k) {
        ps.push_back(all[skip + k]);
        ps.back().name = s.st.keep(k < given.size() ? given[k] : cat("arg", k));
    }
    return ps;
}
} // namespace detail

ISTHMUS_PLUGIN_SUPPORT kernel_def module_base::add_kernel(const char* name, const char* doc,
                                                          const isthmus_param* all, size_t n,
                                                          const name_list& given, int32_t pos_ndim,
                                                          isthmus_kernel_launch launch_cpu,
                                                          isthmus_kernel_launch_cuda launch_cuda,
                                                          void* data) {
    std::vector<isthmus_param>& ps = detail::named_params(*s_, name, all, given, n, 0);
    isthmus_kernel k{};
    k.name = s_->st.keep(name);
    std::string sig = detail::signature_of(name, ps, "");
    sig.insert(sig.size() - 1, detail::cat(ps.empty() ? "" : ", ", "pos: ivec", pos_ndim));
    k.signature = s_->st.keep(sig);
    k.doc = doc ? s_->st.keep(doc) : nullptr;
    k.nparams = static_cast<int32_t>(ps.size());
    k.params = ps.data();
    k.pos_ndim = pos_ndim;
    k.device_types = 1 << ISTHMUS_DEVICE_CPU;
    k.launch_cpu = launch_cpu;
    if (launch_cuda) {
        k.device_types |= 1 << ISTHMUS_DEVICE_CUDA;
        k.launch_cuda = launch_cuda;
    }
    k.data = data;
    s_->kernels.push_back(k);
    return kernel_def(*this, s_->kernels.size() - 1);
}

ISTHMUS_PLUGIN_SUPPORT void
plugin::module::add_function_entry(std::vector<isthmus_function>& into, const char* name,
                                   const char* doc, const char* result, const isthmus_param* all,
                                   const name_list& given, size_t n, size_t skip,
                                   isthmus_function_impl impl, void* data) {
    std::vector<isthmus_param>& ps = detail::named_params(*s_, name, all, given, n, skip);
    isthmus_function fn{};
    fn.name = s_->st.keep(name);
    fn.signature = s_->st.keep(detail::signature_of(name, ps, result));
    fn.doc = doc ? s_->st.keep(doc) : nullptr;
    fn.nparams = static_cast<int32_t>(ps.size());
    fn.params = ps.data();
    fn.impl = impl;
    fn.data = data;
    into.push_back(fn);
}

namespace detail {
// Re-points the object parameters and type slots at `to`, the flat copy of type `from`.
ISTHMUS_PLUGIN_SUPPORT void retarget(module_state& s, const isthmus_type* from,
                                     const isthmus_type* to) {
    auto fix = [&](const isthmus_param* ps, int32_t n) {
        for (int32_t i = 0; i < n; ++i)
            if (ps[i].type == from) const_cast<isthmus_param&>(ps[i]).type = to;
    };
    for (auto& f : s.functions) fix(f.params, f.nparams);
    for (auto& k : s.kernels) fix(k.params, k.nparams);
    for (auto& [t, tm] : s.type_members)
        for (auto& f : tm.methods) fix(f.params, f.nparams);
    for (auto& fx : s.retargets) fx(from, to);
}
} // namespace detail

ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* module_base::descriptor() {
    detail::module_state& s = *s_;
    for (auto& t : s.types) {
        auto& tm = s.type_members[&t];
        t.nfields = static_cast<int32_t>(tm.fields.size());
        t.fields = tm.fields.data();
        t.nmethods = static_cast<int32_t>(tm.methods.size());
        t.methods = tm.methods.data();
        t.nevents = static_cast<int32_t>(tm.events.size());
        t.events = tm.events.data();
    }
    s.flat_types.assign(s.types.begin(), s.types.end());
    // Re-point the type slots and object parameters at the flat copies.
    for (size_t i = 0; i < s.types.size(); ++i) detail::retarget(s, &s.types[i], &s.flat_types[i]);
    s.desc.nfunctions = static_cast<int32_t>(s.functions.size());
    s.desc.functions = s.functions.data();
    s.desc.nkernels = static_cast<int32_t>(s.kernels.size());
    s.desc.kernels = s.kernels.data();
    s.desc.ntypes = static_cast<int32_t>(s.flat_types.size());
    s.desc.types = s.flat_types.data();
    return &s.desc;
}

namespace detail {
// The tensor parameter of kernel k named `want`; throws naming `what` (the declaration).
ISTHMUS_PLUGIN_SUPPORT isthmus_param& tensor_param(const isthmus_kernel& k, const char* want,
                                                   const char* what) {
    auto* ps = const_cast<isthmus_param*>(k.params);
    int32_t i = 0;
    while (i < k.nparams && std::string_view(want) != ps[i].name) ++i;
    if (i == k.nparams || ps[i].kind != ISTHMUS_PARAM_TENSOR)
        throw value_error(cat("kernel ", k.name, ": ", what, "(\"", std::string(want),
                              "\"): the kernel has no tensor parameter of that name"));
    return ps[i];
}
} // namespace detail

ISTHMUS_PLUGIN_SUPPORT kernel_def&
kernel_def::at_position(std::initializer_list<const char*> params) {
    for (size_t index : {index_, derived_, forward_}) {
        if (index == static_cast<size_t>(-1)) continue;
        const isthmus_kernel& k = m_.s_->kernels[index];
        for (const char* want : params)
            detail::tensor_param(k, want, "at_position").flags |= ISTHMUS_PARAM_AT_POSITION;
    }
    return *this;
}

ISTHMUS_PLUGIN_SUPPORT kernel_def& kernel_def::stencil(std::initializer_list<const char*> params,
                                                       int radius) {
    for (size_t index : {index_, derived_, forward_}) {
        if (index == static_cast<size_t>(-1)) continue;
        const isthmus_kernel& k = m_.s_->kernels[index];
        if (radius < 1 || radius > 255)
            throw value_error(
                detail::cat("kernel ", k.name, ": stencil radius ", radius, " is outside 1..255"));
        for (const char* want : params) {
            isthmus_param& p = detail::tensor_param(k, want, "stencil");
            p.flags = (p.flags & ~ISTHMUS_PARAM_STENCIL_MASK) | ISTHMUS_PARAM_AT_POSITION |
                      (static_cast<uint32_t>(radius) << ISTHMUS_PARAM_STENCIL_SHIFT);
        }
    }
    return *this;
}

namespace detail {
ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* define_plugin(module_base& m,
                                                           void (*define)(module_base&)) {
    try {
        define(m);
        return m.descriptor();
    } catch (...) {
        static std::string message;
        try {
            throw;
        } catch (const std::exception& e) {
            message = e.what();
        } catch (...) {
            message = "unknown C++ exception";
        }
        static isthmus_plugin failed{};
        failed.abi_version = ISTHMUS_PLUGIN_ABI_VERSION;
        failed.struct_size = sizeof(isthmus_plugin);
        failed.name = "";
        failed.description = message.c_str();
        return &failed;
    }
}

ISTHMUS_PLUGIN_SUPPORT const isthmus_plugin* plugin_entry(plugin_slot& slot, const char* name,
                                                          void (*define)(module_base&),
                                                          uint32_t host_abi,
                                                          const isthmus_host* host) {
    // See Note [the plugin entry's statics]
    std::atomic_ref<const isthmus_plugin*> desc(slot.desc);
    const isthmus_plugin* d = desc.load(std::memory_order_acquire);
    if (!d) {
        static std::recursive_mutex mu;
        std::lock_guard lk(mu);
        d = desc.load(std::memory_order_relaxed);
        if (!d) {
            try {
                slot.mod = new plugin::module(name);
            } catch (...) {
                return nullptr; // out of memory: the host says the entry gave no descriptor
            }
            d = define_plugin(*slot.mod, define);
            desc.store(d, std::memory_order_release);
        }
    }
    if (host_abi == ISTHMUS_PLUGIN_ABI_VERSION) g_host = host;
    return d;
}
} // namespace detail

} // namespace isthmus::plugin

#include "isthmus/plugin/driver_launch.hpp"

#pragma GCC diagnostic pop
