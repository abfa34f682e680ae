// Autograd nodes and recording: grad mode, saved values with version checks, gradient accumulators.
#include "autograd/node_impl.hpp"

#include "isthmus/error.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/elementwise.hpp"
#include "isthmus/ops/reduce.hpp"

#include <atomic>

namespace isthmus::autograd {

namespace {
thread_local bool t_grad_enabled = true;
std::atomic<uint64_t> g_sequence{0};
} // namespace

bool is_grad_enabled() noexcept {
    return t_grad_enabled;
}

void set_grad_enabled(bool on) noexcept {
    t_grad_enabled = on;
}

node::~node() = default;

bool requires_grad_of(const tensor& t) noexcept {
    const tensor_meta* m = meta_access::get(t);
    return m && (m->requires_grad || m->grad_fn);
}

bool any_requires_grad(std::initializer_list<const tensor*> ts) noexcept {
    if (!t_grad_enabled) return false;
    for (const tensor* t : ts)
        if (requires_grad_of(*t)) return true;
    return false;
}

std::shared_ptr<node> accumulator_of(const tensor& t) {
    const auto& shared = meta_access::shared(t);
    if (auto acc = shared->accumulator.lock()) return acc;
    auto acc = std::make_shared<accumulate_node>(shared, input_info(t));
    acc->sequence_nr = g_sequence.fetch_add(1, std::memory_order_relaxed);
    shared->accumulator = acc;
    return acc;
}

edge gradient_edge(const tensor& t) {
    tensor_meta* m = meta_access::get(t);
    if (!m) return {};
    if (m->grad_fn) return {m->grad_fn, m->output_nr};
    if (m->requires_grad) return {accumulator_of(t), 0};
    return {};
}

// ---- saved values ----

// Note [saved tensor versions]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A node keeps the tensors its derivative needs. Each storage counts its writes (storage::version:
// every write or read-write lock increments it, and an op's first write to a fresh output needs no
// count), and a node notes the count when it saves a tensor. Backward compares: a tensor written in
// place after it was saved (x.exp() saved its result; then y += 1) would give a wrong gradient, so
// it raises runtime_error naming the op, as torch does. The counter is per storage, so a write
// through any view counts. A saved output is kept without its autograd state (the state points at
// this very node, and the node would keep itself alive); when backward records (create_graph), the
// unpacked output gets fresh state pointing at the node again.

saved_slot::saved_slot(tensor t, bool output)
    : value(std::move(t)), version(value.storage() ? value.storage()->version() : 0),
      is_output(output) {
    if (output) meta_access::set(value, nullptr);
}

tensor saved_slot::unpack(const std::shared_ptr<node>& owner, const std::string& op,
                          size_t index) const {
    if (value.storage()) {
        const uint64_t now = value.storage()->version();
        ISTHMUS_CHECK(now == version, runtime_error,
                      "one of the tensors needed for gradient computation has been modified by an "
                      "in-place operation: the ",
                      is_output ? "output" : "input", " saved by ", op, " (value ", index,
                      ", shape ", shape_str(value.shape()), ") was at version ", version,
                      " and is now at version ", now,
                      "; compute on a copy (clone()) or do the in-place change after backward");
    }
    if (!is_output || !is_grad_enabled()) return value;
    tensor r = value;
    auto m = std::make_shared<tensor_meta>();
    m->grad_fn = owner;
    meta_access::set(r, std::move(m));
    return r;
}

// ---- function_node ----

tensor_list function_node::apply(const tensor_list& grad_outputs) {
    ISTHMUS_CHECK(!released_, runtime_error,
                  "trying to run backward through the graph a second time (the values ", name_,
                  " saved for it were freed by the first backward); pass retain_graph=True to "
                  "the first backward or autograd.grad to keep them");
    tensor_list values;
    values.reserve(saved_.size());
    const auto self = shared_from_this();
    for (size_t i = 0; i < saved_.size(); ++i) values.push_back(saved_[i].unpack(self, name_, i));
    return fn_(grad_outputs[0], values);
}

void function_node::release_saved() {
    if (saved_.empty()) return;
    saved_.clear();
    released_ = true;
}

// ---- accumulate_node ----

tensor_list accumulate_node::apply(const tensor_list& grad_outputs) {
    const tensor& g = grad_outputs[0];
    if (!g.defined()) return {};
    tensor& grad = meta_->grad;
    if (is_grad_enabled()) { // create_graph: the gradient keeps its graph
        grad = grad.defined() ? add(grad, g) : g;
        return {};
    }
    const tensor plain = meta_access::plain(g);
    if (!grad.defined()) {
        // Keep g itself only when nothing else can see its memory (the engine's buffer and this
        // handle), so that in-place updates of .grad never write into another tensor.
        const bool exclusive = plain.storage() && plain.storage().use_count() <= 2 &&
                               plain.is_contiguous() && plain.is_writable();
        grad = exclusive ? plain : plain.clone();
    } else if (!grad.has_autograd() && grad.is_writable() && grad.dtype() == g.dtype()) {
        binary_inplace(binary_op::add, grad, plain);
    } else {
        grad = add(grad, plain);
    }
    return {};
}

// ---- recording ----

bool begin_record(const tensor& out) {
    meta_access::set(out, nullptr);  // `out` may be a copy of an input's handle
    return is_floating(out.dtype()); // integer, bool results carry no gradient
}

void attach_node(std::shared_ptr<node> n, std::span<const tensor* const> inputs,
                 const tensor& out) {
    n->sequence_nr = g_sequence.fetch_add(1, std::memory_order_relaxed);
    n->next_edges.reserve(inputs.size());
    n->inputs.reserve(inputs.size());
    for (const tensor* in : inputs) {
        n->next_edges.push_back(requires_grad_of(*in) ? gradient_edge(*in) : edge{});
        n->inputs.emplace_back(*in);
    }
    auto m = std::make_shared<tensor_meta>();
    m->grad_fn = std::move(n);
    meta_access::set(out, std::move(m));
}

void record(std::string_view name, std::initializer_list<const tensor*> inputs, const tensor& out,
            std::vector<saved_value> saved, backward_fn fn) {
    record_inputs(name, std::span<const tensor* const>(inputs.begin(), inputs.size()), out,
                  std::move(saved), std::move(fn));
}

void record_inputs(std::string_view name, std::span<const tensor* const> inputs, const tensor& out,
                   std::vector<saved_value> saved, backward_fn fn) {
    if (!begin_record(out)) return;
    std::vector<saved_slot> slots;
    slots.reserve(saved.size());
    for (saved_value& s : saved) slots.emplace_back(std::move(s.value), s.is_output);
    attach_node(std::make_shared<function_node>(std::string(name), std::move(slots), std::move(fn)),
                inputs, out);
}

void share_state(const tensor& from, const tensor& to) {
    meta_access::set(to, meta_access::shared(from));
}

void record(std::string_view name, const std::vector<const tensor*>& inputs, const tensor& out,
            std::vector<saved_value> saved, backward_fn fn) {
    record_inputs(name, inputs, out, std::move(saved), std::move(fn));
}

void record_not_differentiable(std::string_view name, std::initializer_list<const tensor*> inputs,
                               const tensor& out) {
    record_not_differentiable(name, std::vector<const tensor*>(inputs), out);
}

void record_not_differentiable(std::string_view name, const std::vector<const tensor*>& inputs,
                               const tensor& out) {
    if (!begin_record(out)) return;
    attach_node(std::make_shared<not_differentiable_node>(std::string(name)), inputs, out);
}

tensor_list not_differentiable_node::apply(const tensor_list&) {
    ISTHMUS_THROW(runtime_error, "the derivative of '", name_,
                  "' is not implemented: isthmus cannot differentiate through it (compute it on "
                  "detach()ed inputs, or under no_grad(), to leave it out of the graph)");
}

void check_inplace_recorded(const char* what, const tensor& target, const tensor* other) {
    if (!is_grad_enabled()) return;
    const tensor_meta* m = meta_access::get(target);
    ISTHMUS_CHECK(!(m && m->requires_grad && !m->grad_fn), runtime_error,
                  "a leaf tensor that requires grad is used in an in-place operation (", what,
                  "); do it under no_grad() (as optimizers do) or on a detach()ed tensor");
    ISTHMUS_CHECK(!requires_grad_of(target) && !(other && requires_grad_of(*other)), runtime_error,
                  "in-place ", what,
                  " on tensors that require grad is not differentiable in isthmus; use the "
                  "out-of-place form (a = a + b) or do it under no_grad()");
}

tensor sum_to(const tensor& g, const shape_t& shape) {
    if (g.shape() == shape) return g;
    const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
    ISTHMUS_CHECK(lead >= 0, internal_error, "sum_to: gradient of shape ", shape_str(g.shape()),
                  " has fewer dimensions than ", shape_str(shape));
    shape_t axes;
    for (int64_t i = 0; i < g.dim(); ++i)
        if (i < lead || (shape[static_cast<size_t>(i - lead)] == 1 && g.shape()[i] != 1))
            axes.push_back(i);
    tensor r = axes.empty() ? g : sum(g, axes, true);
    return r.shape() == shape ? r : r.reshape(shape);
}

} // namespace isthmus::autograd
