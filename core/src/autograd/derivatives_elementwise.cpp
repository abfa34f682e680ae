// Derivatives of the elementwise ops: the op table's formulas, where, clamp and casts.
#include "autograd/node_impl.hpp"
#include "autograd/recorded_ops.hpp"

#include "isthmus/error.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/op_table.hpp"

#include <string_view>

namespace isthmus::autograd {

namespace {

// Constants of the formulas (Note [derivatives in the op table]).
constexpr double ln2 = 0.693147180559945309417232121458176568;
constexpr double ln10 = 2.302585092994045684017991454684364208;
constexpr double two_over_sqrt_pi = 1.128379167095512573896158903121545172;

// The rows list the ops in enum order, so row i is op i.
#define ISTHMUS_DERIVATIVE_NAME(name, ...) #name,
constexpr std::string_view unary_derivative_rows[] = {
    ISTHMUS_UNARY_DERIVATIVES(ISTHMUS_DERIVATIVE_NAME)};
constexpr std::string_view binary_derivative_rows[] = {
    ISTHMUS_BINARY_DERIVATIVES(ISTHMUS_DERIVATIVE_NAME)};
#undef ISTHMUS_DERIVATIVE_NAME
#define ISTHMUS_OP_NAME(name, ...) #name,
constexpr std::string_view unary_rows[] = {ISTHMUS_UNARY_OPS(ISTHMUS_OP_NAME)
                                               ISTHMUS_UNARY_PART_OPS(ISTHMUS_OP_NAME)};
constexpr std::string_view binary_rows[] = {ISTHMUS_BINARY_OPS(ISTHMUS_OP_NAME)};
#undef ISTHMUS_OP_NAME

template <size_t N, size_t M>
constexpr bool same_rows(const std::string_view (&a)[N], const std::string_view (&b)[M]) {
    if (N != M) return false;
    for (size_t i = 0; i < N; ++i)
        if (a[i] != b[i]) return false;
    return true;
}
static_assert(same_rows(unary_derivative_rows, unary_rows),
              "ISTHMUS_UNARY_DERIVATIVES must list the unary ops in table order");
static_assert(same_rows(binary_derivative_rows, binary_rows),
              "ISTHMUS_BINARY_DERIVATIVES must list the binary ops in table order");

/// What a row's `saves` column keeps: bit 0 x/a, bit 1 b, bit 2 y.
constexpr unsigned saves_mask(std::string_view s) {
    if (s == "none") return 0;
    unsigned m = 0;
    for (char c : s) m |= c == 'x' || c == 'a' ? 1u : c == 'b' ? 2u : c == 'y' ? 4u : 0u;
    return m;
}

/// How a row's formula reads: a formula, `zero` or `none`.
enum class formula_kind : uint8_t { formula, zero, none };
constexpr formula_kind kind_of(std::string_view f) {
    return f == "none"   ? formula_kind::none
           : f == "zero" ? formula_kind::zero
                         : formula_kind::formula;
}

#define ISTHMUS_UNARY_SAVES(name, saves, formula) saves_mask(#saves),
constexpr unsigned unary_saves[] = {ISTHMUS_UNARY_DERIVATIVES(ISTHMUS_UNARY_SAVES)};
#undef ISTHMUS_UNARY_SAVES
#define ISTHMUS_UNARY_KIND(name, saves, formula) kind_of(#formula),
constexpr formula_kind unary_kinds[] = {ISTHMUS_UNARY_DERIVATIVES(ISTHMUS_UNARY_KIND)};
#undef ISTHMUS_UNARY_KIND
#define ISTHMUS_BINARY_SAVES(name, saves, fa, fb) saves_mask(#saves),
constexpr unsigned binary_saves[] = {ISTHMUS_BINARY_DERIVATIVES(ISTHMUS_BINARY_SAVES)};
#undef ISTHMUS_BINARY_SAVES
#define ISTHMUS_BINARY_KIND(name, saves, fa, fb) kind_of(#fa),
constexpr formula_kind binary_kinds[] = {ISTHMUS_BINARY_DERIVATIVES(ISTHMUS_BINARY_KIND)};
#undef ISTHMUS_BINARY_KIND

/// The markers `zero` and `none` as formulas: zeros of the gradient's shape, or a refusal.
struct zero_marker {
    const tensor& g;
    operator tensor() const { return zeros_like(g); } // NOLINT: a formula's value
};
struct none_marker {
    std::string_view op;
    [[noreturn]] operator tensor() const { // NOLINT: a formula's value
        ISTHMUS_THROW(runtime_error, "the derivative of '", op, "' is not implemented");
    }
};

// The formulas of the rows, one case each.
tensor unary_formula(unary_op op, const tensor& g, const tensor& x, const tensor& y) {
    const zero_marker zero{g};
    const none_marker none{name(op)};
    (void)x, (void)y, (void)zero, (void)none;
    switch (op) {
#define ISTHMUS_UNARY_CASE(n, saves, formula)                                                      \
    case unary_op::n:                                                                              \
        return formula;
        ISTHMUS_UNARY_DERIVATIVES(ISTHMUS_UNARY_CASE)
#undef ISTHMUS_UNARY_CASE
    }
    ISTHMUS_THROW(internal_error, "unary_formula: unknown op");
}

tensor binary_formula(binary_op op, int which, const tensor& g, const tensor& a, const tensor& b,
                      const tensor& y) {
    const zero_marker zero{g};
    const none_marker none{name(op)};
    (void)a, (void)b, (void)y, (void)zero, (void)none;
    switch (op) {
#define ISTHMUS_BINARY_CASE(n, saves, fa, fb)                                                      \
    case binary_op::n:                                                                             \
        if (which == 0) return fa;                                                                 \
        return fb;
        ISTHMUS_BINARY_DERIVATIVES(ISTHMUS_BINARY_CASE)
#undef ISTHMUS_BINARY_CASE
    }
    ISTHMUS_THROW(internal_error, "binary_formula: unknown op");
}

/// Records a binary op; `a_in` / `b_in` say which operands are tensors the caller gave (a scalar
/// operand is a 0-d constant here).
void record_binary(binary_op op, const tensor& a, const tensor& b, bool a_in, bool b_in,
                   const tensor& y) {
    const auto i = static_cast<size_t>(op);
    if (binary_kinds[i] == formula_kind::none) {
        if (a_in && b_in)
            record_not_differentiable(name(op), {&a, &b}, y);
        else
            record_not_differentiable(name(op), {a_in ? &a : &b}, y);
        return;
    }
    const unsigned keep = binary_saves[i];
    std::vector<saved_value> saved{{keep & 1 ? a : tensor(), false},
                                   {keep & 2 ? b : tensor(), false},
                                   {keep & 4 ? y : tensor(), true}};
    const bool need_a = a_in && requires_grad_of(a), need_b = b_in && requires_grad_of(b);
    auto fn = [op, a_in, b_in, need_a, need_b](const tensor& g, const tensor_list& s) {
        tensor_list r;
        if (a_in) r.push_back(need_a ? binary_formula(op, 0, g, s[0], s[1], s[2]) : tensor());
        if (b_in) r.push_back(need_b ? binary_formula(op, 1, g, s[0], s[1], s[2]) : tensor());
        return r;
    };
    if (a_in && b_in)
        record(name(op), {&a, &b}, y, std::move(saved), std::move(fn));
    else
        record(name(op), {a_in ? &a : &b}, y, std::move(saved), std::move(fn));
}

/// A scalar operand as a 0-d tensor of the result's dtype, where the result is.
tensor constant_like(const scalar& s, const tensor& y) {
    return full({}, s, is_floating(y.dtype()) ? y.dtype() : dtype::float64, y.location());
}

} // namespace

tensor unary_recorded(unary_op op, const tensor& a) {
    tensor y;
    {
        no_grad_guard off;
        y = unary(op, a);
    }
    const auto i = static_cast<size_t>(op);
    if (unary_kinds[i] == formula_kind::none) {
        record_not_differentiable(name(op), {&a}, y);
        return y;
    }
    const unsigned keep = unary_saves[i];
    record(name(op), {&a}, y, {{keep & 1 ? a : tensor(), false}, {keep & 4 ? y : tensor(), true}},
           [op](const tensor& g, const tensor_list& s) {
               return tensor_list{unary_formula(op, g, s[0], s[1])};
           });
    return y;
}

tensor binary_recorded(binary_op op, const tensor& a, const tensor& b) {
    tensor y;
    {
        no_grad_guard off;
        y = binary(op, a, b);
    }
    record_binary(op, a, b, true, true, y);
    return y;
}

tensor binary_recorded(binary_op op, const tensor& a, const scalar& b) {
    tensor y;
    {
        no_grad_guard off;
        y = binary(op, a, b);
    }
    record_binary(op, a, constant_like(b, y), true, false, y);
    return y;
}

tensor binary_recorded(binary_op op, const scalar& a, const tensor& b) {
    tensor y;
    {
        no_grad_guard off;
        y = binary(op, a, b);
    }
    record_binary(op, constant_like(a, y), b, false, true, y);
    return y;
}

tensor where_recorded(const tensor& cond, const tensor* a, const scalar* as, const tensor* b,
                      const scalar* bs) {
    tensor y;
    {
        no_grad_guard off;
        y = a && b ? where(cond, *a, *b) : a ? where(cond, *a, *bs) : where(cond, *as, *b);
    }
    auto fn = [has_a = a != nullptr, has_b = b != nullptr](const tensor& g, const tensor_list& s) {
        tensor_list r;
        if (has_a) r.push_back(where(s[0], g, 0.0));
        if (has_b) r.push_back(where(s[0], 0.0, g));
        return r;
    };
    if (a && b)
        record("where", {a, b}, y, {{cond, false}}, std::move(fn));
    else
        record("where", {a ? a : b}, y, {{cond, false}}, std::move(fn));
    return y;
}

tensor clamp_recorded(const tensor& t, const scalar& lo, const scalar& hi) {
    tensor y;
    {
        no_grad_guard off;
        y = clamp(t, lo, hi);
    }
    // torch's rule: the gradient passes where lo <= t <= hi (both bounds included).
    record("clamp", {&t}, y, {{t, false}}, [lo, hi](const tensor& g, const tensor_list& s) {
        return tensor_list{where(logical_and(ge(s[0], lo), le(s[0], hi)), g, 0.0)};
    });
    return y;
}

tensor clamp_recorded(const tensor& t, const tensor& lo, const tensor& hi) {
    tensor y;
    {
        no_grad_guard off;
        y = clamp(t, lo, hi);
    }
    // y = minimum(maximum(t, lo), hi): t's gradient where lo <= t <= hi, lo's where t < lo <= hi,
    // hi's where max(t, lo) > hi.
    record("clamp", {&t, &lo, &hi}, y, {{t, false}, {lo, false}, {hi, false}},
           [](const tensor& g, const tensor_list& s) {
               const tensor& x = s[0];
               const tensor& l = s[1];
               const tensor& h = s[2];
               return tensor_list{where(logical_and(ge(x, l), le(x, h)), g, 0.0),
                                  where(logical_and(lt(x, l), le(l, h)), g, 0.0),
                                  where(gt(maximum(x, l), h), g, 0.0)};
           });
    return y;
}

tensor cast_recorded(const tensor& t, dtype dt) {
    tensor y;
    {
        no_grad_guard off;
        y = cast(t, dt);
    }
    // The engine casts the gradient back to t's dtype (gradients keep their input's dtype).
    record("cast", {&t}, y, {}, [](const tensor& g, const tensor_list&) { return tensor_list{g}; });
    return y;
}

tensor copy_recorded(const char* name, const tensor& t, const tensor& out) {
    tensor y = out;
    record(name, {&t}, y, {}, [](const tensor& g, const tensor_list&) { return tensor_list{g}; });
    return y;
}

} // namespace isthmus::autograd
