// The plugin author layer's active numbers: the scalar type a generic function is instantiated
// with when the library derives its backward pass (reverse mode: a tape per call or position).
#pragma once

#include "isthmus/plugin/core.hpp"

#include <atomic>

namespace isthmus::plugin {

// Note [active numbers]
// ~~~~~~~~~~~~~~~~~~~~~
// A generic function (a template over its element type T, registered with generic<...>) is also
// instantiated with T = active<E>: every arithmetic operation on active numbers computes the value
// as E would and records what its derivative needs on the tape the numbers carry (one per derived
// function call, one per kernel position): the operands and the partial derivatives with respect
// to them. The derived backward (Note [derived backward] in isthmus/plugin/derive.hpp) makes each
// element read from a differentiable input a leaf, runs the function once, hands the result's
// elements the gradient it is given, and sweeps the tape from the end: each node passes its
// adjoint times its partials to its operands, so the leaves' gradient elements end with the
// vector-Jacobian product. An active number that depends on no leaf (a literal, a constant)
// carries no tape and records nothing; an operation on constants is a constant too. The path
// recorded is the one the forward took: branches and loops on values (compared as E) are allowed,
// and where a branch switches the derivative is that of the side taken (as torch's is). Mixing
// active<E> with plain numbers converts them to E; conversion out of an active number is explicit
// (value_of), so no operation drops a derivative silently: std::floor(x) of an active x does not
// compile, floor(x) (found by argument-dependent lookup, derivative 0) or std::floor(value_of(x))
// do.

// Note [leaves are not nodes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A value read from a differentiable input (a leaf) records nothing: it carries the address of
// its element of the input's gradient. An operation on two active operands records a node whose
// operands are earlier nodes or such addresses; the sweep adds a leaf's share straight into its
// gradient element (atomically in a kernel), and a result or written output that is a leaf (a
// copy, a gather: the mapping layer's y = a[x]) passes its gradient straight into it. Reads used
// only through value_of, or not at all, cost nothing; a 3x3 blur's position records its eight sums
// and nothing else.

// Note [one-operand chains]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// An operation with one active operand (a product with a constant, a sum with one, a negation,
// sin(x), exp(x), ...) records no node: its result keeps the operand's node or leaf and multiplies
// the operand's scale (d result / d that node or leaf) by the operation's partial. Only an
// operation of two active operands makes a node, whose partials are taken times the operands'
// scales; a result or an output written takes its gradient times its scale. So `s += w * x(i)` over
// a stencil's nine reads, or a chain of math functions of one input, records a node per sum, not
// per operation: a 3x3 blur's position records 8 nodes where one per operation and per read
// (See Note [leaves are not nodes]) would be 27, and the sweep, which is bound by the latency of
// its dependent adds, shortens as much.

// Note [the tape's operations inline]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each operation on active numbers is a few loads and stores on the tape, and a derived kernel
// runs them at every position. GCC's flatten of the fast loop (Note [the fast loop is hot] in
// isthmus/plugin/kernel_cpu.hpp) left node(), the views' read() and sweep() out of line (its
// early inliner judged them cold or too big, and flatten did not revisit them), so a 3x3 blur's
// derived kernel made about twenty calls per position, each passing its operands through memory:
// 4.8-5.2x the hand-written backward kernel (2026-12-03, 1024x1024 float32). The operations that
// record, read, write and sweep are forced inline, under GCC, Clang and nvcc's host compiler.
#define ISTHMUS_PLUGIN_TAPE_INLINE [[gnu::always_inline]] inline

// Note [the sweep carries the previous node's adjoint]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Most nodes are an operand of the very next one: a running sum (`s += w * x(..)`), a product
// folded into a sum, a chain of two-operand operations. Swept through the adjoint array, each such
// step stored node i-1's adjoint and loaded it back at the next step, so the sweep ran at the
// latency of a store-to-load round trip per node. The sweep keeps the share node i passes to node
// i-1 in a register instead and adds it to what the array holds for node i-1 (the shares of
// later nodes) when it gets there: the same sums, in the same order save that a node's two
// shares to its predecessor (x * x) are added together first. A 3x3 blur kernel's derived
// backward went from 2.3x to 2.0-2.1x the hand-written one (2026-12-03, bench/derived_backward.py).

template <typename E>
class active;

namespace detail {

/// A vector of trivially copyable T that keeps its first K elements in itself (no allocation
/// for small tapes: a kernel position's) and moves to the heap beyond; clear() keeps the heap
/// block. Not copyable or movable (it points into itself). On the GPU it holds K elements and
/// no more (See Note [derived backward on the GPU]).
template <typename T, size_t K>
class small_vec {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    ISTHMUS_HD small_vec() {}
    small_vec(const small_vec&) = delete;
    small_vec& operator=(const small_vec&) = delete;
    ISTHMUS_HD ~small_vec() { free_heap(); }

    ISTHMUS_HD size_t size() const { return size_; }
    ISTHMUS_HD size_t capacity() const { return cap_; }
    ISTHMUS_HD T* begin() { return data_; }
    ISTHMUS_HD T* end() { return data_ + size_; }
    ISTHMUS_HD const T* begin() const { return data_; }
    ISTHMUS_HD const T* end() const { return data_ + size_; }
    ISTHMUS_HD T& operator[](size_t i) { return data_[i]; }
    ISTHMUS_HD const T& operator[](size_t i) const { return data_[i]; }
    ISTHMUS_HD void clear() { size_ = 0; }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void push_back(const T& v) {
        if (ISTHMUS_UNLIKELY(size_ == cap_)) grow_to(size_ + 1);
        data_[size_++] = v;
    }
    ISTHMUS_HD bool full() const { return size_ == cap_; }
    /// Appends v where the vector is not full().
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void push_unchecked(const T& v) { data_[size_++] = v; }
    ISTHMUS_HD void erase(size_t i) {
        for (size_t j = i; j + 1 < size_; ++j) data_[j] = data_[j + 1];
        --size_;
    }
    /// n copies of v.
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void assign(size_t n, const T& v) {
        if (n > cap_) grow_to(n);
        for (size_t i = 0; i < n; ++i) data_[i] = v;
        size_ = n;
    }
    /// Room for at least n elements: on the CPU, at least twice the capacity; on the GPU, where
    /// it cannot grow, the thread stops and the launch reports the n it needed (See Note
    /// [derived backward on the GPU]).
    ISTHMUS_HD void grow_to(size_t n) {
        if (n <= cap_) return;
#if defined(__CUDA_ARCH__)
        const int64_t want = static_cast<int64_t>(n), have = static_cast<int64_t>(cap_);
        record_device_failure(k_device_tape_full, 0, &want, &have, 1, -1);
        asm volatile("exit;");
#else
        reserve(n > 2 * cap_ ? n : 2 * cap_);
#endif
    }
    /// Room for exactly n elements (CPU only).
    void reserve(size_t n) {
        if (n <= cap_) return;
        T* h = new T[n];
        std::memcpy(static_cast<void*>(h), data_, size_ * sizeof(T));
        free_heap();
        heap_ = h;
        data_ = h;
        cap_ = n;
    }
    /// Back to the inline elements, freeing the heap block (nothing kept).
    ISTHMUS_HD void release() {
        free_heap();
        data_ = reinterpret_cast<T*>(inline_);
        cap_ = K;
        size_ = 0;
    }

private:
    ISTHMUS_HD void free_heap() {
#if !defined(__CUDA_ARCH__)
        delete[] heap_;
#endif
        heap_ = nullptr;
    }
    alignas(T) unsigned char inline_[K * sizeof(T)];
    T* data_ = reinterpret_cast<T*>(inline_);
    size_t size_ = 0, cap_ = K;
    T* heap_ = nullptr;
};

/// Adds g to *at: atomically when `shared` (positions of a kernel on several threads may add to
/// the same element).
template <typename E>
ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void add_to(E* at, E g, bool shared) {
    if (g == E(0)) return;
#if defined(__CUDA_ARCH__)
    if (shared)
        atomicAdd(at, g);
    else
        *at += g;
#else
    if (shared)
        std::atomic_ref<E>(*at).fetch_add(g, std::memory_order_relaxed);
    else
        *at += g;
#endif
}

// Note [tape references]
// ~~~~~~~~~~~~~~~~~~~~~~
// What an active number's derivative goes to, and what a node's operand is, is one word: 0 for
// nothing (a constant), 2i + 1 for node i of the tape, or the address of a leaf's gradient element
// (See Note [leaves are not nodes]), which is even: gradient elements are E-aligned (the host
// shares no unaligned array as a writable view, and the gradients a derived function allocates
// are its own tensors). A slot and a pointer side by side made an active float 32 bytes and a
// node 32; as one word they are 24 each (double: 32 and 32, from 40), which a function's tape and
// its tensors of active numbers write and read once per element, and a kernel position keeps in
// fewer registers.
using tape_ref = uintptr_t;
/// The reference to node `slot`.
ISTHMUS_HD constexpr tape_ref node_ref(int32_t slot) {
    return (static_cast<tape_ref>(static_cast<uint32_t>(slot)) << 1) | 1;
}
/// Whether `r` is a node (else a leaf's gradient element, or nothing when 0).
ISTHMUS_HD constexpr bool is_node(tape_ref r) {
    return (r & 1) != 0;
}
ISTHMUS_HD constexpr size_t slot_of(tape_ref r) {
    return static_cast<size_t>(r >> 1);
}
template <typename E>
ISTHMUS_HD E* target_of(tape_ref r) {
    return reinterpret_cast<E*>(r);
}

/// The operations recorded for active<E> (See Note [leaves are not nodes]): node i has operands
/// a, b (See Note [tape references]; never 0: only an operation of two recorded operands makes a
/// node, Note [one-operand chains]) with partials da, db. A kernel's output element written is
/// recorded with the gradient of that element (Note [derived kernels] in
/// isthmus/plugin/active_view.hpp). The first few hundred nodes live in the tape itself, so a
/// kernel position's tape, on the stack, allocates nothing.
template <typename E>
struct tape {
    struct node {
        tape_ref a, b;
        E da, db;
    };
    struct write {
        tape_ref ref;    // what the written value's derivative goes to
        E scale;         // the written value's scale (Note [one-operand chains])
        const E* at;     // the output element's gradient
        const void* key; // the output element (its gradient may be a broadcast)
    };
#if defined(__CUDA_ARCH__)
    // a GPU thread's tape: See Note [derived backward on the GPU]
    static constexpr size_t inline_nodes = 64, inline_writes = 8;
#else
    static constexpr size_t inline_nodes = 256, inline_writes = 16;
#endif
    using adjoints = small_vec<E, inline_nodes>;
    small_vec<node, inline_nodes> nodes;
    small_vec<write, inline_writes> writes;
    adjoints adj; // the adjoints, one per node, during a sweep
    /// Whether leaves' gradients are added atomically (kernel positions on several threads may
    /// read the same element).
    bool shared = false;

    ISTHMUS_HD void clear() {
        nodes.clear();
        writes.clear();
    }
    /// Frees what grew onto the heap.
    void release() {
        nodes.release();
        writes.release();
        adj.release();
    }
    /// adj sized to the nodes, all 0.
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD adjoints& zero_adjoints() {
        adj.assign(nodes.size(), E(0));
        return adj;
    }
    /// Adds g (a gradient already times the value's scale) to the adjoint of the node `r`
    /// refers to, or to the leaf's gradient element (See Note [tape references]): how a result
    /// or a written output takes its gradient.
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void add_gradient(adjoints& a, tape_ref r, E g) const {
        if (is_node(r))
            a[slot_of(r)] += g;
        else if (r != 0)
            add_to(target_of<E>(r), g);
    }
    /// Adds g to a leaf's gradient element (atomically when shared).
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void add_to(E* at, E g) const {
        detail::add_to(at, g, shared);
    }

    /// Records a node of operands a, b (neither 0) and partials da, db; its reference.
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD tape_ref push(tape_ref a, E da, tape_ref b, E db) {
        if (ISTHMUS_UNLIKELY(nodes.full())) grow();
        nodes.push_unchecked({a, b, da, db});
        return node_ref(static_cast<int32_t>(nodes.size() - 1));
    }
    /// Room for more nodes, up to 2^31 - 1 of them (a node's slot is an int32_t).
    [[gnu::cold, gnu::noinline]] ISTHMUS_HD void grow() {
#if defined(__CUDA_ARCH__)
        nodes.grow_to(nodes.size() + 1); // a GPU thread's tape does not grow: the thread stops
#else
        constexpr size_t most = static_cast<size_t>(INT32_MAX);
        if (nodes.size() >= most)
            throw value_error("isthmus::plugin::active: the derivative's tape is full (2^31 "
                              "operations in one call)");
        nodes.reserve(std::min(2 * nodes.capacity(), most));
#endif
    }
    /// Adjoints of every node, given those of the outputs in `a` (sized to the tape); the
    /// leaves' shares go to their gradient elements.
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void sweep(adjoints& a) const {
        // See Note [the sweep carries the previous node's adjoint]
        E carry = E(0);
        for (size_t i = nodes.size(); i-- > 0;) {
            const E g = a[i] + carry;
            carry = E(0);
            const node& n = nodes[i];
            // node i - 1's reference (node 0 has none: 0 is no operand's)
            const tape_ref prev = i > 0 ? node_ref(static_cast<int32_t>(i - 1)) : 0;
            if (n.a == prev)
                carry += g * n.da;
            else if (is_node(n.a))
                a[slot_of(n.a)] += g * n.da;
            else
                add_to(target_of<E>(n.a), g * n.da);
            if (n.b == prev)
                carry += g * n.db;
            else if (is_node(n.b))
                a[slot_of(n.b)] += g * n.db;
            else
                add_to(target_of<E>(n.b), g * n.db);
        }
    }
};

/// The running thread's tape for one derived function call, from leasing to
/// destruction: the thread's reusable tape (cleared, keeping its capacity, so that repeated calls
/// allocate nothing; a tape that grew past 64 MB is released), or a fresh one when that one
/// is in use further up the stack.
template <typename E>
class tape_lease {
public:
    tape_lease() {
        spare& s = spare_of_thread();
        if (!s.busy) {
            s.busy = true;
            t_ = &s.t;
        } else {
            own_ = std::make_unique<tape<E>>();
            t_ = own_.get();
        }
        t_->clear();
    }
    ~tape_lease() {
        if (!own_) {
            spare& s = spare_of_thread();
            if (s.t.nodes.capacity() * sizeof(typename tape<E>::node) > (size_t{64} << 20))
                s.t.release();
            s.busy = false;
        }
    }
    tape_lease(const tape_lease&) = delete;
    tape_lease& operator=(const tape_lease&) = delete;
    tape<E>& operator*() const { return *t_; }
    tape<E>* operator->() const { return t_; }

private:
    struct spare {
        tape<E> t;
        bool busy = false;
    };
    static spare& spare_of_thread() {
        static thread_local spare s;
        return s;
    }
    tape<E>* t_ = nullptr;
    std::unique_ptr<tape<E>> own_;
};

template <typename T>
struct is_active : std::false_type {};
template <typename E>
struct is_active<active<E>> : std::true_type {};

} // namespace detail

/// A number that records the operations on it, for the backward pass the library derives from a
/// generic function (See Note [active numbers]). Arithmetic, comparisons and the math functions
/// below work as on E; value_of(x) is the plain value.
template <typename E>
class active {
    static_assert(std::is_floating_point_v<E>, "active numbers are float or double");

public:
    using value_type = E;

    active() = default;
    /// A constant (depends on no input).
    template <typename S>
    requires std::is_arithmetic_v<S> ISTHMUS_HD active(S v) : v_(static_cast<E>(v)) {}

    /// The plain value.
    ISTHMUS_HD E value() const { return v_; }
    /// What its derivative goes to: a node of its tape or a leaf's gradient element (See Note
    /// [tape references]; 0: a constant).
    ISTHMUS_HD detail::tape_ref ref() const { return ref_; }
    /// The tape it is recorded on (null: a constant).
    ISTHMUS_HD detail::tape<E>* recorded_on() const { return tape_; }

    /// d value / d (its node or leaf): the chain of one-operand operations since then.
    ISTHMUS_HD E scale() const { return scale_; }

    /// A leaf of tape `t` with value v whose adjoint goes to `*target` (a constant when null);
    /// used by the derived backward. See Note [leaves are not nodes].
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD static active leaf(detail::tape<E>& t, E v, E* target) {
        active r(v);
        if (target) {
            r.tape_ = &t;
            r.ref_ = reinterpret_cast<detail::tape_ref>(target);
        }
        return r;
    }
    /// The result of an operation with value v and operands x (partial dx) and y (partial dy).
    /// See Note [one-operand chains].
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD static active
    node(E v, const active& x, E dx, const active& y = active(), E dy = E(0)) {
        active r(v);
        if (x.tape_ && y.tape_) {
            r.tape_ = x.tape_;
            r.ref_ = x.tape_->push(x.ref_, dx * x.scale_, y.ref_, dy * y.scale_);
        } else if (x.tape_ || y.tape_) {
            const active& a = x.tape_ ? x : y;
            r.tape_ = a.tape_;
            r.ref_ = a.ref_;
            r.scale_ = (x.tape_ ? dx : dy) * a.scale_;
        }
        return r;
    }
    /// Adds g times its scale to its node's adjoint in `adj`, or to its leaf's gradient element:
    /// how a result or a written output takes its gradient.
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD void
    take_gradient(typename detail::tape<E>::adjoints& adj, E g) const {
        if (tape_) tape_->add_gradient(adj, ref_, scale_ * g);
    }

    ISTHMUS_HD active& operator+=(const active& o) { return *this = *this + o; }
    ISTHMUS_HD active& operator-=(const active& o) { return *this = *this - o; }
    ISTHMUS_HD active& operator*=(const active& o) { return *this = *this * o; }
    ISTHMUS_HD active& operator/=(const active& o) { return *this = *this / o; }

    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator+(const active& x) { return x; }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator-(const active& x) {
        return node(-x.v_, x, E(-1));
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator+(const active& x,
                                                                  const active& y) {
        return node(x.v_ + y.v_, x, E(1), y, E(1));
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator-(const active& x,
                                                                  const active& y) {
        return node(x.v_ - y.v_, x, E(1), y, E(-1));
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator*(const active& x,
                                                                  const active& y) {
        return node(x.v_ * y.v_, x, y.v_, y, x.v_);
    }
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD friend active operator/(const active& x,
                                                                  const active& y) {
        const E q = x.v_ / y.v_;
        return node(q, x, E(1) / y.v_, y, -q / y.v_);
    }
    ISTHMUS_HD friend bool operator==(const active& x, const active& y) { return x.v_ == y.v_; }
    ISTHMUS_HD friend auto operator<=>(const active& x, const active& y) { return x.v_ <=> y.v_; }

private:
    E v_ = E(0);
    E scale_ = E(1);
    detail::tape_ref ref_ = 0;
    detail::tape<E>* tape_ = nullptr;
};

// Mixed operations of a derivative number type NUM (active here, dual in dual.hpp) and a plain
// number: the plain number becomes a constant NUM<E>.
#define ISTHMUS_NUMBER_MIXED(NUM, OP)                                                              \
    template <typename E, typename S>                                                              \
    requires std::is_arithmetic_v<S> ISTHMUS_HD auto operator OP(const NUM<E>& x, S y) {           \
        return x OP NUM<E>(y);                                                                     \
    }                                                                                              \
    template <typename E, typename S>                                                              \
    requires std::is_arithmetic_v<S> ISTHMUS_HD auto operator OP(S x, const NUM<E>& y) {           \
        return NUM<E>(x) OP y;                                                                     \
    }
#define ISTHMUS_NUMBER_MIXED_ALL(NUM)                                                              \
    ISTHMUS_NUMBER_MIXED(NUM, +)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, -)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, *)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, /)                                                                   \
    ISTHMUS_NUMBER_MIXED(NUM, ==)                                                                  \
    ISTHMUS_NUMBER_MIXED(NUM, <=>)
ISTHMUS_NUMBER_MIXED_ALL(active)

/// The plain value of an active number; any other value as it is. For code that must not be
/// differentiated through, e.g. an index: `a(static_cast<int64_t>(std::floor(value_of(x))))`.
template <typename E>
ISTHMUS_HD E value_of(const active<E>& x) {
    return x.value();
}
template <typename T>
requires(!detail::is_active<T>::value) ISTHMUS_HD const T& value_of(const T& x) {
    return x;
}

// The math functions of the derivative numbers (active<E> here, dual<E> in dual.hpp), one rule
// each: X(name, its value f at v, its derivative at v (which may use f)). Used by both types,
// so their derivatives cannot disagree.
#define ISTHMUS_PLUGIN_UNARY_RULES(X)                                                              \
    X(sin, sin(v), cos(v))                                                                         \
    X(cos, cos(v), -std::sin(v))                                                                   \
    X(tan, tan(v), E(1) + f * f)                                                                   \
    X(asin, asin(v), E(1) / std::sqrt(E(1) - v * v))                                               \
    X(acos, acos(v), E(-1) / std::sqrt(E(1) - v * v))                                              \
    X(atan, atan(v), E(1) / (E(1) + v * v))                                                        \
    X(sinh, sinh(v), std::cosh(v))                                                                 \
    X(cosh, cosh(v), std::sinh(v))                                                                 \
    X(tanh, tanh(v), E(1) - f * f)                                                                 \
    X(exp, exp(v), f)                                                                              \
    X(exp2, exp2(v), f* E(0.693147180559945309417232121458176568L))                                \
    X(expm1, expm1(v), f + E(1))                                                                   \
    X(log, log(v), E(1) / v)                                                                       \
    X(log2, log2(v), E(1) / (v * E(0.693147180559945309417232121458176568L)))                      \
    X(log10, log10(v), E(1) / (v * E(2.30258509299404568401799145468436421L)))                     \
    X(log1p, log1p(v), E(1) / (E(1) + v))                                                          \
    X(sqrt, sqrt(v), E(0.5) / f)                                                                   \
    X(cbrt, cbrt(v), E(1) / (E(3) * f * f))                                                        \
    X(erf, erf(v), E(1.12837916709551257389615890312154517L) * std::exp(-v * v))                   \
    X(fabs, fabs(v), v > E(0) ? E(1) : (v < E(0) ? E(-1) : E(0)))                                  \
    X(abs, abs(v), v > E(0) ? E(1) : (v < E(0) ? E(-1) : E(0)))                                    \
    X(floor, floor(v), E(0))                                                                       \
    X(ceil, ceil(v), E(0))                                                                         \
    X(round, round(v), E(0))                                                                       \
    X(trunc, trunc(v), E(0))

// Math on active numbers, found by argument-dependent lookup (`sin(x)`), or as ip::sin(x) for
// active and plain numbers alike; each records its derivative (floor, ceil, round, trunc: 0).
#define ISTHMUS_ACTIVE_UNARY(NAME, VALUE, DERIV)                                                   \
    template <typename E>                                                                          \
    ISTHMUS_PLUGIN_TAPE_INLINE ISTHMUS_HD active<E> NAME(const active<E>& x) {                     \
        using std::NAME;                                                                           \
        const E v = x.value();                                                                     \
        const E f = VALUE;                                                                         \
        return active<E>::node(f, x, DERIV);                                                       \
    }                                                                                              \
    template <typename T>                                                                          \
    requires std::is_floating_point_v<T> ISTHMUS_HD T NAME(T x) {                                  \
        return std::NAME(x);                                                                       \
    }
ISTHMUS_PLUGIN_UNARY_RULES(ISTHMUS_ACTIVE_UNARY)
#undef ISTHMUS_ACTIVE_UNARY

namespace detail {
/// A two-operand function's value and partial derivatives at (x, y).
template <typename E>
struct partials {
    E f, dx, dy;
};
/// x^y; d/dx = y x^(y-1), d/dy = x^y log x (0 where x is not positive).
template <typename E>
ISTHMUS_HD partials<E> pow_rule(E x, E y) {
    const E f = std::pow(x, y);
    return {f, y == E(0) ? E(0) : y * std::pow(x, y - E(1)), x > E(0) ? f * std::log(x) : E(0)};
}
/// atan2(y, x) with its partials by y (dx) and by x (dy): the angle of (x, y).
template <typename E>
ISTHMUS_HD partials<E> atan2_rule(E y, E x) {
    const E r2 = x * x + y * y;
    return {std::atan2(y, x), r2 == E(0) ? E(0) : x / r2, r2 == E(0) ? E(0) : -y / r2};
}
/// hypot(x, y) = sqrt(x^2 + y^2).
template <typename E>
ISTHMUS_HD partials<E> hypot_rule(E x, E y) {
    const E h = std::hypot(x, y);
    return {h, h == E(0) ? E(0) : x / h, h == E(0) ? E(0) : y / h};
}
} // namespace detail

/// x to the power y (active, plain or mixed); d/dx = y x^(y-1), d/dy = x^y log x (0 where x is 0).
template <typename E>
ISTHMUS_HD active<E> pow(const active<E>& x, const active<E>& y) {
    const auto r = detail::pow_rule(x.value(), y.value());
    return active<E>::node(r.f, x, r.dx, y, r.dy);
}
template <typename E, typename S>
requires std::is_arithmetic_v<S> ISTHMUS_HD active<E> pow(const active<E>& x, S y) {
    return pow(x, active<E>(y));
}
template <typename E, typename S>
requires std::is_arithmetic_v<S> ISTHMUS_HD active<E> pow(S x, const active<E>& y) {
    return pow(active<E>(x), y);
}
/// atan2(y, x): the angle of (x, y).
template <typename E>
ISTHMUS_HD active<E> atan2(const active<E>& y, const active<E>& x) {
    const auto r = detail::atan2_rule(y.value(), x.value());
    return active<E>::node(r.f, y, r.dx, x, r.dy);
}
/// hypot(x, y) = sqrt(x^2 + y^2).
template <typename E>
ISTHMUS_HD active<E> hypot(const active<E>& x, const active<E>& y) {
    const auto r = detail::hypot_rule(x.value(), y.value());
    return active<E>::node(r.f, x, r.dx, y, r.dy);
}
/// The smaller / larger of two numbers: the derivative goes to the one taken (the first on ties).
template <typename E>
ISTHMUS_HD active<E> fmin(const active<E>& x, const active<E>& y) {
    return y.value() < x.value() ? y : x;
}
template <typename E>
ISTHMUS_HD active<E> fmax(const active<E>& x, const active<E>& y) {
    return y.value() > x.value() ? y : x;
}
// The two-argument functions on plain numbers, so that ip::pow(x, y) serves both instantiations.
#define ISTHMUS_PLAIN_BINARY(NAME)                                                                 \
    template <typename T>                                                                          \
    requires std::is_floating_point_v<T> ISTHMUS_HD T NAME(T x, T y) {                             \
        return std::NAME(x, y);                                                                    \
    }
ISTHMUS_PLAIN_BINARY(pow)
ISTHMUS_PLAIN_BINARY(atan2)
ISTHMUS_PLAIN_BINARY(hypot)
ISTHMUS_PLAIN_BINARY(fmin)
ISTHMUS_PLAIN_BINARY(fmax)
#undef ISTHMUS_PLAIN_BINARY

} // namespace isthmus::plugin
