// The plugin author layer's tape: what active numbers record for the backward pass derived from
// generic code (Note [active numbers] in isthmus/plugin/active.hpp), and its sweep.
#pragma once

#include "isthmus/plugin/core.hpp"

#include <atomic>

namespace isthmus::plugin {

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
    if (!shared)
        *at += g;
    else
#if defined(__CUDA_ARCH__)
        atomicAdd(at, g);
#else
        std::atomic_ref<E>(*at).fetch_add(g, std::memory_order_relaxed);
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
            auto pass = [&](tape_ref r, E share) {
                if (r == prev)
                    carry += share;
                else
                    add_gradient(a, r, share);
            };
            pass(n.a, g * n.da);
            pass(n.b, g * n.db);
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

} // namespace detail

} // namespace isthmus::plugin
