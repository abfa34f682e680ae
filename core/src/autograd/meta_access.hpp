// The engine's access to a tensor's autograd state, and the recording hook of the view methods.
#pragma once

#include "isthmus/autograd.hpp"

#include <utility>

namespace isthmus::autograd {

/// The one friend of tensor: reads and replaces tensor::autograd_ (See Note [autograd state]).
struct meta_access {
    static tensor_meta* get(const tensor& t) noexcept { return t.autograd_.get(); }
    static const std::shared_ptr<tensor_meta>& shared(const tensor& t) noexcept {
        return t.autograd_;
    }
    /// The state of `t`, made when it has none.
    static tensor_meta& ensure(const tensor& t) {
        if (!t.autograd_) t.autograd_ = std::make_shared<tensor_meta>();
        return *t.autograd_;
    }
    static void set(const tensor& t, std::shared_ptr<tensor_meta> m) noexcept {
        t.autograd_ = std::move(m);
    }
    /// A handle onto the same view with no autograd state.
    static tensor plain(const tensor& t) {
        tensor r = t;
        r.autograd_.reset();
        return r;
    }
};

/// Ends a view method: `r` was copied from `self` (with its state); when `self` carries autograd
/// state, `r` gets its own, and a node named `name` when recording (make_fn() builds its backward).
template <typename MakeFn>
inline tensor finish_view(const tensor& self, tensor r, const char* name, MakeFn&& make_fn) {
    if (!self.has_autograd()) [[likely]]
        return r;
    meta_access::set(r, nullptr);
    if (any_requires_grad({&self})) record(name, {&self}, r, {}, make_fn());
    return r;
}

} // namespace isthmus::autograd
