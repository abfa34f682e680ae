// The CPU backend's elementwise, fill, copy, random and sequence entries, and its one instance.
#include "cpu/backend.hpp"

#include "cpu/convert.hpp"
#include "cpu/copy.hpp"
#include "cpu/elementwise_exec.hpp"
#include "cpu/fill.hpp"
#include "cpu/random.hpp"
#include "kernels/element_functions.hpp"
#include "ops/dispatch.hpp"

#include <cstring>

namespace isthmus::cpu {

namespace {

// Stride 0 for every dimension of any rank, shared by all scalar operands (no allocation).
const shape_t& zero_strides() {
    static const shape_t zeros(max_rank, 0);
    return zeros;
}

// Note [fma contraction]
// ~~~~~~~~~~~~~~~~~~~~~~
// x * y + z rather than std::fma: without FMA in the target ISA, std::fma is an exact but slow libm
// call; the compiler contracts x * y + z where FMA exists. Half types arrive as float32
// (Note [half compute]): computed in float, rounded once on store. Integers wrap
// (Note [element functions once]).
template <typename T>
T mul_add(T x, T y, T z) {
    if constexpr (std::is_same_v<T, bool>)
        return (x && y) || z;
    else if constexpr (std::is_integral_v<T>)
        return elem::wrap_add(elem::wrap_mul(x, y), z);
    else
        return static_cast<T>(x * y + z);
}

template <typename T>
void fma_loop(char** p, const int64_t* s, int64_t n) {
    constexpr auto sz = static_cast<int64_t>(sizeof(T));
    if (s[0] == sz && s[1] == sz && s[2] == sz && s[3] == sz) {
        T* o = reinterpret_cast<T*>(p[0]);
        const T* x = reinterpret_cast<const T*>(p[1]);
        const T* y = reinterpret_cast<const T*>(p[2]);
        const T* z = reinterpret_cast<const T*>(p[3]);
        for (int64_t i = 0; i < n; ++i) o[i] = mul_add(x[i], y[i], z[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            mul_add(*reinterpret_cast<const T*>(p[1] + i * s[1]),
                    *reinterpret_cast<const T*>(p[2] + i * s[2]),
                    *reinterpret_cast<const T*>(p[3] + i * s[3]));
}

loop_fn fma_loop_for(dtype k) {
    ISTHMUS_DISPATCH(k, T, {
        if constexpr (!is_half_v<T>) return &fma_loop<T>;
    });
    ISTHMUS_ASSERT(false, "no CPU fma kernel for ", k);
}

// The exact value of one element as a scalar of its kind.
template <typename T>
scalar scalar_of(const void* p) {
    T x;
    std::memcpy(&x, p, sizeof(T));
    if constexpr (std::is_same_v<T, bool>)
        return scalar(x);
    else if constexpr (is_complex_v<T>)
        return scalar(complex128_t(x));
    else if constexpr (is_half_v<T>)
        return scalar(static_cast<double>(static_cast<float>(x)));
    else if constexpr (std::is_floating_point_v<T>)
        return scalar(static_cast<double>(x));
    else if constexpr (std::is_signed_v<T>)
        return scalar(static_cast<int64_t>(x));
    else
        return scalar(static_cast<uint64_t>(x));
}

// The scalar a fill operand holds: its stored value read back in the scalar's exact kind, which
// cpu::fill converts back to the same bits (every dtype's values are exact in that kind).
scalar stored_scalar(const backend::operand& v) {
    ISTHMUS_DISPATCH(v.dt, T, { return scalar_of<T>(v.value); });
    ISTHMUS_ASSERT(false, "fill: dtype ", v.dt);
}

// True when `strides` walk `shape` in C order with no gaps (size-1 dimensions ignored).
bool row_major(const shape_t& shape, const shape_t& strides) {
    int64_t expected = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        if (shape[i] != 1 && strides[i] != expected) return false;
        expected *= shape[i];
    }
    return true;
}

// The kernel of a binary or unary op on kernel dtype k, looked up once per call in the family the
// op table's rule column names (cpu/elementwise_exec.hpp).
kernel binary_kernel_of(binary_op op, dtype k) {
    kernel kl;
    if (is_divmod_family(op))
        kl = divmod_kernel(op, k);
    else if (is_compare_family(op))
        kl = compare_kernel(op, k);
    else if (is_bitwise_family(op))
        kl = bitwise_kernel(op, k);
    else
        kl = arith_kernel(op, k);
    ISTHMUS_ASSERT(kl.fn != nullptr, "no CPU kernel for ", isthmus::name(op), " on ", k);
    return kl;
}

kernel unary_kernel_of(unary_op op, dtype k) {
    const kernel kl = is_math_family(op) ? math_kernel(op, k) : basic_kernel(op, k);
    ISTHMUS_ASSERT(kl.fn != nullptr, "no CPU kernel for ", isthmus::name(op), " on ", k);
    return kl;
}

// Note [small-op fast path]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A 1k-element op spends more in the strided executor's set-up (the plan, its per-chunk divisions,
// OpenMP's thread queries) than in its loop. When every operand already has the kernel's dtype and
// is dense in C order (or a scalar) and the op is below the kernel's threading grain, the executor
// would run the loop once over all elements with unit strides (stride 0 for scalars); this calls
// the loop that way directly. Anything else goes through the executor (run_kernel).
template <size_t N>
bool run_direct(const kernel& kl, dtype k, const shape_t& shape,
                const std::array<const backend::operand*, N>& ops) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (n >= kl.grain || n == 0) return false;
    char* p[N];
    int64_t s[N];
    for (size_t i = 0; i < N; ++i) {
        const backend::operand& o = *ops[i];
        if (o.dt != (i == 0 ? kl.out : k)) return false;
        if (o.data) {
            if (!row_major(shape, *o.strides)) return false;
            p[i] = const_cast<char*>(static_cast<const char*>(o.data));
            s[i] = static_cast<int64_t>(itemsize(o.dt));
        } else {
            p[i] = const_cast<char*>(reinterpret_cast<const char*>(o.value));
            s[i] = 0;
        }
    }
    kl.fn(p, s, n);
    return true;
}

} // namespace

operand kernel_operand(const backend::operand& o) {
    if (!o.data)
        return {const_cast<char*>(reinterpret_cast<const char*>(o.value)), o.dt, &zero_strides()};
    return {const_cast<char*>(static_cast<const char*>(o.data)), o.dt, o.strides};
}

std::string cpu_compute::name() const {
    return "cpu";
}

unsigned cpu_compute::features() const noexcept {
    return backend::mixed_dtypes | backend::strided_reduce | backend::strided_matmul |
           backend::host_index_rows;
}

bool cpu_compute::supports_binary(binary_op, dtype) const {
    return true;
}

void cpu_compute::binary(binary_op op, dtype dt, const shape_t& shape, const backend::operand& out,
                         const backend::operand& a, const backend::operand& b) {
    const dtype k = kernel_dtype(dt);
    const kernel kl = binary_kernel_of(op, k);
    if (run_direct<3>(kl, k, shape, {&out, &a, &b})) return;
    run_kernel<3>(shape, {kernel_operand(out), kernel_operand(a), kernel_operand(b)},
                  {kl.out, k, k}, kl.fn, kl.grain);
}

bool cpu_compute::supports_unary(unary_op, dtype) const {
    return true;
}

void cpu_compute::unary(unary_op op, dtype dt, const shape_t& shape, const backend::operand& out,
                        const backend::operand& a) {
    const dtype k = kernel_dtype(dt);
    const kernel kl = unary_kernel_of(op, k);
    if (run_direct<2>(kl, k, shape, {&out, &a})) return;
    run_kernel<2>(shape, {kernel_operand(out), kernel_operand(a)}, {kl.out, k}, kl.fn, kl.grain);
}

bool cpu_compute::supports_ternary(backend::ternary_op op, dtype dt) const {
    return op != backend::ternary_op::clamp || !is_complex(dt);
}

void cpu_compute::ternary(backend::ternary_op op, dtype dt, const shape_t& shape,
                          const backend::operand& out, const backend::operand& a,
                          const backend::operand& b, const backend::operand& c) {
    const operand o = kernel_operand(out), x = kernel_operand(a), y = kernel_operand(b),
                  z = kernel_operand(c);
    switch (op) {
    case backend::ternary_op::where:
        // cpu::where converts b and c to out's dtype: the op's dtype here
        ISTHMUS_ASSERT(out.dt == dt, "cpu where: output ", out.dt, " for dtype ", dt);
        cpu::where(shape, o, x, y, z);
        return;
    case backend::ternary_op::clamp:
        cpu::clamp(dt, shape, o, x, y, z);
        return;
    case backend::ternary_op::fma: {
        const dtype k = kernel_dtype(dt);
        run_kernel<4>(shape, {o, x, y, z}, {k, k, k, k}, fma_loop_for(k), parallel_grain);
        return;
    }
    }
}

bool cpu_compute::supports_fill(dtype) const {
    return true;
}

void cpu_compute::fill(const tensor& out, void* out_data, const backend::operand& value) {
    cpu::fill(out, out_data, stored_scalar(value));
}

bool cpu_compute::supports_copy(dtype, dtype) const {
    return true;
}

void cpu_compute::copy(const tensor& out, void* out_data, const tensor& in, const void* in_data) {
    copy_cast(out, out_data, in, in_data);
}

bool cpu_compute::supports_random(dtype dt, bool integer) const {
    return integer ? !is_complex(dt) : is_floating(dt);
}

void cpu_compute::random_real(dtype dt, bool normal, void* data, int64_t n, uint64_t seed,
                              uint64_t first_block, double a, double b) {
    cpu::random_real(dt, normal, data, n, seed, first_block, a, b);
}

void cpu_compute::random_int(dtype dt, void* data, int64_t n, uint64_t seed, uint64_t first_block,
                             int64_t lo, uint64_t range) {
    cpu::random_int(dt, data, n, seed, first_block, lo, range);
}

bool cpu_compute::supports_linear(dtype dt) const {
    return !is_complex(dt);
}

void cpu_compute::linear(dtype dt, void* data, int64_t n, const backend::linear_spec& seq) {
    if (seq.exact)
        fill_linear_int(dt, data, n, seq.istart, seq.istep);
    else
        fill_linear(dt, data, n, seq.start, seq.step, seq.floor_ints);
}

} // namespace isthmus::cpu
