// The CUDA kernels' element functions (binary, unary, casts) run on the host against the CPU's.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "cuda_semantics_helpers.cuh"

using namespace semantics_helpers;

// Note [element semantics test]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The kernels of core/src/cuda compute each element with host-and-device functions (bapply, uapply,
// convert, the random maps). This suite calls those same functions on the host, element by element
// over CPU tensors, and compares with the CPU ops: the GPU's arithmetic, casting and random streams
// are checked on machines without a GPU. What it cannot check (indexing, vector loads, reductions,
// launches) is covered by test_cuda_ops.cpp on a GPU.

namespace {

// ---- binary ----

// The op layer's binary_op for each kernel op (the same names).
binary_op op_of(k::bop op) {
    static const binary_op table[] = {
        binary_op::add,         binary_op::sub,         binary_op::mul,
        binary_op::div,         binary_op::floor_div,   binary_op::mod,
        binary_op::pow,         binary_op::maximum,     binary_op::minimum,
        binary_op::atan2,       binary_op::eq,          binary_op::ne,
        binary_op::lt,          binary_op::le,          binary_op::gt,
        binary_op::ge,          binary_op::logical_and, binary_op::logical_or,
        binary_op::logical_xor, binary_op::bit_and,     binary_op::bit_or,
        binary_op::bit_xor,     binary_op::shift_left,  binary_op::shift_right};
    return table[static_cast<int>(op)];
}

template <k::bop OP, k::kdt K>
void check_binary(dtype dt) {
    if constexpr (k::binary_ok(OP, K)) {
        const binary_op op = op_of(OP);
        const std::string what = std::string(name(op)) + " on " + std::string(name(dt));
        tensor a = values(dt, 64, 1), b = values(dt, 64, 2);
        if (OP == k::bop::pow && k::is_int(K)) b = mod(b, 8); // exponents in [0, 8)
        if constexpr (k::is_cplx(K)) {
            // every special pair against a shuffled copy, and (for pow) against exponents that
            // take the CPU's integer-power path or not
            a = complex_values(dt, 1);
            std::vector<complex128_t> e;
            const std::vector<complex128_t> exps = {
                {2, 0},    {-2, 0}, {3, -0.0}, {-1, 0}, {0, 0},   {0.5, 0}, {2.5, 0},
                {-1.5, 0}, {1, 1},  {0, -1},   {99, 0}, {100, 0}, {-7, 0},  {1.5, -0.5}};
            const auto shuffled = raw<complex128_t>(complex_values(dtype::complex128, 2));
            for (size_t i = 0; i < shuffled.size(); ++i)
                e.push_back(OP == k::bop::pow && i % 3 != 0 ? exps[i % exps.size()]
                                                            : shuffled[(i * 37) % shuffled.size()]);
            b = tensor::from_vector(e).to(dt);
        }
        tensor ref;
        try {
            ref = binary(op, a, b);
        } catch (const type_error&) {
            FAIL("the GPU has a kernel the CPU refuses: " << what);
            return;
        }
        // the op layer computes in dt for every pair that reaches this kernel
        const bool to_bool = k::binary_gives_bool(OP);
        REQUIRE(ref.dtype() == (to_bool ? dtype::bool_ : dt));
        using S = k::storage_t<K>;
        using O = std::conditional_t<k::binary_gives_bool(OP), unsigned char, S>;
        const auto x = raw<S>(a), y = raw<S>(b);
        std::vector<O> out(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            const auto r = k::bapply<OP, K>(k::up<K>(x[i]), k::up<K>(y[i]));
            if constexpr (k::binary_gives_bool(OP))
                out[i] = r;
            else
                out[i] = k::down<K>(r);
        }
        tensor got;
        if constexpr (k::binary_gives_bool(OP))
            got = from_raw<k::kdt::b8>(out, dtype::bool_);
        else
            got = from_raw<K>(out, dt);
        // elementary arithmetic is exact; pow/atan2 and complex division go through libm or
        // a different division formula
        double tol = 0;
        if (OP == k::bop::pow || OP == k::bop::atan2 || (OP == k::bop::div && k::is_cplx(K)))
            tol = dt == dtype::float16 || dt == dtype::bfloat16 ? 1e-2 : 1e-6;
        if (OP == k::bop::pow && K == k::kdt::c128) tol = 1e-12;
        check_values(got, ref, tol, what);
    }
}

template <k::kdt K>
void check_binaries(dtype dt) {
#define ISTHMUS_OP(X, ...) check_binary<k::bop::X, K>(dt);
    ISTHMUS_BINARY_OPS(ISTHMUS_OP)
#undef ISTHMUS_OP
}

// ---- unary ----

template <k::uop OP, k::kdt K>
void check_unary(unary_op op, dtype dt) {
    if constexpr (k::unary_ok(OP, K)) {
        const std::string what = std::string(name(op)) + " on " + std::string(name(dt));
        const tensor a = k::is_cplx(K) ? complex_values(dt, 3) : values(dt, 64, 3);
        tensor ref;
        try {
            ref = unary(op, a);
        } catch (const type_error&) {
            FAIL("the GPU has a kernel the CPU refuses: " << what);
            return;
        }
        constexpr k::kdt RK = k::unary_result(OP, K);
        REQUIRE(kernel_type(ref.dtype()) == RK);
        using S = k::storage_t<K>;
        using O = k::storage_t<RK>;
        const auto x = raw<S>(a);
        std::vector<O> out(x.size());
        for (size_t i = 0; i < x.size(); ++i) {
            if constexpr (RK == K)
                out[i] = k::down<K>(k::uapply<OP, K>(k::up<K>(x[i])));
            else
                out[i] = static_cast<O>(k::uapply<OP, K>(k::up<K>(x[i])));
        }
        const bool exact = op == unary_op::neg || op == unary_op::sign || op == unary_op::floor ||
                           op == unary_op::ceil || op == unary_op::round ||
                           op == unary_op::logical_not || op == unary_op::bit_not ||
                           op == unary_op::conj || op == unary_op::isnan || op == unary_op::isinf ||
                           op == unary_op::isfinite || (!k::is_cplx(K) && op == unary_op::abs);
        const double tol = exact                                            ? 0
                           : dt == dtype::float16 || dt == dtype::bfloat16  ? 1e-2
                           : dt == dtype::complex128 && k::complex_math(OP) ? 1e-12
                                                                            : 1e-6;
        check_values(from_raw<RK>(out, ref.dtype()), ref, tol, what);
    }
}

template <k::kdt K>
void check_unaries(dtype dt) {
#define ISTHMUS_OP(X, ...) check_unary<k::uop::X, K>(unary_op::X, dt);
    ISTHMUS_UNARY_OPS(ISTHMUS_OP)
#undef ISTHMUS_OP
}

// ---- casts ----

template <k::kdt O, k::kdt I>
void check_cast(dtype to, dtype from) {
    // scaled past the small types' ranges (in float64 or complex128, then cast)
    const dtype wide = is_complex(from) ? dtype::complex128 : dtype::float64;
    const tensor src =
        is_bool(from) ? values(from, 64, 4) : mul(values(from, 64, 4).to(wide), 1000.0).to(from);
    const auto x = raw<k::storage_t<I>>(src);
    std::vector<k::storage_t<O>> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = k::convert<O, I>(x[i]);
    check_values(from_raw<O>(out, to), src.to(to), 0,
                 "cast " + std::string(name(from)) + " -> " + std::string(name(to)));
}

template <k::kdt O>
void check_casts_to(dtype to) {
    for (dtype from : every_dtype)
        ISTHMUS_KDT_DISPATCH(kernel_type(from), (check_cast<O, K>(to, from)))
}

} // namespace

TEST_CASE("cuda kernels on the host: binary ops equal the CPU's on every dtype") {
    for (dtype dt : every_dtype) ISTHMUS_KDT_DISPATCH(kernel_type(dt), check_binaries<K>(dt))
}

TEST_CASE("cuda kernels on the host: every op the CPU has for a dtype has a GPU kernel") {
    // the supports_* table covers the op layer's signatures, except where noted in docs/cuda.md
    for (dtype dt : every_dtype) {
        for (int o = 0; o <= static_cast<int>(k::bop::shift_right); ++o) {
            const auto op = static_cast<k::bop>(o);
            dtype res;
            try {
                res = result_type(op_of(op), dt, dt);
            } catch (const type_error&) {
                continue;
            }
            // the op layer's compute dtype is dt unless it widens (div of ints, atan2 of ints,
            // bool arithmetic): those reach the kernels in another dtype
            if (res != dt && res != dtype::bool_) continue;
            if (is_bool(dt) && op != k::bop::eq && op != k::bop::ne && op != k::bop::lt &&
                op != k::bop::le && op != k::bop::gt && op != k::bop::ge &&
                op != k::bop::logical_and && op != k::bop::logical_or &&
                op != k::bop::logical_xor && op != k::bop::bit_and && op != k::bop::bit_or &&
                op != k::bop::bit_xor)
                continue; // bool add/mul/max/min run as logical ops
            INFO(name(op_of(op)), " on ", name(dt));
            CHECK(k::binary_ok(op, kernel_type(dt)));
        }
    }
}

TEST_CASE("cuda kernels on the host: every unary op the CPU has for a float or complex dtype has a "
          "GPU kernel") {
    for (dtype dt : every_dtype) {
        if (!is_floating(dt) && !is_complex(dt)) continue;
#define ISTHMUS_OP(X, ...)                                                                         \
    try {                                                                                          \
        (void)result_type(unary_op::X, dt);                                                        \
        INFO(name(unary_op::X), " on ", name(dt));                                                 \
        /* conj of a real: a copy; logical_not, bit_not: of the bool / integer conversion */       \
        if ((unary_op::X != unary_op::conj || is_complex(dt)) &&                                   \
            unary_op::X != unary_op::logical_not && unary_op::X != unary_op::bit_not)              \
            CHECK(k::unary_ok(k::uop::X, kernel_type(dt)));                                        \
    } catch (const type_error&) {                                                                  \
    }
        ISTHMUS_UNARY_OPS(ISTHMUS_OP)
#undef ISTHMUS_OP
    }
}

TEST_CASE("cuda kernels on the host: unary ops equal the CPU's on every dtype") {
    for (dtype dt : every_dtype) ISTHMUS_KDT_DISPATCH(kernel_type(dt), check_unaries<K>(dt))
}

TEST_CASE("cuda kernels on the host: casts between every pair of dtypes equal the CPU's") {
    for (dtype to : every_dtype) ISTHMUS_KDT_DISPATCH(kernel_type(to), check_casts_to<K>(to))
}
