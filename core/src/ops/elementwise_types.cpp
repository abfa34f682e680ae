// The dtype rules of elementwise ops (NumPy 2 semantics) and shared operand checks.
#include "ops/elementwise_types.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

namespace isthmus::ops {

namespace {

[[noreturn]] void unsupported(binary_op op, dtype a, dtype b, const char* why) {
    ISTHMUS_THROW(type_error, name(op), ": not supported for dtypes ", a, " and ", b, " (", why,
                  ")");
}
[[noreturn]] void unsupported(unary_op op, dtype a, const char* why) {
    ISTHMUS_THROW(type_error, name(op), ": not supported for dtype ", a, " (", why, ")");
}

// The float dtype integer and bool inputs of math functions compute in (NumPy's rule).
dtype math_dtype(dtype t) {
    return is_inexact(t) ? t : promote_types(t, dtype::float16);
}

int kind_rank(dtype t) {
    if (is_bool(t)) return 0;
    if (is_unsigned_int(t)) return 1;
    if (is_signed_int(t)) return 2;
    if (is_floating(t)) return 3;
    return 4;
}

} // namespace

// Note [dtype rules by row]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// The switches below are over the op table's rule and on_bool columns (op_table.hpp), never over
// ops, so a new row needs no case here.
binary_signature binary_types(binary_op op, dtype a, dtype b) {
    using R = binary_rule;
    const dtype c = promote_types(a, b);
    const bool cplx = is_complex(c), flt = is_floating(c);
    const R r = rule(op);
    if (is_bool(c)) {
        switch (on_bool(op)) {
        case binary_bool::keep:
            break;
        case binary_bool::int8:
            return {op, dtype::int8, dtype::int8};
        case binary_bool::error:
            unsupported(op, a, b,
                        op == binary_op::sub
                            ? "boolean subtract; use logical_xor or bit_xor instead"
                            : "not defined for booleans");
        case binary_bool::logical_or:
            return {binary_op::logical_or, c, c};
        case binary_bool::logical_and:
            return {binary_op::logical_and, c, c};
        }
    }
    switch (r) {
    case R::arith:
        return {op, c, c};
    case R::true_div:
        if (!is_inexact(c)) return {op, dtype::float64, dtype::float64};
        return {op, c, c};
    case R::divmod:
    case R::extremum:
        if (cplx) unsupported(op, a, b, "complex numbers are not ordered");
        return {op, c, c};
    case R::math: {
        if (cplx) unsupported(op, a, b, "defined for real numbers only");
        const dtype m = math_dtype(c);
        return {op, m, m};
    }
    case R::order:
        if (cplx) unsupported(op, a, b, "complex numbers are not ordered");
        return {op, c, dtype::bool_};
    case R::equality:
        return {op, c, dtype::bool_};
    case R::logical:
        return {op, dtype::bool_, dtype::bool_};
    case R::bitwise:
        if (flt || cplx) unsupported(op, a, b, "bitwise ops need bool or integer dtypes");
        return {op, c, c};
    case R::shift:
        if (flt || cplx) unsupported(op, a, b, "shifts need integer dtypes");
        return {op, c, c};
    }
    ISTHMUS_ASSERT(false, "unknown binary_op ", static_cast<int>(op));
}

unary_signature unary_types(unary_op op, dtype a) {
    using A = unary_action;
    using R = unary_rule;
    const bool bool_ = is_bool(a), integral = is_integer(a) || bool_, cplx = is_complex(a);
    switch (rule(op)) {
    case R::negate:
        if (bool_) unsupported(op, a, "negating a boolean; use logical_not instead");
        return {A::kernel, a, a};
    case R::magnitude:
        if (bool_ || is_unsigned_int(a)) return {A::copy, a, a};
        return {A::kernel, a, real_dtype(a)};
    case R::same:
        if (bool_) return {A::copy, a, a};
        return {A::kernel, a, a};
    case R::math_real:
        if (cplx) unsupported(op, a, "defined for real numbers only");
        [[fallthrough]];
    case R::math: {
        const dtype m = math_dtype(a);
        return {A::kernel, m, m};
    }
    case R::keep_int_real:
        if (cplx) unsupported(op, a, "complex numbers are not ordered");
        [[fallthrough]];
    case R::keep_int:
        if (integral) return {A::copy, a, a};
        return {A::kernel, a, a};
    case R::logical:
        return {A::kernel, dtype::bool_, dtype::bool_};
    case R::bitwise:
        if (!integral) unsupported(op, a, "bitwise ops need bool or integer dtypes");
        return {A::kernel, a, a};
    case R::test_false:
        if (integral) return {A::fill_false, a, dtype::bool_};
        return {A::kernel, a, dtype::bool_};
    case R::test_true:
        if (integral) return {A::fill_true, a, dtype::bool_};
        return {A::kernel, a, dtype::bool_};
    case R::sign_bit:
        if (cplx) unsupported(op, a, "complex numbers have no sign bit");
        if (bool_ || is_unsigned_int(a)) return {A::fill_false, a, dtype::bool_};
        return {A::kernel, a, dtype::bool_};
    case R::real_part:
        if (cplx) return {A::real_part, a, real_dtype(a)};
        return {A::copy, a, a};
    case R::imag_part:
        if (cplx) return {A::imag_part, a, real_dtype(a)};
        return {A::zeros, a, a};
    case R::complex_only:
        if (cplx) return {A::kernel, a, a};
        return {A::copy, a, a};
    case R::inverse:
        if (integral) return {A::kernel, dtype::float64, dtype::float64};
        return {A::kernel, a, a};
    }
    ISTHMUS_ASSERT(false, "unknown unary_op ", static_cast<int>(op));
}

bool can_cast_same_kind(dtype from, dtype to) noexcept {
    return can_cast_safely(from, to) || kind_rank(from) <= kind_rank(to);
}

dtype weak_scalar_dtype(dtype t, const scalar& s, std::string_view what) {
    const scalar_kind k = kind_of(s.type());
    const dtype r = promote_with_scalar(t, k);
    if (k != scalar_kind::integer || !is_integer(r)) return r;
    // Note [weak integer range]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~
    // NEP 50 casts the Python integer to the tensor's dtype and refuses values that do not fit
    // (NumPy raises OverflowError) instead of wrapping them.
    if (!s.fits_integer(r)) {
        const std::string text = is_unsigned_int(s.type()) ? std::to_string(s.to<uint64_t>())
                                                           : std::to_string(s.to<int64_t>());
        ISTHMUS_THROW(overflow_error, what, ": Python integer ", text, " out of bounds for ", r,
                      " (the tensor's dtype; cast the tensor or pass a 0-d tensor)");
    }
    return r;
}

dtype default_scalar_dtype(const scalar& s) noexcept {
    switch (kind_of(s.type())) {
    case scalar_kind::boolean:
        return dtype::bool_;
    case scalar_kind::integer:
        if (is_unsigned_int(s.type()) &&
            s.to<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            return dtype::uint64;
        return dtype::int64;
    case scalar_kind::floating:
        return dtype::float64;
    case scalar_kind::complex:
        return dtype::complex128;
    }
    return dtype::float64;
}

shape_t broadcast_all(std::string_view what, std::initializer_list<const shape_t*> shapes) {
    size_t n = 0;
    bool same = true;
    const shape_t* first = *shapes.begin();
    for (const shape_t* s : shapes) {
        n = std::max(n, s->size());
        same = same && *s == *first;
    }
    if (same) return *first;
    shape_t out(n, 1);
    bool ok = true;
    for (const shape_t* s : shapes) {
        const size_t lead = n - s->size();
        for (size_t i = 0; i < s->size(); ++i) {
            const int64_t d = (*s)[i];
            int64_t& o = out[lead + i];
            if (d == o || d == 1) continue;
            if (o == 1)
                o = d;
            else
                ok = false;
        }
    }
    if (!ok) {
        std::string list;
        for (const shape_t* s : shapes) list += (list.empty() ? "" : " ") + shape_str(*s);
        ISTHMUS_THROW(value_error, what, ": operands could not be broadcast together with shapes ",
                      list);
    }
    return out;
}

void check_inplace_cast(dtype result, dtype target, std::string_view what) {
    ISTHMUS_CHECK(can_cast_same_kind(result, target), type_error, what, ": cannot store the ",
                  result, " result in place into a ", target,
                  " tensor (NumPy's same_kind casting rule)");
}

tensor new_output(const shape_t& shape, dtype dt, resource_id resource,
                  std::initializer_list<const tensor*> layout_from) {
    for (const tensor* t : layout_from) {
        if (!t || !same_shape(t->shape(), shape)) continue;
        // Note [result layout]
        // ~~~~~~~~~~~~~~~~~~~~
        // The first full-shape input decides. C order is the cheap common case; a permuted dense
        // input (a.t() + 1) gets a result in its own order, as NumPy's ufuncs do, instead of a
        // C-order result that the kernel would fill by striding across the input (10x slower on
        // large transposes).
        if (t->is_contiguous() || !t->is_dense()) break;
        std::vector<size_t> order(shape.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
            return std::abs(t->strides()[x]) > std::abs(t->strides()[y]);
        });
        shape_t permuted(shape.size()), inverse(shape.size());
        for (size_t i = 0; i < order.size(); ++i) {
            permuted[i] = shape[order[i]];
            inverse[order[i]] = static_cast<int64_t>(i);
        }
        return tensor::empty(permuted, dt, resource).permute(inverse);
    }
    return tensor::empty(shape, dt, resource);
}

shape_t broadcast_strides(const tensor& t, const shape_t& shape) {
    if (same_shape(t.shape(), shape)) return t.strides();
    shape_t st(shape.size(), 0);
    const size_t lead = shape.size() - t.shape().size();
    for (size_t i = 0; i < t.shape().size(); ++i)
        st[lead + i] = t.shape()[i] == shape[lead + i] ? t.strides()[i] : 0;
    return st;
}

void check_defined(const tensor& t, std::string_view what, std::string_view which) {
    ISTHMUS_CHECK(t.defined(), value_error, what, ": the ", which,
                  " operand is an undefined tensor");
}

void check_writable(const tensor& t, std::string_view what) {
    if (!t.is_writable())
        t.check_writable(std::string(what).c_str()); // Note [read-only broadcast views]
}

namespace {
// The byte range [lo, hi) a view touches inside its storage.
std::pair<int64_t, int64_t> byte_extent(const tensor& t) {
    const auto isz = static_cast<int64_t>(t.itemsize());
    int64_t lo = t.offset() * isz, hi = lo;
    for (size_t i = 0; i < t.shape().size(); ++i) {
        const int64_t span = (t.shape()[i] - 1) * t.strides()[i] * isz;
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    return {lo, hi + isz};
}
} // namespace

bool overlaps_differently(const tensor& a, const tensor& b) {
    if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return false;
    auto [alo, ahi] = byte_extent(a);
    auto [blo, bhi] = byte_extent(b);
    if (ahi <= blo || bhi <= alo) return false;
    // Same elements in the same order: an elementwise op reads each element before writing it.
    if (a.dtype() != b.dtype() || a.offset() != b.offset()) return true;
    const shape_t bs = broadcast_strides(b, a.shape());
    for (size_t i = 0; i < a.shape().size(); ++i)
        if (a.shape()[i] > 1 && a.strides()[i] != bs[i]) return true;
    return false;
}

} // namespace isthmus::ops
