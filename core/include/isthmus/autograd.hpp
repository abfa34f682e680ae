// Reverse-mode automatic differentiation on tensors: autograd state, nodes, grad mode, backward.
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/small_vector.hpp"
#include "isthmus/tensor.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace isthmus::autograd {

// Note [autograd state]
// ~~~~~~~~~~~~~~~~~~~~~
// A tensor handle carries one pointer of autograd state (tensor::autograd_), null for every tensor
// that never took part in autograd, so the ops' hot path pays one pointer test per operand
// (autograd::needs_record). Copies of a handle share the state (the same tensor as far as autograd
// is concerned); views and op results get their own. The state holds the leaf's requires_grad flag
// and grad, or the node that made the tensor (grad_fn) and which of its outputs it is; a leaf's
// gradient accumulator is found through a weak pointer, so the graph points from results to
// inputs only and a tensor never keeps itself alive through its own node (saved outputs are kept
// without their state, Note [saved tensor versions]).

/// A list of tensors (gradients, saved values), one per input or output.
using tensor_list = std::vector<tensor>;

/// One input of a node: the node its gradient goes to and which of that node's outputs it was;
/// a null `fn` means the input needs no gradient.
struct edge {
    std::shared_ptr<node> fn;
    uint32_t input_nr = 0;
    bool valid() const noexcept { return fn != nullptr; }
};

/// The shape and dtype of an input, so a gradient can be checked and fitted to it.
struct input_info {
    input_info() = default;
    /// The shape and dtype of `t`.
    explicit input_info(const tensor& t)
        : shape(t.shape().begin(), t.shape().end()), dtype(t.dtype()) {}
    small_vector<int64_t, 4> shape; ///< inline up to 4 dimensions (See Note [recording cost])
    isthmus::dtype dtype = isthmus::dtype::float64;
    /// True when `s` is this shape.
    bool is_shape(const shape_t& s) const noexcept {
        return std::equal(shape.begin(), shape.end(), s.begin(), s.end());
    }
};

/// A recorded op: given the gradients of its outputs, returns the gradients of its inputs.
class ISTHMUS_API node : public std::enable_shared_from_this<node> {
public:
    virtual ~node();
    /// The op's name as the user wrote it ("exp", "matmul", "AccumulateGrad").
    virtual std::string name() const = 0;
    /// Gradients of the inputs (one per next edge; undefined where none flows) from those of
    /// the outputs. Throws runtime_error after release_saved() when values were saved.
    virtual tensor_list apply(const tensor_list& grad_outputs) = 0;
    /// Frees what the node saved for backward (Note [saved tensor versions]).
    virtual void release_saved() {}
    /// Where each input's gradient goes (inline for up to two inputs, See Note [recording cost]).
    small_vector<edge, 2> next_edges;
    /// Each input's shape and dtype (gradients are summed to the shape and cast to the dtype).
    small_vector<input_info, 2> inputs;
    /// The number of outputs.
    uint32_t num_outputs = 1;
    /// Order of creation: later nodes run first among ready ones.
    uint64_t sequence_nr = 0;
    /// Outputs that asked for retain_grad(): their state, by output number.
    std::vector<std::pair<uint32_t, std::weak_ptr<tensor_meta>>> retained;
};

/// The autograd state behind tensor::autograd_ (See Note [autograd state]).
struct tensor_meta {
    // User-provided, so make_shared value-initialises it member by member instead of zeroing
    // the whole object first (See Note [recording cost]).
    tensor_meta() noexcept {}
    bool requires_grad = false;      ///< a leaf's flag (non-leaves: grad_fn != null)
    bool retains_grad = false;       ///< a non-leaf keeps its gradient (retain_grad)
    tensor grad;                     ///< the accumulated gradient
    std::shared_ptr<node> grad_fn;   ///< the op that made the tensor, null for leaves
    uint32_t output_nr = 0;          ///< which output of grad_fn
    std::weak_ptr<node> accumulator; ///< a leaf's AccumulateGrad node, while a graph uses it
};

// ---- grad mode ----

/// True while ops record (the default); a per-thread flag.
ISTHMUS_API bool is_grad_enabled() noexcept;
/// Turns recording on or off for this thread.
ISTHMUS_API void set_grad_enabled(bool on) noexcept;

/// Turns recording off for its scope (torch.no_grad()), restoring the previous mode after.
class ISTHMUS_API no_grad_guard {
public:
    no_grad_guard() noexcept : prev_(is_grad_enabled()) { set_grad_enabled(false); }
    ~no_grad_guard() { set_grad_enabled(prev_); }
    no_grad_guard(const no_grad_guard&) = delete;
    no_grad_guard& operator=(const no_grad_guard&) = delete;

private:
    bool prev_;
};

/// Sets recording on or off for its scope (torch.enable_grad() / set_grad_enabled).
class ISTHMUS_API grad_mode_guard {
public:
    explicit grad_mode_guard(bool on = true) noexcept : prev_(is_grad_enabled()) {
        set_grad_enabled(on);
    }
    ~grad_mode_guard() { set_grad_enabled(prev_); }
    grad_mode_guard(const grad_mode_guard&) = delete;
    grad_mode_guard& operator=(const grad_mode_guard&) = delete;

private:
    bool prev_;
};

// ---- running backward ----

/// Accumulates d(sum of outputs[i] * grad_outputs[i]) into the grad of every leaf that requires
/// grad. A missing (undefined) gradient is allowed for 1-element outputs only (it is 1);
/// otherwise runtime_error ("grad can be implicitly created only for scalar outputs"). The graph
/// is freed unless `retain_graph`; `create_graph` records the backward ops so gradients can be
/// differentiated again.
ISTHMUS_API void backward(const tensor_list& outputs, const tensor_list& grad_outputs = {},
                          bool retain_graph = false, bool create_graph = false);
/// The gradients of `outputs` with respect to `inputs` (torch.autograd.grad), without touching
/// any leaf's grad. An input the outputs do not depend on is runtime_error unless
/// `allow_unused` (then its entry is undefined).
ISTHMUS_API tensor_list grad(const tensor_list& outputs, const tensor_list& inputs,
                             const tensor_list& grad_outputs = {}, bool retain_graph = false,
                             bool create_graph = false, bool allow_unused = false);

// ---- recording (for op implementations) ----

/// True when grad mode is on and one of the tensors requires grad.
ISTHMUS_API bool any_requires_grad(std::initializer_list<const tensor*> ts) noexcept;
/// True when an op on these operands must record: one pointer test per operand while none
/// carries autograd state (See Note [autograd state]).
template <typename... T>
inline bool needs_record(const T&... ts) noexcept {
    return (ts.has_autograd() || ...) && any_requires_grad({&ts...});
}

/// Computes the gradients of a recorded op's inputs from its output's gradient `g` and the values
/// it saved (in the order given to record).
using backward_fn = std::function<tensor_list(const tensor& g, const tensor_list& saved)>;

/// A value saved for backward: an input, or the op's output (kept without its autograd state).
struct saved_value {
    tensor value;
    bool is_output = false;
};

/// Records an op whose output `out` was computed from `inputs`: makes `out` require grad with a
/// node named `name` that runs `fn` in backward. Call only when needs_record(inputs...).
ISTHMUS_API void record(std::string_view name, std::initializer_list<const tensor*> inputs,
                        const tensor& out, std::vector<saved_value> saved, backward_fn fn);
/// Makes handle `to` carry the autograd state of `from`, another handle of the same tensor: after
/// an op recorded a result it wrote into an argument (a plugin kernel's output), the caller's own
/// handle of that argument gets the node.
ISTHMUS_API void share_state(const tensor& from, const tensor& to);
/// record() for inputs counted at run time (a plugin function's tensor arguments).
ISTHMUS_API void record(std::string_view name, const std::vector<const tensor*>& inputs,
                        const tensor& out, std::vector<saved_value> saved, backward_fn fn);
/// Records an op that has no derivative: backward through `out` raises runtime_error naming it.
ISTHMUS_API void record_not_differentiable(std::string_view name,
                                           std::initializer_list<const tensor*> inputs,
                                           const tensor& out);
/// record_not_differentiable() for inputs counted at run time.
ISTHMUS_API void record_not_differentiable(std::string_view name,
                                           const std::vector<const tensor*>& inputs,
                                           const tensor& out);
/// check_inplace past its pointer test.
ISTHMUS_API void check_inplace_recorded(const char* what, const tensor& target,
                                        const tensor* other);
/// Refuses an in-place op on `target` while grad mode is on and the target or `other` requires
/// grad (runtime_error naming `what`): in-place ops are not recorded (docs/autograd.md).
inline void check_inplace(const char* what, const tensor& target, const tensor* other = nullptr) {
    if (target.has_autograd() || (other && other->has_autograd())) [[unlikely]]
        check_inplace_recorded(what, target, other);
}

/// `g` summed over the broadcast dimensions so that it has `shape` (NumPy's inverse of
/// broadcasting); `g` itself when the shapes match.
ISTHMUS_API tensor sum_to(const tensor& g, const shape_t& shape);

} // namespace isthmus::autograd
