// Argument checks: how well a runtime value fits a plugin parameter, integer parameter ranges, and
// the descriptions of values in their messages.
#include "call_context.hpp"

#include <cstdint>

namespace isthmus::plugin_host::detail {

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

void check_range(const isthmus_param& p, const value& v, std::string_view what, size_t i) {
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

} // namespace isthmus::plugin_host::detail
