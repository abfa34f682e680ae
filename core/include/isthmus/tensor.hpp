// Tensors: a view (dtype, shape, strides in elements, offset) onto a shared storage.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"
#include "isthmus/storage.hpp"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace isthmus {

namespace autograd {
struct tensor_meta; // a tensor's autograd state (isthmus/autograd.hpp)
class node;         // a recorded op (isthmus/autograd.hpp)
struct meta_access; // the engine's access to tensor_meta
} // namespace autograd

/// Sizes or strides of a tensor, one entry per dimension.
using shape_t = std::vector<int64_t>;
/// The largest rank a tensor may have.
inline constexpr int max_rank = 32;

/// Number of elements of a shape (1 for the empty shape of a 0-d tensor); throws value_error
/// ("array is too big") when the count does not fit in int64.
ISTHMUS_API int64_t numel_of(const shape_t& shape);
/// Checks a shape for a tensor of `itemsize`-byte elements as NumPy does and returns its element
/// count: at most max_rank dimensions, no negative size ("negative dimensions are not allowed"),
/// and `numel * itemsize` within int64 ("array is too big"), zero-size dimensions included in
/// the check. `what` names the operation in the message. See Note [checked sizes].
ISTHMUS_API int64_t checked_numel(const shape_t& shape, size_t itemsize, const char* what);
/// Row-major (C order) strides, in elements, for a shape.
ISTHMUS_API shape_t contiguous_strides(const shape_t& shape);
/// NumPy broadcasting of two shapes; throws value_error naming both shapes when incompatible.
ISTHMUS_API shape_t broadcast_shapes(const shape_t& a, const shape_t& b);
/// Wraps a possibly negative axis into [0, rank); throws index_error when out of range.
ISTHMUS_API int64_t wrap_axis(int64_t axis, int64_t rank);
/// "(2, 3, 4)" as NumPy prints shapes.
ISTHMUS_API std::string shape_str(const shape_t& shape);

/// A strided view onto a storage, like a NumPy ndarray or a c10 TensorImpl.
///
/// Copying a tensor copies the handle; both alias the same storage (views alias as in NumPy).
/// Shape ops (reshape when possible, transpose, permute, slice, select, squeeze, unsqueeze,
/// expand) return views; `contiguous()` and `clone()` copy.
class ISTHMUS_API tensor {
public:
    /// An undefined tensor (no storage). Most operations on it throw value_error.
    tensor() = default;

    /// A new, uninitialised tensor allocated on `resource` (MEMRESOURCE_DEVICE0 = default).
    static tensor empty(const shape_t& shape, dtype dt, resource_id resource = MEMRESOURCE_DEVICE0);
    /// A view onto an existing storage; throws value_error when the view reaches outside it.
    static tensor from_storage(std::shared_ptr<storage> st, dtype dt, shape_t shape,
                               shape_t strides, int64_t offset = 0);
    /// Wraps foreign memory without copying (the storage is pinned to `resource`); `release`
    /// runs once when the last view is gone. Strides in elements; empty strides = C order.
    /// When it throws, `release` has not run and will not: what it releases is still the
    /// caller's.
    static tensor wrap(void* data, dtype dt, shape_t shape, shape_t strides, resource_id resource,
                       std::function<void()> release);
    /// A new CPU tensor holding a copy of `values` with the given shape (default: 1-d).
    template <typename T>
    static tensor from_vector(const std::vector<T>& values, shape_t shape = {});
    /// A 0-d tensor holding `v`.
    template <typename T>
    static tensor scalar_tensor(T v);

    bool defined() const noexcept { return storage_ != nullptr; }
    isthmus::dtype dtype() const noexcept { return dtype_; }
    size_t itemsize() const noexcept { return isthmus::itemsize(dtype_); }
    const shape_t& shape() const noexcept { return shape_; }
    const shape_t& strides() const noexcept { return strides_; }
    int64_t offset() const noexcept { return offset_; }
    int64_t dim() const noexcept { return static_cast<int64_t>(shape_.size()); }
    /// Element count. Never overflows: every tensor's shape passed checked_numel when it was
    /// made (Note [checked sizes]).
    int64_t numel() const noexcept {
        int64_t n = 1;
        for (int64_t s : shape_) n *= s;
        return n;
    }
    /// Size of dimension `d` (negative counts from the end).
    int64_t size(int64_t d) const;
    /// Stride of dimension `d` in elements (negative counts from the end).
    int64_t stride(int64_t d) const;
    size_t nbytes() const noexcept { return static_cast<size_t>(numel()) * itemsize(); }
    const std::shared_ptr<isthmus::storage>& storage() const noexcept { return storage_; }

    /// True for C-order contiguous layout (size-1 and empty dimensions ignore their strides).
    bool is_contiguous() const noexcept;
    /// True when the elements fill a contiguous block of memory in some order (no gaps, no
    /// overlap), e.g. a transposed contiguous tensor.
    bool is_dense() const noexcept;
    /// True when the view's elements cover every byte of its storage.
    bool covers_storage() const noexcept;
    /// False for a broadcast view (a dimension of more than one element with stride 0, whose
    /// elements share memory) and for every view taken from one made by expand. Such views are
    /// read-only (NumPy's broadcast_to rule): writes through them raise value_error and exports
    /// mark them read-only. See Note [read-only broadcast views].
    bool is_writable() const noexcept;
    /// Throws value_error ("<what>: assignment destination is read-only ...") unless writable.
    void check_writable(const char* what) const;

    // ---- views ----
    /// Reshapes to `shape` (one entry may be -1). A view when the strides allow, else a copy.
    tensor reshape(shape_t shape) const;
    /// Like reshape but never copies: throws value_error when a view is impossible.
    tensor view(shape_t shape) const;
    /// Swaps two dimensions.
    tensor transpose(int64_t d0, int64_t d1) const;
    /// Reverses the dimensions (NumPy's .T).
    tensor t() const;
    /// Reorders the dimensions: result dimension i is input dimension dims[i].
    tensor permute(const shape_t& dims) const;
    /// Python-style slice start:stop:step along `d` (indices clamp like Python; step != 0).
    tensor slice(int64_t d, int64_t start, int64_t stop, int64_t step = 1) const;
    /// Removes dimension `d` by taking index `i` (negative counts from the end).
    tensor select(int64_t d, int64_t i) const;
    /// Removes all size-1 dimensions.
    tensor squeeze() const;
    /// Removes dimension `d`, which must have size 1.
    tensor squeeze(int64_t d) const;
    /// Inserts a size-1 dimension at `d` (in [-rank-1, rank]).
    tensor unsqueeze(int64_t d) const;
    /// Broadcasts to `shape` with stride 0 on the expanded dimensions (NumPy's broadcast_to).
    tensor expand(const shape_t& shape) const;
    /// Flattens to 1-d (a view when possible).
    tensor flatten() const;
    /// Reinterprets the same storage region with a different dtype of the same itemsize.
    tensor view_as(isthmus::dtype dt) const;

    // ---- copies ----
    /// This tensor when already C-contiguous, else a C-contiguous copy.
    tensor contiguous() const;
    /// A C-contiguous copy on the same resource.
    tensor clone() const;
    /// A copy converted to dtype `dt` (NumPy's astype); `copy=false` returns *this when the dtype
    /// already matches.
    tensor to(isthmus::dtype dt, bool copy = true) const;
    /// Copies `src` into this tensor, broadcasting it and converting dtypes; throws value_error
    /// when shapes do not broadcast. Handles overlapping source and destination.
    void copy_from(const tensor& src);
    /// Sets every element to `v` (converted to this dtype).
    void fill(double v);

    // ---- memory ----
    /// Locks the storage on `resource` and returns the address of element 0 of this view.
    /// A write lock through a view that does not cover the whole storage acts as read-write.
    /// Write and read-write locks of a broadcast view throw value_error (is_writable).
    void* lock(lock_mode mode, resource_id resource) const;
    /// Releases a lock taken by `lock` with the same arguments.
    void unlock(lock_mode mode, resource_id resource) const;
    /// Pins the storage to `resource` (storage::pin, Note [pinning]) and returns the address of
    /// element 0 of this view there, valid until the matching `storage()->unpin(resource)`.
    void* pin(resource_id resource) const;
    /// Where the data is now: the pinned resource, else the default resource when valid there,
    /// else the lowest resource holding a valid copy, else the CPU.
    resource_id location() const;

    // ---- element access (host, for small data, tests and printing) ----
    /// The single element of a tensor with numel() == 1, converted to T.
    template <typename T>
    T item() const;
    /// The element at `index` (one entry per dimension, negatives count from the end), as T.
    template <typename T>
    T at(std::initializer_list<int64_t> index) const;
    /// All elements in C order, converted to T.
    template <typename T>
    std::vector<T> to_vector() const;
    /// NumPy-like text, summarised when large ("[[1, 2],\n [3, 4]]").
    std::string to_string() const;

    // ---- autograd (isthmus/autograd.hpp; See Note [autograd state]) ----
    /// True when gradients flow to this tensor: a leaf marked with set_requires_grad, or the
    /// result of an op recorded while one of its inputs required grad.
    bool requires_grad() const noexcept;
    /// Marks a leaf as requiring grad (or not). Throws runtime_error for dtypes other than
    /// floating point and complex, and when turning it off on a non-leaf. Returns *this.
    const tensor& set_requires_grad(bool on = true) const;
    /// True for tensors not made by a recorded op (every tensor that does not require grad).
    bool is_leaf() const noexcept;
    /// The accumulated gradient of a leaf (or of a tensor that called retain_grad); undefined
    /// when there is none.
    tensor grad() const;
    /// Replaces the gradient (undefined clears it); throws value_error / type_error when `g`'s
    /// shape or dtype differs from this tensor's.
    void set_grad(const tensor& g) const;
    /// The node that made this tensor, or null for leaves.
    std::shared_ptr<autograd::node> grad_fn() const noexcept;
    /// Asks a non-leaf to keep its gradient in grad() during backward.
    void retain_grad() const;
    /// Runs backward from this 1-element tensor (gradient 1); see autograd::backward.
    void backward() const;
    /// Runs backward from this tensor with `gradient` (undefined: 1 for a 1-element tensor).
    void backward(const tensor& gradient, bool retain_graph = false,
                  bool create_graph = false) const;
    /// The same memory without autograd state: not requiring grad, not recorded.
    tensor detach() const;
    /// True when this handle carries autograd state at all (the hot path's one pointer test).
    bool has_autograd() const noexcept { return autograd_ != nullptr; }

private:
    friend struct autograd::meta_access;
    tensor(std::shared_ptr<isthmus::storage> st, isthmus::dtype dt, shape_t shape, shape_t strides,
           int64_t offset)
        : storage_(std::move(st)), dtype_(dt), shape_(std::move(shape)),
          strides_(std::move(strides)), offset_(offset) {}
    void check_defined() const;
    tensor to_contiguous_as(isthmus::dtype dt) const;
    void read_elements_as(isthmus::dtype dt, void* out) const;
    static tensor from_host_bytes(const void* data, isthmus::dtype dt, shape_t shape);

    std::shared_ptr<isthmus::storage> storage_;
    isthmus::dtype dtype_ = isthmus::dtype::float32;
    shape_t shape_;
    shape_t strides_;
    int64_t offset_ = 0;
    bool read_only_ = false; ///< a view of a broadcast view (Note [read-only broadcast views])
    /// Autograd state, null for tensors that never took part in autograd; shared by copies of
    /// the handle. See Note [autograd state].
    mutable std::shared_ptr<autograd::tensor_meta> autograd_;
};

ISTHMUS_API std::ostream& operator<<(std::ostream& os, const tensor& t);

// ---- template definitions ----

template <typename T>
tensor tensor::from_vector(const std::vector<T>& values, shape_t shape) {
    // The default (empty) shape means 1-d, for 0 values too; 0-d is scalar_tensor's job.
    if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
    ISTHMUS_CHECK(numel_of(shape) == static_cast<int64_t>(values.size()), value_error,
                  "from_vector: ", values.size(), " values do not fill shape ", shape_str(shape));
    if constexpr (std::is_same_v<T, bool>) {
        std::vector<uint8_t> bytes(values.begin(), values.end());
        return from_host_bytes(bytes.data(), dtype::bool_, std::move(shape));
    } else {
        return from_host_bytes(values.data(), dtype_of_v<T>, std::move(shape));
    }
}

template <typename T>
tensor tensor::scalar_tensor(T v) {
    return from_vector(std::vector<T>{v}).reshape(shape_t{});
}

template <typename T>
T tensor::item() const {
    check_defined();
    ISTHMUS_CHECK(numel() == 1, value_error, "item() needs exactly one element, the tensor has ",
                  numel(), " (shape ", shape_str(shape_), ")");
    return to_vector<T>()[0];
}

template <typename T>
T tensor::at(std::initializer_list<int64_t> index) const {
    check_defined();
    ISTHMUS_CHECK(static_cast<int64_t>(index.size()) == dim(), index_error, "at(): ", index.size(),
                  " indices given for a tensor of rank ", dim());
    tensor v = *this;
    for (int64_t i : index) v = v.select(0, i);
    return v.item<T>();
}

template <typename T>
std::vector<T> tensor::to_vector() const {
    check_defined();
    std::vector<T> out(static_cast<size_t>(numel()));
    if constexpr (std::is_same_v<T, bool>) {
        std::vector<uint8_t> bytes(out.size());
        read_elements_as(dtype::bool_, bytes.data());
        for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
    } else {
        read_elements_as(dtype_of_v<T>, out.data());
    }
    return out;
}

} // namespace isthmus
