// Host side of the ABI: the callback table, call contexts, and arguments (runtime values to ABI
// values); results and host callables are in results.cpp.
#include "call_context.hpp"

#include "isthmus/storage.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>

namespace isthmus::plugins::detail {

namespace {

constexpr dtype k_codes[] = {dtype::bool_,   dtype::int8,      dtype::int16,     dtype::int32,
                             dtype::int64,   dtype::uint8,     dtype::uint16,    dtype::uint32,
                             dtype::uint64,  dtype::float16,   dtype::bfloat16,  dtype::float32,
                             dtype::float64, dtype::complex64, dtype::complex128};

} // namespace

int32_t code_of(dtype dt) noexcept {
    for (int32_t i = 0; i < 15; ++i)
        if (k_codes[i] == dt) return i;
    return ISTHMUS_DT_ANY;
}

dtype dtype_of_code(int32_t code) {
    ISTHMUS_CHECK(code >= 0 && code <= ISTHMUS_DT_COMPLEX128, type_error,
                  "plugin ABI: unknown dtype code ", code);
    return k_codes[code];
}

// ---- call contexts -------------------------------------------------------------------------

call_context::call_context() {
    base.host = &host_table();
    base.ctx = this;
}

call_context::~call_context() {
    finish();
}

void call_context::fail(int32_t c, const char* msg, std::exception_ptr e) {
    std::lock_guard lk(mu);
    if (code != 0) return; // the first error wins
    code = c == 0 ? ISTHMUS_ERR_RUNTIME : c;
    message = msg ? msg : "";
    cause = std::move(e);
}

void call_context::rethrow(const std::string& prefix) const {
    if (cause) std::rethrow_exception(cause);
    const std::string m = prefix + message;
    switch (code) {
    case ISTHMUS_ERR_VALUE:
        throw value_error(m);
    case ISTHMUS_ERR_TYPE:
        throw type_error(m);
    case ISTHMUS_ERR_INDEX:
        throw index_error(m);
    case ISTHMUS_ERR_MEMORY:
        throw memory_error(m);
    case ISTHMUS_ERR_OVERFLOW:
        throw overflow_error(m);
    default:
        throw runtime_error(m);
    }
}

void call_context::finish() {
    for (auto& o : results)
        if (o && o->t.defined() && !o->taken) {
            try {
                o->t.unlock(o->mode, MEMRESOURCE_CPU);
            } catch (...) {
            }
            o->t = tensor();
        }
}

// ---- the callback table ----------------------------------------------------------------------

namespace {

void host_set_error(isthmus_call* call, int32_t code, const char* message) {
    if (call) call_context::of(call).fail(code, message);
}

int host_new_tensor(isthmus_call* call, int32_t code, int32_t ndim, const int64_t* shape,
                    isthmus_value* out) {
    call_context& ctx = call_context::of(call);
    try {
        ISTHMUS_CHECK(ndim >= 0 && ndim <= 16, value_error, "new_tensor: rank ", ndim,
                      " is outside [0, 16]");
        shape_t s(shape, shape + ndim);
        for (int64_t d : s)
            ISTHMUS_CHECK(d >= 0, value_error, "new_tensor: negative size in ", shape_str(s));
        auto o = std::make_unique<call_context::owned>();
        o->t = tensor::empty(s, dtype_of_code(code), MEMRESOURCE_CPU);
        void* p = o->t.lock(lock_mode::write, MEMRESOURCE_CPU);
        std::memset(out, 0, sizeof *out);
        out->kind = ISTHMUS_VALUE_TENSOR;
        out->dtype = code;
        out->u.t = {
            p, ISTHMUS_DEVICE_CPU, 0, code, ndim, o->t.shape().data(), o->t.strides().data()};
        ctx.hand_out(std::move(o), *out);
        return 0;
    } catch (const std::exception& e) {
        ctx.fail(ISTHMUS_ERR_MEMORY, e.what());
        return 1;
    }
}

int host_new_string(isthmus_call* call, const char* data, int64_t size, isthmus_value* out) {
    call_context& ctx = call_context::of(call);
    try {
        auto o = std::make_unique<call_context::owned>();
        o->s.assign(data, static_cast<size_t>(size));
        std::memset(out, 0, sizeof *out);
        out->kind = ISTHMUS_VALUE_STRING;
        out->dtype = ISTHMUS_DT_ANY;
        out->u.s.data = o->s.data();
        out->u.s.size = size;
        ctx.hand_out(std::move(o), *out);
        return 0;
    } catch (const std::exception& e) {
        ctx.fail(ISTHMUS_ERR_MEMORY, e.what());
        return 1;
    }
}

// The most items a tuple may hold (isthmus_host.new_tuple): several results, not an array.
constexpr int64_t k_max_tuple = 65536;

int host_new_tuple(isthmus_call* call, int64_t size, isthmus_value* out) {
    call_context& ctx = call_context::of(call);
    try {
        ISTHMUS_CHECK(size >= 0 && size <= k_max_tuple, value_error, "new_tuple: size ", size,
                      " is outside [0, ", k_max_tuple, "]");
        auto o = std::make_unique<call_context::owned>();
        o->tuple = true;
        isthmus_value none{};
        none.kind = ISTHMUS_VALUE_NONE;
        none.dtype = ISTHMUS_DT_ANY;
        o->items.assign(static_cast<size_t>(size), none);
        std::memset(out, 0, sizeof *out);
        out->kind = ISTHMUS_VALUE_TUPLE;
        out->dtype = ISTHMUS_DT_ANY;
        out->u.tup.items = o->items.data();
        out->u.tup.size = size;
        ctx.hand_out(std::move(o), *out);
        return 0;
    } catch (const value_error& e) {
        ctx.fail(ISTHMUS_ERR_VALUE, e.what());
        return 1;
    } catch (const std::exception& e) {
        ctx.fail(ISTHMUS_ERR_MEMORY, e.what());
        return 1;
    }
}

void host_log(isthmus_call*, int32_t level, const char* message) {
    static const char* const names[] = {"debug", "info", "warning", "error"};
    std::cerr << "[isthmus plugin " << (level >= 0 && level <= 3 ? names[level] : "log") << "] "
              << message << '\n';
}

isthmus_call* host_begin_call(const isthmus_host*) {
    try {
        return &(new call_context)->base;
    } catch (...) {
        return nullptr;
    }
}

int32_t host_end_call(isthmus_call* call, char* message, int64_t capacity) {
    std::unique_ptr<call_context> ctx(&call_context::of(call));
    if (message && capacity > 0) {
        const size_t n = std::min<size_t>(ctx->message.size(), static_cast<size_t>(capacity - 1));
        std::memcpy(message, ctx->message.data(), n);
        message[n] = '\0';
    }
    return ctx->code;
}

std::atomic<python_bridge> g_bridge{nullptr};

// Note [call_python]
// ~~~~~~~~~~~~~~~~~~
// Plugin code calls a Python function by its qualified name ("numpy.linalg.norm", "math.hypot",
// "mymodule.f"); the arguments convert like a callback's (tensors are copied), the result like a
// callback's result (numbers, strings, None, tensors locked for reading until the call ends). The
// bridge takes the GIL itself, so this works from a plugin function called by Python (GIL held) and
// from a parallel_do body (GIL released). A Python exception is recorded with its exception_ptr, so
// it reaches a Python caller as itself.
int host_call_python(isthmus_call* call, const char* qualified_name, const isthmus_value* args,
                     int32_t nargs, isthmus_value* result) {
    call_context& ctx = call_context::of(call);
    try {
        const python_bridge bridge = g_bridge.load(std::memory_order_acquire);
        ISTHMUS_CHECK(bridge != nullptr, runtime_error, "call_python(",
                      qualified_name ? qualified_name : "NULL",
                      "): Python is not available in this host (import isthmus from Python, or "
                      "call isthmus::python::import_isthmus() in a C++ host first)");
        ISTHMUS_CHECK(qualified_name && *qualified_name, value_error,
                      "call_python: expected a qualified name such as \"numpy.sum\", got an "
                      "empty one");
        ISTHMUS_CHECK(nargs >= 0 && (nargs == 0 || args), value_error,
                      "call_python: bad argument array (", nargs, " argument(s))");
        std::vector<value> vs;
        vs.reserve(static_cast<size_t>(nargs));
        for (int32_t i = 0; i < nargs; ++i) {
            const isthmus_value& a = args[i];
            if (a.kind == ISTHMUS_VALUE_TENSOR) { // always a copy: the plugin keeps its tensor
                const isthmus_tensor& at = a.u.t;
                shape_t shape(at.shape, at.shape + at.ndim);
                shape_t strides(at.strides, at.strides + at.ndim);
                vs.emplace_back(tensor::wrap(at.data, dtype_of_code(at.dtype), shape, strides,
                                             MEMRESOURCE_CPU, nullptr)
                                    .clone());
                continue;
            }
            ISTHMUS_CHECK(a.kind >= ISTHMUS_VALUE_NONE && a.kind <= ISTHMUS_VALUE_STRING,
                          type_error, "call_python(", qualified_name, "): argument ", i + 1,
                          " must be a number, a string, None or a tensor");
            vs.push_back(unmarshal(a, ctx, nullptr));
        }
        marshal_result(bridge(qualified_name, vs), ctx, *result);
        return 0;
    } catch (...) {
        std::string msg = "call_python failed";
        int32_t code = ISTHMUS_ERR_RUNTIME;
        try {
            throw;
        } catch (const value_error& e) {
            msg = e.what(), code = ISTHMUS_ERR_VALUE;
        } catch (const type_error& e) {
            msg = e.what(), code = ISTHMUS_ERR_TYPE;
        } catch (const std::exception& e) {
            msg = e.what();
        } catch (...) {
        }
        ctx.fail(code, msg.c_str(), std::current_exception());
        return 1;
    }
}

uint32_t host_call_flags(isthmus_call* call) {
    return call ? call_context::of(call).flags : 0;
}

// See Note [tuple results in the ABI]: u.tup fits inside the union's size, so isthmus_value's
// layout is the one older plugins were built with.
static_assert(sizeof(isthmus_value::u) == sizeof(isthmus_tensor),
              "isthmus_value's union must keep the size of isthmus_tensor");
static_assert(offsetof(isthmus_host, new_tuple) ==
                  offsetof(isthmus_host, call_flags) + sizeof(void*),
              "new_tuple takes the slot after call_flags");

isthmus_host make_table() {
    isthmus_host h{};
    h.abi_version = ISTHMUS_PLUGIN_ABI_VERSION;
    h.struct_size = sizeof(isthmus_host);
    h.set_error = &host_set_error;
    h.new_tensor = &host_new_tensor;
    h.new_string = &host_new_string;
    h.log = &host_log;
    h.begin_call = &host_begin_call;
    h.end_call = &host_end_call;
    h.call_python = &host_call_python;
    h.call_flags = &host_call_flags;
    h.new_tuple = &host_new_tuple;
    return h;
}

} // namespace

void set_python_bridge(python_bridge fn) noexcept {
    g_bridge.store(fn, std::memory_order_release);
}

const isthmus_host& host_table() noexcept {
    static const isthmus_host table = make_table();
    return table;
}

// ---- argument checks ---------------------------------------------------------------------------

arg_slot::~arg_slot() {
    if (locked) {
        try {
            t.unlock(mode, where);
        } catch (...) {
        }
    }
}

std::string describe(const value& v) {
    switch (v.kind()) {
    case value_kind::none:
        return "None";
    case value_kind::scalar:
        return std::string("a ") + std::string(name(v.as_scalar().type())) + " scalar";
    case value_kind::string:
        return "a string";
    case value_kind::tensor: {
        const tensor& t = v.as_tensor();
        return std::string("a ") + std::string(name(t.dtype())) + " tensor of shape " +
               shape_str(t.shape());
    }
    case value_kind::cell:
        return "a cell";
    case value_kind::object:
        return "a " + v.as_object()->kind();
    }
    return "a value";
}

namespace {

std::string expected_text(const isthmus_param& p) {
    const std::string dt = p.dtype >= 0 ? std::string(name(dtype_of_code(p.dtype))) : "any";
    switch (p.kind) {
    case ISTHMUS_PARAM_BOOL:
        return "a bool";
    case ISTHMUS_PARAM_INT:
        return "an integer";
    case ISTHMUS_PARAM_FLOAT:
        return "a real number";
    case ISTHMUS_PARAM_COMPLEX:
        return "a number";
    case ISTHMUS_PARAM_STRING:
        return "a string";
    case ISTHMUS_PARAM_TENSOR:
        return "a " + (p.dtype >= 0 ? dt + " " : std::string()) + "tensor" +
               (p.ndim >= 0 ? " with " + std::to_string(p.ndim) + " dimension(s)" : "") + " (" +
               p.type_name + ")";
    case ISTHMUS_PARAM_VEC:
        return "a vector of " + std::to_string(p.vec_len) + " numbers";
    case ISTHMUS_PARAM_OBJECT:
        return std::string("an object of type ") + (p.type ? p.type->name : "any");
    case ISTHMUS_PARAM_CALLBACK:
        return "a callable";
    default:
        return "a value";
    }
}

} // namespace

fit check_arg(const isthmus_param& p, const value& v, std::string* why) {
    auto no = [&] {
        if (why) *why = "expected " + expected_text(p) + ", got " + describe(v);
        return fit::no;
    };
    switch (p.kind) {
    case ISTHMUS_PARAM_ANY:
        return fit::exact;
    case ISTHMUS_PARAM_BOOL:
    case ISTHMUS_PARAM_INT:
    case ISTHMUS_PARAM_FLOAT:
    case ISTHMUS_PARAM_COMPLEX: {
        if (!v.is_scalar()) return no();
        const dtype dt = v.as_scalar().type();
        if (p.kind == ISTHMUS_PARAM_BOOL) return is_bool(dt) ? fit::exact : no();
        if (p.kind == ISTHMUS_PARAM_INT)
            return is_integer(dt) ? fit::exact : (is_bool(dt) ? fit::convert : no());
        if (p.kind == ISTHMUS_PARAM_FLOAT) {
            if (is_complex(dt)) return no();
            return is_floating(dt) ? fit::exact : fit::convert;
        }
        return is_complex(dt) ? fit::exact : fit::convert;
    }
    case ISTHMUS_PARAM_STRING:
        return v.is_string() ? fit::exact : no();
    case ISTHMUS_PARAM_TENSOR: {
        if (!v.is_tensor()) return no();
        const tensor& t = v.as_tensor();
        if (p.ndim >= 0 && t.dim() != p.ndim) return no();
        if (p.dtype < 0 || code_of(t.dtype()) == p.dtype) return fit::exact;
        if (!(p.flags & ISTHMUS_PARAM_WRITE)) return fit::convert;
        if (why)
            *why = "expected " + expected_text(p) + ", got " + describe(v) +
                   " (a written tensor must have the exact dtype)";
        return fit::no;
    }
    case ISTHMUS_PARAM_VEC: {
        if (!v.is_tensor()) return no();
        const tensor& t = v.as_tensor();
        if (t.dim() > 1 || t.numel() != p.vec_len || is_complex(t.dtype())) return no();
        return fit::exact;
    }
    case ISTHMUS_PARAM_OBJECT: {
        if (!v.is_object()) return no();
        auto* o = dynamic_cast<const plugin_object*>(v.as_object().get());
        if (!o || (p.type && o->type() != p.type)) return no();
        return fit::exact;
    }
    case ISTHMUS_PARAM_CALLBACK:
        return v.is_object() && dynamic_cast<const callable_object*>(v.as_object().get())
                   ? fit::exact
                   : no();
    default:
        return no();
    }
}

void check_range(const isthmus_param& p, const value& v, const std::string& what, size_t i) {
    if (p.kind != ISTHMUS_PARAM_INT || p.dtype < 0 || !v.is_scalar()) return;
    const dtype from = v.as_scalar().type();
    if (!is_integer(from)) return; // bools fit every integer type
    const dtype to = dtype_of_code(p.dtype);
    if (!is_integer(to)) return;
    const int bits = static_cast<int>(8 * itemsize(to));
    bool fits;
    std::string text;
    if (from == dtype::uint64) {
        const uint64_t u = v.as_scalar().to<uint64_t>();
        text = std::to_string(u);
        const uint64_t hi = is_signed_int(to)
                                ? (uint64_t{1} << (bits - 1)) - 1
                                : (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
        fits = u <= hi;
    } else {
        const int64_t s = v.as_scalar().to<int64_t>();
        text = std::to_string(s);
        if (is_signed_int(to)) {
            const int64_t hi = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
            fits = s >= -hi - 1 && s <= hi;
        } else {
            fits = s >= 0 && (bits == 64 || s <= (int64_t{1} << bits) - 1);
        }
    }
    ISTHMUS_CHECK(fits, overflow_error, what, ": argument ", i + 1, " (", p.name, "): integer ",
                  text, " is out of bounds for ", name(to), " (the parameter's type)");
}

// ---- marshalling -------------------------------------------------------------------------------

int cuda_ordinal(resource_id r) {
    if (r < MEMRESOURCE_DEVICE2) return -1;
    const memory_resource* res = find_resource(r);
    return res && res->name().rfind("cuda:", 0) == 0 ? r - MEMRESOURCE_DEVICE2 : -1;
}

void marshal(const value& v, const isthmus_param* p, arg_slot& slot, isthmus_value& out,
             const std::shared_ptr<const library>& lib, resource_id where) {
    std::memset(&out, 0, sizeof out);
    out.dtype = ISTHMUS_DT_ANY;
    switch (v.kind()) {
    case value_kind::none:
        out.kind = ISTHMUS_VALUE_NONE;
        return;
    case value_kind::scalar: {
        const scalar& s = v.as_scalar();
        const dtype dt = s.type();
        out.dtype = code_of(dt);
        if (is_bool(dt)) {
            out.kind = ISTHMUS_VALUE_BOOL;
            out.u.i = s.to<bool>() ? 1 : 0;
        } else if (is_integer(dt)) {
            out.kind = ISTHMUS_VALUE_INT;
            out.u.i =
                dt == dtype::uint64 ? static_cast<int64_t>(s.to<uint64_t>()) : s.to<int64_t>();
        } else if (is_complex(dt)) {
            out.kind = ISTHMUS_VALUE_COMPLEX;
            const auto c = s.to<complex128_t>();
            out.u.c[0] = c.real();
            out.u.c[1] = c.imag();
        } else {
            out.kind = ISTHMUS_VALUE_FLOAT;
            out.u.f = s.to<double>();
        }
        // A bool or integer given for a real parameter arrives as the parameter's kind.
        const auto int_as_double = [&] {
            return dt == dtype::uint64 ? static_cast<double>(static_cast<uint64_t>(out.u.i))
                                       : static_cast<double>(out.u.i);
        };
        if (p && p->kind == ISTHMUS_PARAM_FLOAT && out.kind != ISTHMUS_VALUE_FLOAT) {
            out.u.f = int_as_double();
            out.kind = ISTHMUS_VALUE_FLOAT;
        } else if (p && p->kind == ISTHMUS_PARAM_COMPLEX && out.kind != ISTHMUS_VALUE_COMPLEX) {
            const double r = out.kind == ISTHMUS_VALUE_FLOAT ? out.u.f : int_as_double();
            out.u.c[0] = r;
            out.u.c[1] = 0;
            out.kind = ISTHMUS_VALUE_COMPLEX;
        }
        return;
    }
    case value_kind::string:
        out.kind = ISTHMUS_VALUE_STRING;
        out.u.s.data = v.as_string().data();
        out.u.s.size = static_cast<int64_t>(v.as_string().size());
        return;
    case value_kind::tensor: {
        slot.t = v.as_tensor();
        const bool writes = !p || p->kind == ISTHMUS_PARAM_ANY || (p->flags & ISTHMUS_PARAM_WRITE);
        if (p && p->kind == ISTHMUS_PARAM_TENSOR && p->dtype >= 0 &&
            code_of(slot.t.dtype()) != p->dtype && !writes)
            slot.t = slot.t.to(dtype_of_code(p->dtype)); // a read-only view of another dtype
        slot.mode = writes ? lock_mode::readwrite : lock_mode::read;
        // Note [where arguments are locked]
        // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        // On the launcher's device, except fixed vectors, which the author layer reads on the host
        // to fill a vec (a few elements).
        if (p && p->kind == ISTHMUS_PARAM_VEC) where = MEMRESOURCE_CPU;
        const int ordinal = where == MEMRESOURCE_CPU ? -1 : cuda_ordinal(where);
        ISTHMUS_CHECK(where == MEMRESOURCE_CPU || ordinal >= 0, value_error,
                      "plugin arguments can be locked on the CPU or a CUDA device, not on ",
                      get_resource(where).name());
        void* data = slot.t.lock(slot.mode, where);
        slot.where = where;
        slot.locked = true;
        out.kind = ISTHMUS_VALUE_TENSOR;
        out.dtype = code_of(slot.t.dtype());
        out.u.t = {data,
                   ordinal >= 0 ? ISTHMUS_DEVICE_CUDA : ISTHMUS_DEVICE_CPU,
                   ordinal >= 0 ? ordinal : 0,
                   out.dtype,
                   static_cast<int32_t>(slot.t.dim()),
                   slot.t.shape().data(),
                   slot.t.strides().data()};
        return;
    }
    case value_kind::cell:
        ISTHMUS_THROW(type_error, "plugin calls do not take cells (given ", describe(v), ")");
    case value_kind::object: {
        const auto& o = v.as_object();
        if (auto* po = dynamic_cast<const plugin_object*>(o.get())) {
            out.kind = ISTHMUS_VALUE_OBJECT;
            out.u.o.instance = po->instance();
            out.u.o.type = po->type();
            return;
        }
        if (auto* co = dynamic_cast<const callable_object*>(o.get())) {
            out.kind = ISTHMUS_VALUE_CALLBACK;
            out.u.cb = make_callback(co->fn(), lib);
            return;
        }
        ISTHMUS_THROW(type_error, "plugin calls do not take ", describe(v));
    }
    }
}

} // namespace isthmus::plugins::detail
