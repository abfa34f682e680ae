// The CUDA kernels' random maps run on the host against the CPU's random streams.
#include <doctest/doctest.h>

#include "cuda_semantics_helpers.cuh"

using namespace semantics_helpers;

namespace {

template <k::kdt K>
tensor real32_draw(bool normal, int64_t n, uint64_t seed, uint64_t first, double a, double b,
                   dtype dt) {
    if constexpr (K == k::kdt::f16 || K == k::kdt::bf16 || K == k::kdt::f32) {
        std::vector<k::storage_t<K>> out(static_cast<size_t>(n));
        const auto p = k::make_real32<K>(a, b);
        for (int64_t blk = 0; blk < (n + 3) / 4; ++blk)
            k::real32_block<K>(out.data(), normal, n, seed, first, blk, p);
        return from_raw<K>(out, dt);
    } else {
        std::vector<double> out(static_cast<size_t>(n));
        for (int64_t blk = 0; blk < (n + 1) / 2; ++blk)
            k::real64_block(out.data(), normal, n, seed, first, blk, a, b);
        return from_raw<k::kdt::f64>(out, dt);
    }
}

template <k::kdt K>
tensor int_draw(int64_t n, uint64_t seed, uint64_t first, int64_t lo, int64_t hi, dtype dt) {
    std::vector<k::storage_t<K>> out(static_cast<size_t>(n));
    for (int64_t blk = 0; blk < (n + 1) / 2; ++blk)
        k::int_block<K>(out.data(), n, seed, first, blk, lo, static_cast<uint64_t>(hi - lo));
    return from_raw<K>(out, dt);
}

} // namespace

TEST_CASE("cuda kernels on the host: random streams equal the CPU's for the same seed") {
    const uint64_t seed = 987654321, first = 5;
    const int64_t n = 1003; // odd: a partial last block
    auto cpu_gen = [&] {
        generator g(seed);
        g.set_offset(first);
        return g;
    };
    for (dtype dt : {dtype::float16, dtype::bfloat16, dtype::float32, dtype::float64})
        for (bool normal : {false, true}) {
            generator g = cpu_gen();
            const double a = normal ? 0.5 : -1.0, b = normal ? 2.0 : 3.0;
            const tensor ref = normal ? isthmus::normal({n}, a, b, dt, &g, MEMRESOURCE_CPU)
                                      : uniform({n}, a, b, dt, &g, MEMRESOURCE_CPU);
            tensor got;
            if (dt == dtype::float16)
                got = real32_draw<k::kdt::f16>(normal, n, seed, first, a, b, dt);
            else if (dt == dtype::bfloat16)
                got = real32_draw<k::kdt::bf16>(normal, n, seed, first, a, b, dt);
            else if (dt == dtype::float32)
                got = real32_draw<k::kdt::f32>(normal, n, seed, first, a, b, dt);
            else
                got = real32_draw<k::kdt::f64>(normal, n, seed, first, a, b, dt);
            // the same libm on the host: normals are exact here too
            check_values(got, ref, 0,
                         std::string(normal ? "normal " : "uniform ") + std::string(name(dt)));
        }
    for (dtype dt : {dtype::bool_, dtype::int8, dtype::uint16, dtype::int64, dtype::uint64,
                     dtype::float16, dtype::float32}) {
        const int64_t lo = is_bool(dt) ? 0 : (is_unsigned_int(dt) ? 3 : -7);
        const int64_t hi = is_bool(dt) ? 2 : 120;
        generator g = cpu_gen();
        const tensor ref = randint(lo, hi, {n}, dt, &g, MEMRESOURCE_CPU);
        tensor got;
        ISTHMUS_KDT_DISPATCH(kernel_type(dt), (got = int_draw<K>(n, seed, first, lo, hi, dt)))
        check_values(got, ref, 0, "randint " + std::string(name(dt)));
    }
}
