// Tensor operations: creation (zeros, ones, full, arange, linspace, eye, copy) and random numbers.
#pragma once

#include "isthmus/config.hpp"
#include "isthmus/export.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <atomic>
#include <cstdint>
#include <optional>

namespace isthmus {

// ---- filled tensors ----

/// A tensor of `shape` filled with zeros, on `resource` (MEMRESOURCE_DEVICE0 = default device).
ISTHMUS_API tensor zeros(const shape_t& shape, dtype dt = scalar_dtype(),
                         resource_id resource = MEMRESOURCE_DEVICE0);
/// A tensor of `shape` filled with ones.
ISTHMUS_API tensor ones(const shape_t& shape, dtype dt = scalar_dtype(),
                        resource_id resource = MEMRESOURCE_DEVICE0);
/// A tensor of `shape` filled with `value` converted to `dt` (as a cast would). Without `dt` the
/// dtype follows the value's kind: bool, int64, scalar_dtype() or cscalar_dtype().
ISTHMUS_API tensor full(const shape_t& shape, const scalar& value,
                        std::optional<dtype> dt = std::nullopt,
                        resource_id resource = MEMRESOURCE_DEVICE0);
/// An uninitialised tensor (tensor::empty; the PyQuasar manual's `uninit`).
ISTHMUS_API tensor uninit(const shape_t& shape, dtype dt = scalar_dtype(),
                          resource_id resource = MEMRESOURCE_DEVICE0);

/// zeros / ones / full / uninit with the shape and dtype of `t` (dtype overridable).
ISTHMUS_API tensor zeros_like(const tensor& t, std::optional<dtype> dt = std::nullopt);
ISTHMUS_API tensor ones_like(const tensor& t, std::optional<dtype> dt = std::nullopt);
ISTHMUS_API tensor full_like(const tensor& t, const scalar& value,
                             std::optional<dtype> dt = std::nullopt);
ISTHMUS_API tensor uninit_like(const tensor& t, std::optional<dtype> dt = std::nullopt);

/// Sets every element of `t` (any layout) to `value`, converted to t's dtype (as a cast would).
/// Multi-threaded and vectorised: the fast way to fill.
ISTHMUS_API void fill(const tensor& t, const scalar& value);

// ---- ranges ----

/// NumPy's arange: the values start, start + step, ... below `stop` (above it for a negative
/// step); length ceil((stop - start) / step). Without `dt`: int64 when start, stop and step are
/// all integers (or bools), else scalar_dtype(). A zero step raises value_error, complex
/// arguments type_error.
ISTHMUS_API tensor arange(const scalar& start, const scalar& stop, const scalar& step = scalar(1),
                          std::optional<dtype> dt = std::nullopt,
                          resource_id resource = MEMRESOURCE_DEVICE0);
/// arange(0, stop, 1).
ISTHMUS_API tensor arange(const scalar& stop, std::optional<dtype> dt = std::nullopt,
                          resource_id resource = MEMRESOURCE_DEVICE0);
/// `num` evenly spaced values from `start` to `stop` (excluded when `endpoint` is false),
/// computed in float64 and converted (integer dtypes round toward -inf, as NumPy 2).
ISTHMUS_API tensor linspace(double start, double stop, int64_t num, bool endpoint = true,
                            dtype dt = scalar_dtype(), resource_id resource = MEMRESOURCE_DEVICE0);
/// An n x m matrix (m defaults to n) with ones on diagonal k (0 main, > 0 above, < 0 below).
ISTHMUS_API tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
                       dtype dt = scalar_dtype(), resource_id resource = MEMRESOURCE_DEVICE0);
/// A C-contiguous copy of `t` (tensor::clone).
ISTHMUS_API tensor copy(const tensor& t);

// ---- random numbers ----

/// A seedable source of random numbers: Philox4x32-10, counter based.
///
/// Note [counter-based random numbers]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// Each 128-bit Philox block is a pure function of (seed, block index): key = (seed low 32 bits,
/// seed high 32 bits), counter = (index low, index high, 0, 0). A draw of n elements reserves a run
/// of blocks starting at the generator's offset, and element i takes 32-bit words i * w .. i * w +
/// w - 1 of that run (word j is lane j % 4 of block offset + j / 4), w = 1 for float32 / float16 /
/// bfloat16 values and 2 for float64 values and integers (complex: per real component). Uniforms
/// use the top 24 (53 for float64) bits; normals pair consecutive elements through Box-Muller;
/// integers map 64 bits onto the range by multiply-shift. So every element depends only on (seed,
/// offset, i): results are identical across runs, thread counts and, later, devices. The offset
/// advances by the blocks used, so consecutive draws differ. Draws from several threads are safe
/// (reserve is atomic); reseeding while another thread draws is not.
class ISTHMUS_API generator {
public:
    /// The seed a fresh generator (and the default one) starts from.
    static constexpr uint64_t default_seed = 67280421310721ull;

    explicit generator(uint64_t seed = default_seed) : seed_(seed) {}
    generator(const generator& o) : seed_(o.seed_), offset_(o.offset_.load()) {}
    generator& operator=(const generator& o) {
        seed_ = o.seed_;
        offset_.store(o.offset_.load());
        return *this;
    }

    /// Restarts the stream: sets the seed and resets the offset to 0.
    void manual_seed(uint64_t seed) {
        seed_ = seed;
        offset_.store(0);
    }
    uint64_t seed() const noexcept { return seed_; }
    /// The next unused Philox block; with seed() the whole state (save and restore it to replay).
    uint64_t offset() const noexcept { return offset_.load(); }
    void set_offset(uint64_t blocks) noexcept { offset_.store(blocks); }
    /// Reserves `blocks` Philox blocks and returns the first (thread-safe).
    uint64_t reserve(uint64_t blocks) noexcept { return offset_.fetch_add(blocks); }

private:
    uint64_t seed_;
    std::atomic<uint64_t> offset_{0};
};

/// The process-wide generator that random functions use when given none.
ISTHMUS_API generator& default_generator();
/// Seeds the default generator (and resets its offset).
ISTHMUS_API void manual_seed(uint64_t seed);

/// Uniform values in [0, 1) of a floating or complex dtype (complex: real and imaginary parts
/// each uniform). Integer dtypes raise type_error.
ISTHMUS_API tensor rand(const shape_t& shape, dtype dt = scalar_dtype(), generator* gen = nullptr,
                        resource_id resource = MEMRESOURCE_DEVICE0);
/// Uniform values in [lo, hi) (lo <= hi, both finite; value_error otherwise).
ISTHMUS_API tensor uniform(const shape_t& shape, double lo, double hi, dtype dt = scalar_dtype(),
                           generator* gen = nullptr, resource_id resource = MEMRESOURCE_DEVICE0);
/// Standard normal values (Box-Muller). Complex dtypes get independent real and imaginary
/// parts of variance 1/2 each (total variance 1), as PyTorch.
ISTHMUS_API tensor randn(const shape_t& shape, dtype dt = scalar_dtype(), generator* gen = nullptr,
                         resource_id resource = MEMRESOURCE_DEVICE0);
/// Normal values with the given mean and standard deviation (std >= 0).
ISTHMUS_API tensor normal(const shape_t& shape, double mean, double std, dtype dt = scalar_dtype(),
                          generator* gen = nullptr, resource_id resource = MEMRESOURCE_DEVICE0);
/// Uniform integers in [lo, hi) stored as `dt` (an integer, bool or floating dtype); the range
/// must be non-empty and representable in `dt` (value_error otherwise).
ISTHMUS_API tensor randint(int64_t lo, int64_t hi, const shape_t& shape, dtype dt = dtype::int64,
                           generator* gen = nullptr, resource_id resource = MEMRESOURCE_DEVICE0);

} // namespace isthmus
