// Host side of the ABI, results: plugin values to runtime values (results, callback arguments,
// tuples), host values handed to plugins (callback and call_python results), host callables as
// ABI callbacks. Arguments are in marshal.cpp and arg_checks.cpp, the callback table in
// host_table.cpp.
#include "call_context.hpp"

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace isthmus::plugin_host::detail {

namespace {

// Note [tuple results in the ABI] (plugin_abi.h): how deep tuples may nest in one result.
constexpr int k_max_tuple_depth = 64;

std::string plugin_label(const std::shared_ptr<const library>& lib) {
    return lib ? "plugin " + lib->name() : std::string("a plugin");
}

value unmarshal_at(const isthmus_value& v, call_context& ctx,
                   const std::shared_ptr<const library>& lib, int depth);

// A tuple result: the host's item array (new_tuple), each item converted once; a 1-d cell.
value unmarshal_tuple(const isthmus_value& v, call_context& ctx,
                      const std::shared_ptr<const library>& lib, int depth) {
    call_context::owned* tup = nullptr;
    {
        std::lock_guard lk(ctx.mu);
        for (auto& o : ctx.results)
            if (o.get() == v.owner && o->tuple) tup = o.get();
    }
    ISTHMUS_CHECK(tup && v.u.tup.items == tup->items.data() &&
                      v.u.tup.size == static_cast<int64_t>(tup->items.size()),
                  runtime_error, plugin_label(lib),
                  " returned a tuple the host did not allocate (tuples come from "
                  "isthmus_host.new_tuple, with the items and size it gave)");
    ISTHMUS_CHECK(!tup->taken, runtime_error, plugin_label(lib),
                  " returned the same tuple twice in one result (or a tuple holding itself)");
    ISTHMUS_CHECK(depth < k_max_tuple_depth, value_error, plugin_label(lib),
                  " returned tuples nested more than ", k_max_tuple_depth, " deep");
    tup->taken = true;
    auto c = std::make_shared<cell>();
    c->shape = {static_cast<int64_t>(tup->items.size())};
    c->items.resize(tup->items.size());
    // Every item is converted even after one fails, so that the objects and callbacks of the
    // others are owned (and freed) too; then the first error is raised.
    std::exception_ptr first;
    for (size_t i = 0; i < tup->items.size(); ++i) {
        try {
            c->items[i] = unmarshal_at(tup->items[i], ctx, lib, depth + 1);
        } catch (...) {
            if (!first) first = std::current_exception();
        }
    }
    if (first) std::rethrow_exception(first);
    return value(std::move(c));
}

value unmarshal_at(const isthmus_value& v, call_context& ctx,
                   const std::shared_ptr<const library>& lib, int depth) {
    switch (v.kind) {
    case ISTHMUS_VALUE_NONE:
        return value();
    case ISTHMUS_VALUE_BOOL:
        return value(scalar(v.u.i != 0));
    case ISTHMUS_VALUE_INT: {
        const dtype dt = v.dtype >= 0 ? dtype_of_code(v.dtype) : dtype::int64;
        if (dt == dtype::uint64) return value(scalar(static_cast<uint64_t>(v.u.i)));
        if (dt == dtype::int64 || !is_integer(dt)) return value(scalar(v.u.i));
        return value(scalar::of(static_cast<double>(v.u.i), dt));
    }
    case ISTHMUS_VALUE_FLOAT:
        if (v.dtype == ISTHMUS_DT_FLOAT32) return value(scalar(static_cast<float>(v.u.f)));
        return value(scalar(v.u.f));
    case ISTHMUS_VALUE_COMPLEX:
        if (v.dtype == ISTHMUS_DT_COMPLEX64)
            return value(
                scalar(complex64_t(static_cast<float>(v.u.c[0]), static_cast<float>(v.u.c[1]))));
        return value(scalar(complex128_t(v.u.c[0], v.u.c[1])));
    case ISTHMUS_VALUE_STRING:
        return value(std::string(v.u.s.data, static_cast<size_t>(v.u.s.size)));
    case ISTHMUS_VALUE_TENSOR: {
        {
            std::lock_guard lk(ctx.mu);
            for (auto& o : ctx.results)
                if (o.get() == v.owner && o->t.defined()) {
                    // unlocked once; a tensor returned twice (in a tuple) is the same tensor
                    if (!o->taken) o->t.unlock(o->mode, MEMRESOURCE_CPU);
                    o->taken = true;
                    return value(o->t);
                }
        }
        // A borrowed tensor (an argument handed back, a callback argument): copy it.
        ISTHMUS_CHECK(v.owner == nullptr, runtime_error,
                      "plugin ABI: a tensor result whose owner is not a tensor of this call "
                      "(new_tensor)");
        const isthmus_tensor& at = v.u.t;
        shape_t shape(at.shape, at.shape + at.ndim), strides(at.strides, at.strides + at.ndim);
        tensor view = tensor::wrap(at.data, dtype_of_code(at.dtype), shape, strides,
                                   MEMRESOURCE_CPU, nullptr);
        return value(view.clone());
    }
    case ISTHMUS_VALUE_OBJECT: {
        const isthmus_plugin& d = lib->descriptor();
        const bool ours = v.u.o.type >= d.types && v.u.o.type < d.types + d.ntypes;
        ISTHMUS_CHECK(ours, runtime_error, "plugin ", lib->name(),
                      " returned an object of a type it does not declare");
        return value(std::static_pointer_cast<object>(
            std::make_shared<plugin_object>(lib, v.u.o.type, v.u.o.instance)));
    }
    case ISTHMUS_VALUE_CALLBACK:
        if (v.u.cb.release) v.u.cb.release(v.u.cb.data);
        ISTHMUS_THROW(not_implemented_error, plugin_label(lib),
                      " returned a callable; callables cannot be results");
    case ISTHMUS_VALUE_TUPLE:
        return unmarshal_tuple(v, ctx, lib, depth);
    default:
        ISTHMUS_THROW(runtime_error, plugin_label(lib), " returned a value of unknown kind ",
                      v.kind);
    }
}

} // namespace

value unmarshal(const isthmus_value& v, call_context& ctx,
                const std::shared_ptr<const library>& lib) {
    return unmarshal_at(v, ctx, lib, 0);
}

void marshal_result(const value& v, call_context& ctx, isthmus_value& out) {
    std::memset(&out, 0, sizeof out);
    out.dtype = ISTHMUS_DT_ANY;
    if (v.is_scalar() || v.is_none()) {
        arg_slot unused;
        marshal(v, nullptr, unused, out, nullptr);
        return;
    }
    auto o = std::make_unique<call_context::owned>();
    if (v.is_string()) {
        o->s = v.as_string();
        out.kind = ISTHMUS_VALUE_STRING;
        out.u.s.data = o->s.data();
        out.u.s.size = static_cast<int64_t>(o->s.size());
    } else if (v.is_tensor()) {
        o->t = v.as_tensor();
        o->mode = lock_mode::read;
        void* data = o->t.lock(lock_mode::read, MEMRESOURCE_CPU);
        out.kind = ISTHMUS_VALUE_TENSOR;
        out.dtype = code_of(o->t.dtype());
        out.u.t = {data,
                   ISTHMUS_DEVICE_CPU,
                   0,
                   out.dtype,
                   static_cast<int32_t>(o->t.dim()),
                   o->t.shape().data(),
                   o->t.strides().data()};
    } else {
        ISTHMUS_THROW(type_error,
                      "a host result handed to a plugin must be a number, a string, "
                      "None or a tensor, got ",
                      describe(v));
    }
    ctx.hand_out(std::move(o), out);
}

// ---- host callables as ABI callbacks -----------------------------------------------------------

namespace {

struct callback_state {
    host_callable fn;
    std::shared_ptr<const library> lib;
};

int callback_invoke(void* data, isthmus_call* call, const isthmus_value* args, int32_t nargs,
                    isthmus_value* result) {
    auto* st = static_cast<callback_state*>(data);
    call_context& ctx = call_context::of(call);
    try {
        std::vector<value> vs;
        vs.reserve(static_cast<size_t>(nargs));
        for (int32_t i = 0; i < nargs; ++i) vs.push_back(unmarshal(args[i], ctx, st->lib));
        const value r = st->fn(vs);
        if (r.is_scalar() || r.is_none() || r.is_string() || r.is_tensor())
            marshal_result(r, ctx, *result);
        else { // other results (objects) are dropped: events ignore them
            std::memset(result, 0, sizeof *result);
            result->dtype = ISTHMUS_DT_ANY;
        }
        return 0;
    } catch (...) {
        std::string msg = "host callback failed";
        try {
            throw;
        } catch (const std::exception& e) {
            msg = e.what();
        } catch (...) {
        }
        ctx.fail(ISTHMUS_ERR_RUNTIME, msg.c_str(), std::current_exception());
        return 1;
    }
}

void callback_release(void* data) {
    delete static_cast<callback_state*>(data);
}

} // namespace

isthmus_callback make_callback(host_callable fn, std::shared_ptr<const library> lib) {
    isthmus_callback cb{};
    cb.invoke = &callback_invoke;
    cb.release = &callback_release;
    cb.data = new callback_state{std::move(fn), std::move(lib)};
    return cb;
}

} // namespace isthmus::plugin_host::detail
