// The plugin author layer's tensor views (access modifiers, checked indexing) and tensors.
#pragma once

#include "isthmus/plugin/core.hpp"

namespace isthmus::plugin {

namespace detail {

inline const char* access_name(int a) {
    static const char* const names[] = {"unchecked", "checked", "clamped", "circular", "mirror"};
    return a >= 0 && a <= 4 ? names[a] : "unknown";
}

/// "(1, 2, 3)": the first n values of v.
ISTHMUS_PLUGIN_SUPPORT std::string tuple_text(const int64_t* v, int n);

/// The message of a failed view access, the same on the CPU and the GPU: `modifier` is the
/// view's access (an 'unchecked view fails only in checked mode), `dim` the failing dimension,
/// `i` its index and `n` its size; `index` and `shape` the view's `rank` indices and sizes
/// (shown when not NULL), `arg` the argument position (0-based, -1 for a view that is no
/// argument) and `label` how to name it ("argument 2 (y)"; NULL: by its position).
ISTHMUS_PLUGIN_SUPPORT std::string access_message(int modifier, int dim, int64_t i, int64_t n,
                                                  const int64_t* index, const int64_t* shape,
                                                  int rank, int arg, const char* label);

} // namespace detail

/// Quasar-style names: vec/mat/cube views of `scalar` (float32) data and their float64 forms.
template <access A = access::unchecked>
using vec_view = view<float, 1, A>;
template <access A = access::unchecked>
using mat_view = view<float, 2, A>;
template <access A = access::unchecked>
using cube_view = view<float, 3, A>;

/// A tensor the plugin allocates through the host (a result): C-contiguous, CPU, owned by the
/// host from the moment it exists, so nothing leaks when the function throws afterwards.
template <typename T, int N>
class tensor {
public:
    /// Allocates a new tensor of `shape` in the running call.
    explicit tensor(const int64_t (&shape)[N]) : tensor(shape, N) {}
    tensor(const int64_t* shape, int ndim) {
        isthmus_call* c = current_call();
        if (ndim != N) throw value_error("isthmus::plugin::tensor: rank mismatch");
        if (c->host->new_tensor(c, dtype_code<T>::value, N, shape, &v_) != 0)
            throw error("isthmus::plugin::tensor: the host could not allocate the tensor");
        view_ = view<T, N>(v_.u.t);
    }
    const view<T, N>& v() const { return view_; }
    template <typename... I>
    T& operator()(I... idx) const {
        return view_(idx...);
    }
    T* data() const { return view_.data(); }
    int64_t size(int d) const { return view_.size(d); }
    int64_t numel() const { return view_.numel(); }
    const isthmus_value& raw() const { return v_; }

private:
    isthmus_value v_{};
    view<T, N> view_;
};

} // namespace isthmus::plugin
