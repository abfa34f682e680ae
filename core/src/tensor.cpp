// Tensor construction, shapes, properties, copies and memory access (views: tensor_views.cpp).
// tensor_views.cpp).
#include "isthmus/tensor.hpp"
#include "autograd/meta_access.hpp"
#include "autograd/recorded_ops.hpp"
#include "isthmus/ops/creation.hpp"
#include "isthmus/small_vector.hpp"
#include "isthmus/value.hpp"
#include "ops/dispatch.hpp"

#include <algorithm>
#include <ostream>
#include <utility>
#include <vector>

namespace isthmus {

// Note [checked sizes]
// ~~~~~~~~~~~~~~~~~~~~
// Every tensor's shape is checked once, where a shape can grow (empty, from_storage, wrap,
// expand; reshape/view keep the count, slice/select shrink it): no negative size, at most
// max_rank dimensions, and the product of the sizes times the itemsize within int64, with
// zero-size dimensions skipped in the product so that (0, 2^62, 2^62) is refused like NumPy
// refuses it. After that check, numel(), nbytes(), contiguous strides and every offset inside
// the view fit in int64, so the rest of the runtime (loops, kernels, reductions) can use plain
// arithmetic. A count that overflows raises value_error with NumPy's "array is too big" words
// rather than wrapping to a small allocation that later code would overrun.
int64_t checked_numel(const shape_t& shape, size_t itemsize, const char* what) {
    ISTHMUS_CHECK(static_cast<int>(shape.size()) <= max_rank, value_error, what, ": rank ",
                  shape.size(), " exceeds the maximum of ", max_rank);
    int64_t bytes = static_cast<int64_t>(std::max<size_t>(itemsize, 1));
    bool zero = false;
    for (int64_t s : shape) {
        ISTHMUS_CHECK(s >= 0, value_error, what, ": negative dimension in shape ", shape_str(shape),
                      " (negative dimensions are not allowed)");
        if (s == 0) {
            zero = true;
            continue;
        }
        ISTHMUS_CHECK(!__builtin_mul_overflow(bytes, s, &bytes), value_error, what,
                      ": array is too big; shape ", shape_str(shape), " of ", itemsize,
                      "-byte elements holds more than 2^63 - 1 bytes");
    }
    return zero ? 0 : bytes / static_cast<int64_t>(std::max<size_t>(itemsize, 1));
}

int64_t numel_of(const shape_t& shape) {
    return checked_numel(shape, 1, "numel");
}

shape_t contiguous_strides(const shape_t& shape) {
    shape_t st(shape.size());
    int64_t acc = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        st[i] = acc;
        if (i > 0)
            ISTHMUS_CHECK(!__builtin_mul_overflow(acc, std::max<int64_t>(shape[i], 1), &acc),
                          value_error, "array is too big; the strides of shape ", shape_str(shape),
                          " do not fit in int64");
    }
    return st;
}

std::string shape_str(const shape_t& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

shape_t broadcast_shapes(const shape_t& a, const shape_t& b) {
    size_t n = std::max(a.size(), b.size());
    shape_t out(n);
    for (size_t i = 0; i < n; ++i) {
        int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
        int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
        ISTHMUS_CHECK(x == y || x == 1 || y == 1, value_error, "shapes ", shape_str(a), " and ",
                      shape_str(b), " cannot be broadcast together (dimension ", i, ": ", x, " vs ",
                      y, ")");
        out[i] = x == 1 ? y : x;
    }
    return out;
}

int64_t wrap_axis(int64_t axis, int64_t rank) {
    ISTHMUS_CHECK(axis >= -rank && axis < rank, index_error, "axis ", axis,
                  " is out of range for a tensor of rank ", rank);
    return axis < 0 ? axis + rank : axis;
}

namespace {
// The lowest and highest element offsets a (shape, strides) view reaches from its element 0,
// checked for overflow; false when it overflows (the view cannot fit in any storage).
bool view_extent(const shape_t& shape, const shape_t& strides, int64_t& lo, int64_t& hi) {
    lo = hi = 0;
    for (size_t i = 0; i < shape.size(); ++i) {
        int64_t span;
        if (__builtin_mul_overflow(shape[i] - 1, strides[i], &span)) return false;
        if (__builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi)) return false;
    }
    return true;
}
} // namespace

void tensor::check_defined() const {
    ISTHMUS_CHECK(storage_ != nullptr, value_error, "operation on an undefined tensor");
}

tensor tensor::empty(const shape_t& shape, isthmus::dtype dt, resource_id resource) {
    const size_t nbytes =
        static_cast<size_t>(checked_numel(shape, isthmus::itemsize(dt), "empty")) *
        isthmus::itemsize(dt);
    auto st = isthmus::storage::allocate(nbytes, resource);
    return tensor(std::move(st), dt, shape, contiguous_strides(shape), 0);
}

namespace {

// True when two elements of the view may share memory: a dimension of stride 0, or strides
// that, sorted, do not each step past the span of the smaller ones (NumPy's overlap test would
// solve exactly; this sufficient rule refuses only layouts no library makes on purpose). See
// Note [read-only broadcast views].
bool repeats_elements(const shape_t& shape, const shape_t& strides) {
    small_vector<std::pair<uint64_t, int64_t>, 8> dims; // |stride|, size
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0) return false; // no elements at all
        if (shape[i] > 1) {
            const int64_t st = strides[i];
            dims.emplace_back(st < 0 ? 0 - static_cast<uint64_t>(st) : static_cast<uint64_t>(st),
                              shape[i]);
        }
    }
    std::sort(dims.begin(), dims.end());
    uint64_t span = 0; // the largest offset the smaller strides reach
    for (const auto& [st, n] : dims) {
        if (st <= span) return true;               // also st == 0
        span += st * static_cast<uint64_t>(n - 1); // within the checked extent
    }
    return false;
}

} // namespace

tensor tensor::from_storage(std::shared_ptr<isthmus::storage> st, isthmus::dtype dt, shape_t shape,
                            shape_t strides, int64_t offset) {
    ISTHMUS_CHECK(st != nullptr, value_error, "from_storage: null storage");
    const int64_t n = checked_numel(shape, isthmus::itemsize(dt), "from_storage");
    if (strides.empty() && !shape.empty()) strides = contiguous_strides(shape);
    ISTHMUS_CHECK(strides.size() == shape.size(), value_error, "from_storage: ", strides.size(),
                  " strides for ", shape.size(), " dimensions");
    ISTHMUS_CHECK(offset >= 0, value_error, "from_storage: negative offset ", offset);
    if (n > 0) {
        int64_t lo, hi;
        const auto cap = static_cast<int64_t>(st->nbytes() / isthmus::itemsize(dt));
        const bool fits = view_extent(shape, strides, lo, hi) &&
                          !__builtin_add_overflow(lo, offset, &lo) &&
                          !__builtin_add_overflow(hi, offset, &hi);
        ISTHMUS_CHECK(fits && lo >= 0 && hi < cap, value_error, "from_storage: a view of shape ",
                      shape_str(shape), " with strides ", shape_str(strides), " and offset ",
                      offset, " reaches outside its storage of ", cap, " ", dt, " elements");
    }
    const bool repeats = repeats_elements(shape, strides);
    tensor t(std::move(st), dt, std::move(shape), std::move(strides), offset);
    t.read_only_ = repeats; // See Note [read-only broadcast views]: every view of it too
    return t;
}

tensor tensor::wrap(void* data, isthmus::dtype dt, shape_t shape, shape_t strides,
                    resource_id resource, std::function<void()> release) {
    const int64_t n = checked_numel(shape, isthmus::itemsize(dt), "wrap");
    if (strides.empty()) strides = contiguous_strides(shape);
    ISTHMUS_CHECK(strides.size() == shape.size(), value_error, "wrap: ", strides.size(),
                  " strides for ", shape.size(), " dimensions");
    // The storage spans from the lowest to the highest element address.
    int64_t lo = 0, hi = 0;
    const auto isz = static_cast<int64_t>(isthmus::itemsize(dt));
    int64_t span_bytes = 0;
    if (n > 0)
        ISTHMUS_CHECK(view_extent(shape, strides, lo, hi) &&
                          !__builtin_mul_overflow(hi - lo + 1, isz, &span_bytes),
                      value_error, "wrap: the strides ", shape_str(strides), " of shape ",
                      shape_str(shape), " reach beyond the address space");
    const auto nbytes = static_cast<size_t>(span_bytes);
    char* start = static_cast<char*>(data) + lo * isz;
    const bool repeats = repeats_elements(shape, strides);
    // Nothing below throws once the storage owns `release` (See the contract in tensor.hpp).
    auto st = isthmus::storage::wrap(start, nbytes, resource, std::move(release));
    tensor t(std::move(st), dt, std::move(shape), std::move(strides), -lo);
    t.read_only_ = repeats; // See Note [read-only broadcast views]: every view of it too
    return t;
}

tensor tensor::from_host_bytes(const void* data, isthmus::dtype dt, shape_t shape) {
    tensor t = empty(shape, dt, MEMRESOURCE_CPU);
    void* p = t.lock(lock_mode::write, MEMRESOURCE_CPU);
    if (t.nbytes()) std::memcpy(p, data, t.nbytes());
    t.unlock(lock_mode::write, MEMRESOURCE_CPU);
    return t;
}

int64_t tensor::size(int64_t d) const {
    return shape_[static_cast<size_t>(wrap_axis(d, dim()))];
}
int64_t tensor::stride(int64_t d) const {
    return strides_[static_cast<size_t>(wrap_axis(d, dim()))];
}

bool tensor::is_contiguous() const noexcept {
    int64_t expected = 1;
    for (size_t i = shape_.size(); i-- > 0;) {
        if (shape_[i] == 0) return true;
        if (shape_[i] != 1 && strides_[i] != expected) return false;
        expected *= shape_[i];
    }
    return true;
}

bool tensor::is_dense() const noexcept {
    // (|stride|, size) of the non-trivial dimensions, sorted by stride without allocating.
    int64_t st[max_rank], sz[max_rank];
    int n = 0;
    for (size_t i = 0; i < shape_.size(); ++i) {
        if (shape_[i] == 0) return true;
        if (shape_[i] == 1) continue;
        int64_t s = std::abs(strides_[i]);
        int j = n++;
        for (; j > 0 && st[j - 1] > s; --j) {
            st[j] = st[j - 1];
            sz[j] = sz[j - 1];
        }
        st[j] = s;
        sz[j] = shape_[i];
    }
    int64_t expected = 1;
    for (int k = 0; k < n; ++k) {
        if (st[k] != expected) return false;
        expected *= sz[k];
    }
    return true;
}

bool tensor::covers_storage() const noexcept {
    if (!storage_ || nbytes() != storage_->nbytes()) return false;
    return is_contiguous() || is_dense(); // is_contiguous: the cheap test of every fresh output
}

// Note [read-only broadcast views]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// expand/broadcast_to give a dimension stride 0, so several of the view's elements are one
// memory location. Writing through such a view would silently write the source (E[0, 0] = 5
// changing every row), so, as NumPy marks broadcast_to's result read-only, every write path
// refuses it: the write locks themselves (tensor::lock with lock_mode::write or readwrite,
// which every host write goes through: assignment, fill, copy_from, plugin arguments), the op
// layer's output checks (which also cover device writes) and the exports, which mark the
// memory read-only (buffer protocol, __array_interface__, DLPack's read-only flag) or refuse
// where the protocol cannot say so. A view is read-only when its strides repeat an element
// or when it was taken from a view that does: expand, from_storage and wrap (which every import
// goes through: NumPy arrays, DLPack with stride 0 or overlapping strides, the CUDA array
// interface) set a flag that every further view keeps (views copy the handle), since E[0, 0]
// is a plain 0-d view yet writes every row of E. A copy
// (contiguous(), clone(), to()) is a new tensor and writable.
bool tensor::is_writable() const noexcept {
    if (read_only_) return false;
    for (size_t i = 0; i < shape_.size(); ++i)
        if (shape_[i] > 1 && strides_[i] == 0) return false;
    return true;
}

void tensor::check_writable(const char* what) const {
    ISTHMUS_CHECK(!read_only_, value_error, what,
                  ": assignment destination is read-only (a view of a broadcast view, whose "
                  "elements share memory; write into a copy, e.g. contiguous())");
    for (size_t i = 0; i < shape_.size(); ++i)
        ISTHMUS_CHECK(shape_[i] <= 1 || strides_[i] != 0, value_error, what,
                      ": assignment destination is read-only (a broadcast view of shape ",
                      shape_str(shape_), " repeats its elements along dimension ", i,
                      "; write into a copy, e.g. contiguous())");
}

// ---- copies ----

tensor tensor::contiguous() const {
    check_defined();
    return is_contiguous() ? *this : clone();
}

tensor tensor::clone() const {
    return to_contiguous_as(dtype_);
}

tensor tensor::to(isthmus::dtype dt, bool copy) const {
    check_defined();
    if (!copy && dt == dtype_) return *this;
    return to_contiguous_as(dt);
}

tensor tensor::to_contiguous_as(isthmus::dtype dt) const {
    check_defined();
    // Note [copies stay put]
    // ~~~~~~~~~~~~~~~~~~~~~~
    // The copy is made where the data is (a device with a backend keeps it on the device), else on
    // the CPU.
    const resource_id loc = location();
    tensor out = empty(shape_, dt, backend::has_compute(loc) ? loc : MEMRESOURCE_CPU);
    out.copy_from(*this);
    // See Note [recording at the op layer]: contiguous(), clone() and to() pass the gradient
    // through (cast back to this dtype by the engine).
    if (autograd::needs_record(*this)) [[unlikely]]
        return autograd::copy_recorded(dt == dtype_ ? "clone" : "to", *this, out);
    return out;
}

void tensor::copy_from(const tensor& src) {
    check_defined();
    src.check_defined();
    check_writable("copy_from");
    autograd::check_inplace("copy_from", *this);
    // NumPy's assignment rule: leading size-1 dimensions of the source beyond the target's rank
    // are dropped (A[..., 1] = [[1, 2]] on a (2, 3) A). The views below are not recorded.
    tensor s = autograd::meta_access::plain(src);
    while (s.dim() > dim() && s.shape()[0] == 1) s = s.squeeze(0);
    s = s.expand(shape_);
    if (numel() == 0) return;
    // Note [overlapping copies]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~
    // When both views share a storage, copy through a temporary so that writes never feed later
    // reads.
    if (s.storage_ == storage_) s = s.clone();
    ops::run_copy(*this, s); // where the scheduling rule says (Note [one dispatch])
}

void tensor::fill(double v) {
    check_defined();
    check_writable("fill");
    isthmus::fill(*this, scalar(v)); // the vectorised fill kernel, not a broadcast copy
}

// ---- memory ----

void* tensor::lock(lock_mode mode, resource_id resource) const {
    check_defined();
    if (mode != lock_mode::read && !is_writable()) check_writable("lock");
    // Note [partial writes]
    // ~~~~~~~~~~~~~~~~~~~~~
    // A view that does not cover its whole storage must not invalidate the bytes it does not touch,
    // so its write lock reads the rest in first.
    if (mode == lock_mode::write && !covers_storage()) mode = lock_mode::readwrite;
    char* base = static_cast<char*>(storage_->lock(mode, resource));
    return base + offset_ * static_cast<int64_t>(itemsize());
}

void tensor::unlock(lock_mode mode, resource_id resource) const {
    check_defined();
    if (mode == lock_mode::write && !covers_storage()) mode = lock_mode::readwrite;
    storage_->unlock(mode, resource);
}

void* tensor::pin(resource_id resource) const {
    check_defined();
    char* base = static_cast<char*>(storage_->pin(resource));
    return base + offset_ * static_cast<int64_t>(itemsize());
}

resource_id tensor::location() const {
    check_defined();
    resource_id p = storage_->pinned_to();
    if (p >= 0) return p;
    const resource_id def = default_resource();
    if (storage_->valid_on(def)) return def; // the common case, without the list below
    auto valid = storage_->valid_resources();
    return valid.empty() ? MEMRESOURCE_CPU : valid.front();
}

void tensor::read_elements_as(isthmus::dtype dt, void* out) const {
    if (numel() == 0) return;
    tensor dst =
        from_storage(storage::wrap(out, numel() * isthmus::itemsize(dt), MEMRESOURCE_CPU, nullptr),
                     dt, shape_, {}, 0);
    dst.copy_from(*this);
}

std::ostream& operator<<(std::ostream& os, const tensor& t) {
    return os << t.to_string();
}

} // namespace isthmus
