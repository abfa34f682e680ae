// The node kinds the recording functions make: function nodes, gradient accumulators, refusals.
#pragma once

#include "autograd/meta_access.hpp"

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace isthmus::autograd {

/// True when `t` carries state that requires grad (whatever the grad mode).
bool requires_grad_of(const tensor& t) noexcept;
/// Where a gradient of `t` goes: its grad_fn, its accumulator (leaves), or nowhere.
edge gradient_edge(const tensor& t);
/// A leaf's accumulator, made when no graph holds one.
std::shared_ptr<node> accumulator_of(const tensor& t);

/// Starts recording the result `out`: drops the state it may share with an input's handle, and
/// says whether it carries a gradient (a floating dtype); when not, nothing is recorded.
bool begin_record(const tensor& out);
/// Makes `n` the node of `out`: its edges to `inputs`' gradients and their shapes and dtypes,
/// then `out`'s fresh autograd state pointing at it. The recording functions end with it, after
/// begin_record(out) said yes.
void attach_node(std::shared_ptr<node> n, std::span<const tensor* const> inputs, const tensor& out);

/// record() for a list of inputs of any length (concat, stack).
void record_inputs(std::string_view name, std::span<const tensor* const> inputs, const tensor& out,
                   std::vector<saved_value> saved, backward_fn fn);

/// A tensor saved for backward and the version of its storage then (Note [saved tensor versions]).
struct saved_slot {
    tensor value;
    uint64_t version = 0;
    bool is_output = false;
    /// Saves the handle `t` (an output without its autograd state) and its storage's version.
    saved_slot(tensor t, bool output);
    /// The value, after checking that its storage was not written since it was saved.
    tensor unpack(const std::shared_ptr<node>& owner, const std::string& op, size_t index) const;
};

/// A recorded op: its backward is a formula (backward_fn) over its saved values.
class function_node final : public node {
public:
    function_node(std::string name, std::vector<saved_slot> saved, backward_fn fn)
        : name_(std::move(name)), saved_(std::move(saved)), fn_(std::move(fn)) {}
    std::string name() const override { return name_; }
    tensor_list apply(const tensor_list& grad_outputs) override;
    void release_saved() override;

private:
    std::string name_;
    std::vector<saved_slot> saved_;
    backward_fn fn_;
    bool released_ = false;
};

/// Adds the gradient into a leaf's grad (torch's AccumulateGrad).
class accumulate_node final : public node {
public:
    accumulate_node(std::shared_ptr<tensor_meta> meta, input_info info) : meta_(std::move(meta)) {
        inputs.push_back(std::move(info));
    }
    std::string name() const override { return "AccumulateGrad"; }
    tensor_list apply(const tensor_list& grad_outputs) override;
    /// The leaf's state.
    const std::shared_ptr<tensor_meta>& meta() const noexcept { return meta_; }

private:
    std::shared_ptr<tensor_meta> meta_;
};

/// An op with no derivative: backward through it raises runtime_error naming the op.
class not_differentiable_node final : public node {
public:
    explicit not_differentiable_node(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_; }
    tensor_list apply(const tensor_list& grad_outputs) override;

private:
    std::string name_;
};

} // namespace isthmus::autograd
