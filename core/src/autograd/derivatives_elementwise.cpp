// Derivatives of the elementwise ops: the op table's formulas, where, clamp and casts.
#include "autograd/node_impl.hpp"
#include "autograd/recorded_ops.hpp"

#include "isthmus/error.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/op_table.hpp"

#include <new>
#include <span>
#include <string_view>
#include <vector>

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

/// The values a formula reads, in saves_mask's bits: the one-letter names x/a, b and y standing
/// alone (not inside a longer name such as `abs` or `logical_and`).
constexpr unsigned uses_mask(std::string_view f) {
    auto is_name = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    };
    unsigned m = 0;
    for (size_t i = 0; i < f.size(); ++i) {
        const bool alone =
            (i == 0 || !is_name(f[i - 1])) && (i + 1 == f.size() || !is_name(f[i + 1]));
        if (alone) m |= saves_mask(f.substr(i, 1));
    }
    return m;
}
static_assert(uses_mask("mul(g, b)") == 2 && uses_mask("mul(y, log(a))") == 5 &&
              uses_mask("where(logical_and(eq(a, 0.0), ge(b, 0.0)), 0.0, g)") == 3 &&
              uses_mask("abs(g)") == 0);

// What recording needs of each row (See Note [recording cost]): what the row saves, whether it
// has a formula, and what each input's formula reads, so only the values the needed gradients
// read are saved.
struct unary_row {
    unsigned saves;
    formula_kind kind;
    unsigned uses;
};
struct binary_row {
    unsigned saves;
    formula_kind kind;
    unsigned uses_a, uses_b;
};
#define ISTHMUS_UNARY_ROW(name, saves, formula)                                                    \
    unary_row{saves_mask(#saves), kind_of(#formula), uses_mask(#formula)},
constexpr unary_row unary_info[] = {ISTHMUS_UNARY_DERIVATIVES(ISTHMUS_UNARY_ROW)};
#undef ISTHMUS_UNARY_ROW
#define ISTHMUS_BINARY_ROW(name, saves, fa, fb)                                                    \
    binary_row{saves_mask(#saves), kind_of(#fa), uses_mask(#fa), uses_mask(#fb)},
constexpr binary_row binary_info[] = {ISTHMUS_BINARY_DERIVATIVES(ISTHMUS_BINARY_ROW)};
#undef ISTHMUS_BINARY_ROW

/// True when every formula reads only values its row's `saves` column keeps.
constexpr bool formulas_read_what_rows_save() {
    for (const binary_row& r : binary_info)
        if (((r.uses_a | r.uses_b) & ~r.saves) != 0) return false;
    for (const unary_row& r : unary_info)
        if ((r.uses & ~r.saves) != 0) return false;
    return true;
}
static_assert(formulas_read_what_rows_save(),
              "a derivative formula reads a value its row's saves column does not keep");

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

// Note [recording cost]
// ~~~~~~~~~~~~~~~~~~~~~
// Recording runs on every op of a training step, so a node is made with few heap blocks: the op
// table's rows record an elementwise_node (the formula found by op, the saved values inline, no
// std::function, name string or vector of saved values); a node's edges and input infos keep two
// inputs inline (small_vector), an input's shape four dimensions; and a row saves only what the
// formulas of the inputs that need a gradient read (uses_mask), so `a * b` with only `a` requiring
// grad keeps `b` alone. The grad-mode flag, read several times per recorded op, is a thread_local
// of a shared library: the core compiles with TLS descriptors (core/CMakeLists.txt), so reading it
// is no __tls_get_addr call. What is left per node: the node, the result's autograd state and one
// handle per saved tensor (its shape and strides).

/// A recorded row of the op table (See Note [recording cost]): saved values x/a, b and y.
class elementwise_node final : public node {
public:
    elementwise_node(unary_op op, const tensor& x, const tensor* y)
        : unary_(true), op_(static_cast<uint8_t>(op)) {
        keep(x, y, nullptr, unary_info[op_].uses);
    }
    elementwise_node(binary_op op, const tensor& a, const tensor& b, const tensor& y, bool a_in,
                     bool b_in)
        : unary_(false), op_(static_cast<uint8_t>(op)), a_in_(a_in), b_in_(b_in),
          need_a_(a_in && requires_grad_of(a)), need_b_(b_in && requires_grad_of(b)) {
        const binary_row& row = binary_info[op_];
        keep(a, &y, &b, (need_a_ ? row.uses_a : 0u) | (need_b_ ? row.uses_b : 0u));
    }

    ~elementwise_node() override { drop(); }
    elementwise_node(const elementwise_node&) = delete;
    elementwise_node& operator=(const elementwise_node&) = delete;

    std::string name() const override {
        return std::string(unary_ ? isthmus::name(static_cast<unary_op>(op_))
                                  : isthmus::name(static_cast<binary_op>(op_)));
    }

    tensor_list apply(const tensor_list& grad_outputs) override {
        const std::string op = name();
        ISTHMUS_CHECK(!released_, runtime_error,
                      "trying to run backward through the graph a second time (the values ", op,
                      " saved for it were freed by the first backward); pass retain_graph=True to "
                      "the first backward or autograd.grad to keep them");
        const auto self = shared_from_this();
        auto unpack = [&](size_t i) {
            return kept_ & (1u << i) ? slot(i).unpack(self, op, i) : tensor();
        };
        const tensor a = unpack(0), b = unpack(1), y = unpack(2);
        const tensor& g = grad_outputs[0];
        if (unary_) return {unary_formula(static_cast<unary_op>(op_), g, a, y)};
        const auto bop = static_cast<binary_op>(op_);
        tensor_list r;
        if (a_in_) r.push_back(need_a_ ? binary_formula(bop, 0, g, a, b, y) : tensor());
        if (b_in_) r.push_back(need_b_ ? binary_formula(bop, 1, g, a, b, y) : tensor());
        return r;
    }

    void release_saved() override {
        drop();
        released_ = true;
    }

private:
    // Saves x/a, y and b as `mask` (saves_mask's bits) asks.
    void keep(const tensor& a, const tensor* y, const tensor* b, unsigned mask) {
        if (mask & 1) save(0, a, false);
        if ((mask & 2) && b) save(1, *b, false);
        if ((mask & 4) && y) save(2, *y, true);
    }
    void save(size_t i, const tensor& t, bool is_output) {
        ::new (static_cast<void*>(slots_[i])) saved_slot(t, is_output);
        kept_ |= static_cast<uint8_t>(1u << i);
    }
    saved_slot& slot(size_t i) noexcept {
        return *std::launder(reinterpret_cast<saved_slot*>(slots_[i]));
    }
    void drop() noexcept {
        for (size_t i = 0; i < 3; ++i)
            if (kept_ & (1u << i)) slot(i).~saved_slot();
        kept_ = 0;
    }

    bool unary_;
    uint8_t op_;
    bool a_in_ = false, b_in_ = false, need_a_ = false, need_b_ = false; // binary rows only
    bool released_ = false;
    // Only the kept values are constructed, in raw storage (bit i of kept_): a node does not
    // initialise three tensor handles it does not use.
    uint8_t kept_ = 0;
    alignas(saved_slot) unsigned char slots_[3][sizeof(saved_slot)];
};

/// Records a binary op; `a_in` / `b_in` say which operands are tensors the caller gave (a scalar
/// operand is a 0-d constant here).
void record_binary(binary_op op, const tensor& a, const tensor& b, bool a_in, bool b_in,
                   const tensor& y) {
    const auto i = static_cast<size_t>(op);
    const tensor* both[] = {&a, &b};
    const std::span<const tensor* const> inputs =
        a_in && b_in ? std::span<const tensor* const>(both)
                     : std::span<const tensor* const>(a_in ? both : both + 1, 1);
    if (binary_info[i].kind == formula_kind::none) {
        record_not_differentiable(name(op),
                                  std::vector<const tensor*>(inputs.begin(), inputs.end()), y);
        return;
    }
    if (!begin_record(y)) return;
    attach_node(std::make_shared<elementwise_node>(op, a, b, y, a_in, b_in), inputs, y);
}

/// A scalar operand as a 0-d tensor of the result's dtype, where the result is.
tensor constant_like(const scalar& s, const tensor& y) {
    return full({}, s, is_floating(y.dtype()) ? y.dtype() : dtype::float64, y.location());
}

} // namespace

tensor unary_recorded(unary_op op, const tensor& a) {
    tensor y = [&] {
        no_grad_guard off;
        return unary(op, a);
    }();
    const auto i = static_cast<size_t>(op);
    if (unary_info[i].kind == formula_kind::none) {
        record_not_differentiable(name(op), {&a}, y);
        return y;
    }
    if (!begin_record(y)) return y;
    const tensor* inputs[] = {&a};
    attach_node(std::make_shared<elementwise_node>(op, a, &y), inputs, y);
    return y;
}

tensor binary_recorded(binary_op op, const tensor& a, const tensor& b) {
    tensor y = [&] {
        no_grad_guard off;
        return binary(op, a, b);
    }();
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
