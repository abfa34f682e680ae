// The host's callback table (isthmus_host) that plugins call back through, and the Python bridge
// behind its call_python.
#include "call_context.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>

namespace isthmus::plugin_host::detail {

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

} // namespace isthmus::plugin_host::detail
