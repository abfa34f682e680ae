// Recording plugin function calls for autograd (Note [plugin calls in autograd]).
#include "call_autograd.hpp"

#include "call_context.hpp"

#include "isthmus/autograd.hpp"
#include "isthmus/ops/creation.hpp"

namespace isthmus::plugin_host::detail {

// Note [plugin calls in autograd]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A plugin function called with a tensor that requires grad, while grad mode is on, is an op of
// isthmus's autograd like any other: its tensor result gets a node named after the function. The
// node's backward calls the function's derived vector-Jacobian product, `<name>_vjp` (Note
// [derived backward] in isthmus/plugin/derive.hpp), with the saved arguments and the result's
// gradient, and hands each tensor argument its entry of the tuple it returns. A function without
// one (registered with concrete types) records a node whose backward raises naming it, rather
// than a result that silently does not require grad; so does a function returning several values
// (multi-output nodes are not supported yet). The tensors are saved as any op saves its inputs:
// changing one in place before backward is the usual error. The derived backward is a plugin
// function itself, with no derivative: a second derivative raises naming it.
//
// A kernel launch is the same op with its result written in place: when grad mode is on and a
// tensor the kernel reads requires grad, the one tensor it writes (a non-const view parameter)
// gets the node. Its backward runs the derived kernel, `<name>_vjp` (Note [derived kernels] in
// isthmus/plugin/active_view.hpp), over the same dims: the saved arguments, the gradient as the
// output's gradient (and in the output's place, which the derived kernel never reads), and a
// zero gradient for each differentiable parameter, found by its name grad_<parameter>. Writing
// into a tensor that requires grad is an in-place op, refused before the launch as every in-place
// op on such tensors is (docs/autograd.md); a kernel writing several tensors records nodes that
// refuse backward.
namespace {
// Whether a tensor argument carries autograd state: one pointer test per argument, what a call
// pays when nothing requires grad (Note [autograd state] in isthmus/autograd.hpp).
bool any_autograd_state(std::span<const value> args) {
    for (const value& a : args)
        if (a.is_tensor() && a.as_tensor().has_autograd()) return true;
    return false;
}
} // namespace

void record_call(const function& fn, std::span<const value> args, const value& result) {
    if (!any_autograd_state(args) || !autograd::is_grad_enabled()) return;
    std::vector<const tensor*> inputs;
    std::vector<size_t> positions;
    bool wanted = false;
    for (size_t i = 0; i < args.size(); ++i)
        if (args[i].is_tensor()) {
            inputs.push_back(&args[i].as_tensor());
            positions.push_back(i);
            wanted = wanted || args[i].as_tensor().requires_grad();
        }
    if (!wanted) return;
    if (!result.is_tensor()) {
        if (result.is_cell())
            for (const value& v : result.as_cell().items)
                if (v.is_tensor())
                    autograd::record_not_differentiable(
                        fn.name() + " (one of several results: not differentiable yet)", inputs,
                        v.as_tensor());
        return;
    }
    const std::string vjp_name = fn.name() + "_vjp";
    if (!fn.owner()->has_function(vjp_name)) {
        autograd::record_not_differentiable(
            fn.name() + " (a plugin function without a derived backward: register it with "
                        "ip::generic)",
            inputs, result.as_tensor());
        return;
    }
    std::shared_ptr<function> vjp = fn.owner()->get_function(vjp_name);
    std::vector<autograd::saved_value> saved;
    saved.reserve(inputs.size());
    for (const tensor* t : inputs) saved.push_back({*t, false});
    std::vector<value> others(args.begin(), args.end());
    for (size_t p : positions) others[p] = value(); // the tensors come back from `saved`
    autograd::record(
        fn.name(), inputs, result.as_tensor(), std::move(saved),
        [vjp, others = std::move(others),
         positions](const tensor& g, const autograd::tensor_list& kept) -> autograd::tensor_list {
            std::vector<value> a = others;
            for (size_t k = 0; k < positions.size(); ++k) a[positions[k]] = value(kept[k]);
            a.emplace_back(g);
            const value r = vjp->call(a);
            autograd::tensor_list grads(positions.size());
            if (r.is_cell()) {
                const cell& c = r.as_cell();
                for (size_t k = 0; k < positions.size(); ++k)
                    if (positions[k] < c.items.size() && c.items[positions[k]].is_tensor())
                        grads[k] = c.items[positions[k]].as_tensor();
            }
            return grads;
        });
}

namespace {

bool writes(const isthmus_param& p) {
    return p.kind == ISTHMUS_PARAM_TENSOR && (p.flags & ISTHMUS_PARAM_WRITE) != 0;
}

// The index of parameter `name` of `k`, or -1.
int32_t param_index(const isthmus_kernel* k, const std::string& name) {
    for (int32_t i = 0; i < k->nparams; ++i)
        if (name == k->params[i].name) return i;
    return -1;
}

} // namespace

void check_launch_writes(std::span<const value> args, const kernel& k) {
    if (!any_autograd_state(args) || !autograd::is_grad_enabled()) return;
    const isthmus_kernel* ak = k.abi();
    for (int32_t i = 0; i < ak->nparams && static_cast<size_t>(i) < args.size(); ++i)
        if (writes(ak->params[i]) && args[i].is_tensor())
            autograd::check_inplace(
                ("parallel_do(" + k.name() + ") writing " + ak->params[i].name).c_str(),
                args[i].as_tensor());
}

void record_launch(const shape_t& dims, std::span<const value> args, const kernel& k) {
    if (!any_autograd_state(args) || !autograd::is_grad_enabled()) return;
    const isthmus_kernel* ak = k.abi();
    std::vector<const tensor*> inputs;
    std::vector<size_t> positions;
    std::vector<size_t> outputs;
    bool wanted = false;
    for (size_t i = 0; i < args.size() && i < static_cast<size_t>(ak->nparams); ++i) {
        if (!args[i].is_tensor()) continue;
        if (writes(ak->params[i])) {
            outputs.push_back(i);
        } else {
            inputs.push_back(&args[i].as_tensor());
            positions.push_back(i);
            wanted = wanted || args[i].as_tensor().requires_grad();
        }
    }
    if (!wanted || outputs.empty()) return;
    const std::string vjp_name = k.name() + "_vjp";
    if (outputs.size() != 1 || !k.owner()->has_kernel(vjp_name)) {
        const std::string why = outputs.size() != 1
                                    ? " (a kernel writing several tensors: not differentiable yet)"
                                    : " (a plugin kernel without a derived kernel: register it "
                                      "with ip::generic)";
        for (size_t o : outputs)
            autograd::record_not_differentiable(k.name() + why, inputs, args[o].as_tensor());
        return;
    }
    std::shared_ptr<kernel> vjp = k.owner()->get_kernel(vjp_name);
    const isthmus_kernel* av = vjp->abi();
    const size_t out = outputs.front();
    // The derived kernel's extra parameters, in order: the output's gradient, then each
    // differentiable parameter's (Note [derived kernels]); each is found by its name.
    struct grad_slot {
        int32_t forward = -1; // the forward parameter, -1 for the output's gradient
        int32_t dtype = 0;
        int64_t vec_len = -1; // a fixed vector's length, -1 for a tensor or a number
    };
    std::vector<grad_slot> extra;
    for (int32_t j = ak->nparams; j < av->nparams; ++j) {
        const std::string n = av->params[j].name;
        const int32_t f = n.rfind("grad_", 0) == 0 ? param_index(ak, n.substr(5)) : -1;
        ISTHMUS_CHECK(f >= 0, runtime_error, "parallel_do(", k.name(), "): the derived kernel ",
                      vjp_name, " has a parameter ", n, " that names no parameter of ", k.name());
        const isthmus_param& fp = ak->params[f];
        extra.push_back({static_cast<size_t>(f) == out ? -1 : f, av->params[j].dtype,
                         fp.kind == ISTHMUS_PARAM_VEC ? fp.vec_len : -1});
    }
    std::vector<autograd::saved_value> saved;
    saved.reserve(inputs.size());
    for (const tensor* t : inputs) saved.push_back({*t, false});
    std::vector<value> others(args.begin(), args.end());
    for (size_t p : positions) others[p] = value();
    others[out] = value(); // never read by the derived kernel: the gradient takes its place
    autograd::record(
        k.name(), inputs, args[out].as_tensor(), std::move(saved),
        [vjp, dims, out, extra, others = std::move(others), positions,
         forward_count = static_cast<size_t>(ak->nparams)](
            const tensor& g, const autograd::tensor_list& kept) -> autograd::tensor_list {
            std::vector<value> a = others;
            for (size_t i = 0; i < positions.size(); ++i) a[positions[i]] = value(kept[i]);
            // the output's place takes a writable copy when g is a broadcast (a sum's
            // gradient): the derived kernel locks it for writing, never writes it
            const tensor gw = g.is_contiguous() ? g : g.contiguous();
            a[out] = value(gw);
            std::vector<tensor> grads(forward_count);
            for (const grad_slot& e : extra) {
                if (e.forward < 0) {
                    a.emplace_back(g);
                    continue;
                }
                const value& v = a[static_cast<size_t>(e.forward)];
                const shape_t shape = e.vec_len >= 0  ? shape_t{e.vec_len}
                                      : v.is_tensor() ? v.as_tensor().shape()
                                                      : shape_t{};
                tensor z = zeros(shape, dtype_of_code(e.dtype));
                grads[static_cast<size_t>(e.forward)] = z;
                a.emplace_back(z);
            }
            parallel_do(dims, a, *vjp);
            autograd::tensor_list r(positions.size());
            for (size_t i = 0; i < positions.size(); ++i) r[i] = grads[positions[i]];
            return r;
        });
}

} // namespace isthmus::plugin_host::detail
