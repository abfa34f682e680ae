// The backward engine: runs a recorded graph in reverse topological order (backward and grad).
#include "autograd/node_impl.hpp"

#include "isthmus/error.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/elementwise.hpp"

#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace isthmus::autograd {

namespace {

// Note [backward order]
// ~~~~~~~~~~~~~~~~~~~~~
// A node runs once every node that feeds it a gradient has run: the engine first walks the graph
// from the roots and counts, per node, the edges that reach it; a node whose count drops to zero is
// ready, and among ready nodes the one recorded last runs first (a priority queue on sequence_nr,
// as torch orders its CPU queue). Gradients arriving at one node are summed in its input buffer, so
// each node's formula runs once per backward. autograd::grad runs only the nodes on a path to an
// input it was asked about and never touches a leaf's .grad.

struct by_sequence {
    bool operator()(const node* a, const node* b) const { return a->sequence_nr < b->sequence_nr; }
};

/// The gradient fitted to the input it is for: summed over broadcast dimensions, cast to the
/// input's dtype (gradients keep their input's dtype).
tensor fit(const tensor& g, const input_info& in, const node& n, size_t i) {
    tensor r = g;
    if (!in.is_shape(r.shape())) {
        const shape_t want(in.shape.begin(), in.shape.end());
        r = sum_to(r, want);
        ISTHMUS_ASSERT(r.shape() == want, "the gradient of input ", i, " of ", n.name(),
                       " has shape ", shape_str(g.shape()), ", expected ", shape_str(want));
    }
    if (r.dtype() != in.dtype) r = cast(r, in.dtype);
    return r;
}

void add_into(tensor& slot, const tensor& g) {
    slot = slot.defined() ? add(slot, g) : g;
}

class graph_task {
public:
    graph_task(bool keep_graph, bool accumulate)
        : keep_graph_(keep_graph), accumulate_(accumulate) {}

    /// Counts the edges reaching each node from `roots` (Note [backward order]).
    void count(const std::vector<node*>& roots) {
        std::vector<node*> stack;
        for (node* r : roots)
            if (seen_.insert(r).second) stack.push_back(r);
        while (!stack.empty()) {
            node* n = stack.back();
            stack.pop_back();
            order_.push_back(n);
            for (const edge& e : n->next_edges) {
                if (!e.valid()) continue;
                ++deps_[e.fn.get()];
                if (seen_.insert(e.fn.get()).second) stack.push_back(e.fn.get());
            }
        }
    }

    /// Marks the nodes on a path to a captured one (autograd::grad runs only those).
    void mark_needed() {
        prune_ = true;
        // order_ lists each node before the nodes it feeds into were all visited; iterate to a
        // fixed point (graphs are small compared with the ops they record).
        bool changed = true;
        for (auto& c : captures_) needed_.insert(c.first);
        while (changed) {
            changed = false;
            for (node* n : order_) {
                if (needed_.count(n)) continue;
                for (const edge& e : n->next_edges)
                    if (e.valid() && needed_.count(e.fn.get())) {
                        needed_.insert(n);
                        changed = true;
                        break;
                    }
            }
        }
    }

    void capture(node* n, uint32_t output_nr, size_t result_index) {
        captures_[n].push_back({output_nr, result_index});
    }

    void deliver(const edge& e, const tensor& g) {
        auto& buf = buffers_[e.fn.get()];
        if (buf.size() < e.fn->num_outputs) buf.resize(e.fn->num_outputs);
        add_into(buf[e.input_nr], g);
    }

    /// Runs the graph; captured gradients go to `results`.
    void run(const std::vector<node*>& roots, tensor_list& results) {
        std::priority_queue<node*, std::vector<node*>, by_sequence> ready;
        std::unordered_set<node*> queued;
        for (node* r : roots)
            if (deps_[r] == 0 && queued.insert(r).second) ready.push(r);
        while (!ready.empty()) {
            node* n = ready.top();
            ready.pop();
            tensor_list grads = std::move(buffers_[n]);
            buffers_.erase(n);
            grads.resize(n->num_outputs);
            if (auto c = captures_.find(n); c != captures_.end())
                for (auto [out, idx] : c->second) results[idx] = grads[out];
            for (auto& [out, weak] : n->retained)
                if (auto m = weak.lock(); m && grads[out].defined()) add_into(m->grad, grads[out]);
            const bool is_acc = dynamic_cast<accumulate_node*>(n) != nullptr;
            bool any = false;
            for (const tensor& g : grads) any = any || g.defined();
            const bool execute = any && (is_acc ? accumulate_ : (!prune_ || needed_.count(n) > 0));
            tensor_list out;
            if (execute) out = n->apply(grads);
            if (!keep_graph_ && !is_acc && execute) n->release_saved();
            for (size_t i = 0; i < n->next_edges.size(); ++i) {
                const edge& e = n->next_edges[i];
                if (!e.valid()) continue;
                if (i < out.size() && out[i].defined())
                    deliver(e, fit(out[i], n->inputs[i], *n, i));
                if (--deps_[e.fn.get()] == 0) ready.push(e.fn.get());
            }
        }
    }

private:
    bool keep_graph_;
    bool accumulate_;
    bool prune_ = false;
    std::unordered_set<node*> seen_;
    std::vector<node*> order_;
    std::unordered_map<node*, int> deps_;
    std::unordered_map<node*, tensor_list> buffers_;
    std::unordered_map<node*, std::vector<std::pair<uint32_t, size_t>>> captures_;
    std::unordered_set<node*> needed_;
};

/// The root edges and their starting gradients; checks what the user passed.
std::vector<std::pair<edge, tensor>> root_edges(const tensor_list& outputs,
                                                const tensor_list& grad_outputs) {
    ISTHMUS_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), value_error,
                  "backward: ", grad_outputs.size(), " gradients given for ", outputs.size(),
                  " outputs");
    std::vector<std::pair<edge, tensor>> roots;
    for (size_t i = 0; i < outputs.size(); ++i) {
        const tensor& out = outputs[i];
        ISTHMUS_CHECK(out.defined(), value_error, "backward: output ", i, " is undefined");
        ISTHMUS_CHECK(requires_grad_of(out), runtime_error, "element ", i,
                      " of the outputs does not require grad and has no grad_fn (was it computed "
                      "under no_grad(), or from tensors that do not require grad?)");
        tensor g = grad_outputs.empty() ? tensor() : grad_outputs[i];
        if (!g.defined()) {
            ISTHMUS_CHECK(out.numel() == 1, runtime_error,
                          "grad can be implicitly created only for scalar outputs: output ", i,
                          " has shape ", shape_str(out.shape()), "; pass a gradient of that shape");
            g = ones_like(out);
        } else {
            ISTHMUS_CHECK(g.shape() == out.shape(), value_error,
                          "backward: mismatch in shape: the gradient of output ", i, " has shape ",
                          shape_str(g.shape()), ", the output has shape ", shape_str(out.shape()));
            ISTHMUS_CHECK(is_floating(g.dtype()), type_error, "backward: the gradient of output ",
                          i, " must be floating point, got ", g.dtype());
        }
        roots.push_back({gradient_edge(out), g});
    }
    return roots;
}

} // namespace

void backward(const tensor_list& outputs, const tensor_list& grad_outputs, bool retain_graph,
              bool create_graph) {
    auto roots = root_edges(outputs, grad_outputs);
    grad_mode_guard mode(create_graph);
    graph_task task(retain_graph || create_graph, true);
    std::vector<node*> root_nodes;
    for (auto& [e, g] : roots) root_nodes.push_back(e.fn.get());
    task.count(root_nodes);
    for (auto& [e, g] : roots) task.deliver(e, g);
    tensor_list unused;
    task.run(root_nodes, unused);
}

tensor_list grad(const tensor_list& outputs, const tensor_list& inputs,
                 const tensor_list& grad_outputs, bool retain_graph, bool create_graph,
                 bool allow_unused) {
    auto roots = root_edges(outputs, grad_outputs);
    grad_mode_guard mode(create_graph);
    graph_task task(retain_graph || create_graph, false);
    std::vector<node*> root_nodes;
    for (auto& [e, g] : roots) root_nodes.push_back(e.fn.get());
    task.count(root_nodes);
    tensor_list results(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        ISTHMUS_CHECK(requires_grad_of(inputs[i]), runtime_error, "grad: input ", i,
                      " does not require grad");
        const tensor_meta* m = meta_access::get(inputs[i]);
        std::shared_ptr<node> fn = m->grad_fn ? m->grad_fn : m->accumulator.lock();
        if (fn) task.capture(fn.get(), m->grad_fn ? m->output_nr : 0, i);
    }
    task.mark_needed();
    for (auto& [e, g] : roots) task.deliver(e, g);
    task.run(root_nodes, results);
    for (size_t i = 0; i < inputs.size(); ++i)
        ISTHMUS_CHECK(allow_unused || results[i].defined(), runtime_error, "grad: input ", i,
                      " was not used to compute the outputs (pass allow_unused=True to get None "
                      "for it)");
    return results;
}

} // namespace isthmus::autograd
