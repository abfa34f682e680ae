// The CUDA code's index arithmetic, launch sizes and stream rules, run on the host (no GPU needed).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "boundary/exchange_streams.hpp"
#include "cuda/cumulative.cuh"
#include "cuda/elementwise_common.cuh"
#include "cuda/index.cuh"

#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/plugin.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace k = isthmus::cudak;

// Note [host logic test]
// ~~~~~~~~~~~~~~~~~~~~~~
// The kernels' per-thread steps are __host__ __device__ functions (cumulative.cuh, index.cuh,
// plugin.hpp's position_of); this suite runs them on the host, thread by thread and phase by phase
// in the order the kernels' barriers and launches impose, against plain sequential references. What
// only a GPU shows (races, the launch itself, the hardware's rounding) stays with
// tests/cuda/test_cuda_ops.cpp and tests/python/core/test_cuda.py.

namespace {

// ---- the cumulative scan ----

// Runs the three passes of Note [gpu cumulative] on the host, exactly as launch_cumulative
// orders them (pass 2 serial per line or by blocks of k::cum_block threads).
template <bool PROD, k::kdt K>
std::vector<k::storage_t<K>> host_scan(int64_t pre, int64_t len, int64_t post,
                                       const std::vector<k::storage_t<K>>& in) {
    using A = k::storage_t<k::cum_acc_kdt<K>>;
    const k::cum_geometry g = k::cumulative_geometry(pre, len, post);
    std::vector<k::storage_t<K>> out(in.size());
    const int64_t threads = g.lines() * g.chunks;
    std::vector<A> partial(static_cast<size_t>(threads));
    if (g.chunks > 1) {
        for (int64_t t = 0; t < threads; ++t)
            partial[static_cast<size_t>(t)] = k::cum_chunk_total<PROD, K>(g, in.data(), t);
        if (g.chunks <= k::cum_serial_chunks) {
            for (int64_t line = 0; line < g.lines(); ++line)
                k::cum_line_prefixes<PROD>(g, partial.data(), line);
        } else {
            std::vector<A> seg(k::cum_block);
            for (int64_t line = 0; line < g.lines(); ++line) {
                for (int tid = 0; tid < k::cum_block; ++tid) // before the first barrier
                    seg[static_cast<size_t>(tid)] =
                        k::cum_segment_total<PROD>(g, partial.data(), line, tid, k::cum_block);
                k::cum_exclusive<PROD>(seg.data(), k::cum_block); // thread 0, between barriers
                for (int tid = 0; tid < k::cum_block; ++tid)      // after the second barrier
                    k::cum_segment_rewrite<PROD>(g, partial.data(), line, tid, k::cum_block,
                                                 seg[static_cast<size_t>(tid)]);
            }
        }
    }
    for (int64_t t = 0; t < threads; ++t)
        k::cum_chunk_scan<PROD, K>(g, in.data(), out.data(),
                                   g.chunks > 1 ? partial.data() : nullptr, t);
    return out;
}

// The sequential scan along the middle axis, in the same accumulator type.
template <bool PROD, k::kdt K>
std::vector<k::storage_t<K>> reference_scan(int64_t pre, int64_t len, int64_t post,
                                            const std::vector<k::storage_t<K>>& in) {
    using A = k::storage_t<k::cum_acc_kdt<K>>;
    std::vector<k::storage_t<K>> out(in.size());
    for (int64_t p = 0; p < pre; ++p)
        for (int64_t j = 0; j < post; ++j) {
            A acc = PROD ? A(1) : A(0);
            for (int64_t i = 0; i < len; ++i) {
                const auto at = static_cast<size_t>((p * len + i) * post + j);
                const A x = static_cast<A>(in[at]);
                acc = PROD ? static_cast<A>(acc * x) : static_cast<A>(acc + x);
                out[at] = static_cast<k::storage_t<K>>(acc);
            }
        }
    return out;
}

struct shape3 {
    int64_t pre, len, post;
};

// Sizes around the chunking thresholds: single chunks (short lines, many lines), a few chunks
// per line (serial pass 2), many chunks (block pass 2, segments longer and shorter than one
// chunk, empty trailing segments), and uneven last chunks.
const std::vector<shape3> scan_shapes = {
    {1, 1, 1},      {1, 31, 1},      {1, 32, 1},    {1, 33, 1},    {1, 64, 1},
    {1, 65, 1},     {3, 129, 1},     {2, 1000, 3},  {1, 1023, 1},  {1, 1025, 1},
    {4, 4097, 1},   {1, 4161, 1},    {1, 20000, 1}, {7, 5000, 5},  {2, 6000, 64},
    {1, 100003, 1}, {131072, 70, 1}, {5, 1, 7},     {1, 70, 2048},
};

} // namespace

TEST_CASE("cuda cumulative: chunk counts cover every element once and fill the GPU") {
    for (const shape3 s : scan_shapes) {
        CAPTURE(s.pre);
        CAPTURE(s.len);
        CAPTURE(s.post);
        const k::cum_geometry g = k::cumulative_geometry(s.pre, s.len, s.post);
        REQUIRE(g.chunks >= 1);
        CHECK(g.per * g.chunks >= s.len);              // every position is in some chunk
        CHECK((g.chunks - 1) * g.per < s.len + g.per); // no chunk starts past the line twice over
        std::vector<int> seen(static_cast<size_t>(s.len), 0);
        for (int64_t c = 0; c < g.chunks; ++c) {
            int64_t lo, hi;
            g.range(c, lo, hi);
            CHECK(lo <= hi);
            CHECK(hi <= s.len);
            for (int64_t i = lo; i < hi; ++i) ++seen[static_cast<size_t>(i)];
        }
        for (int v : seen) CHECK(v == 1);
        if (g.chunks > 1) {
            CHECK(2 * g.per > 64);                      // chunks of more than 32 elements
            CHECK(g.lines() < 131072);                  // many lines never chunk
            CHECK(g.lines() * (g.chunks - 1) < 131072); // no more chunks than the GPU needs
        }
        if (g.chunks > k::cum_serial_chunks) CHECK(g.lines() < 2048); // a block per line
    }
    // the huge cases (arithmetic only): 2^31 + 1 elements on one line, and on many lines
    const k::cum_geometry one = k::cumulative_geometry(1, (int64_t{1} << 31) + 1, 1);
    CHECK(one.chunks == 131072);
    CHECK(one.per * one.chunks >= (int64_t{1} << 31) + 1);
    int64_t lo = 0, hi = 0; // the trailing chunks are empty (16385 * 131072 > 2^31 + 1)
    one.range(one.chunks - 1, lo, hi);
    CHECK((lo == one.len && hi == one.len));
    CHECK(k::cumulative_geometry((int64_t{1} << 31) + 1, 3, 1).chunks == 1);
    CHECK(k::cumulative_geometry(1, 0, 1).chunks == 1);
    CHECK(k::cumulative_geometry(0, 100, 1).chunks == 1);
}

TEST_CASE("cuda cumulative: the three passes equal a sequential scan (int64 exactly)") {
    std::mt19937_64 gen(7);
    for (const shape3 s : scan_shapes) {
        CAPTURE(s.pre);
        CAPTURE(s.len);
        CAPTURE(s.post);
        const auto n = static_cast<size_t>(s.pre * s.len * s.post);
        std::vector<int64_t> x(n);
        for (auto& v : x) v = static_cast<int64_t>(gen() % 2001) - 1000;
        CHECK(host_scan<false, k::kdt::i64>(s.pre, s.len, s.post, x) ==
              reference_scan<false, k::kdt::i64>(s.pre, s.len, s.post, x));
        // products wrap in uint64 like the CPU's: the same bits whatever the grouping
        for (auto& v : x) v = static_cast<int64_t>(gen() % 7) - 3;
        CHECK(host_scan<true, k::kdt::i64>(s.pre, s.len, s.post, x) ==
              reference_scan<true, k::kdt::i64>(s.pre, s.len, s.post, x));
        std::vector<uint64_t> u(n);
        for (auto& v : u) v = gen();
        CHECK(host_scan<false, k::kdt::u64>(s.pre, s.len, s.post, u) ==
              reference_scan<false, k::kdt::u64>(s.pre, s.len, s.post, u));
    }
}

TEST_CASE("cuda cumulative: float sums equal a sequential double scan within rounding") {
    std::mt19937_64 gen(11);
    std::normal_distribution<double> d(0.0, 1.0);
    for (const shape3 s : scan_shapes) {
        CAPTURE(s.pre);
        CAPTURE(s.len);
        CAPTURE(s.post);
        const auto n = static_cast<size_t>(s.pre * s.len * s.post);
        std::vector<double> x(n);
        for (auto& v : x) v = d(gen);
        const auto got = host_scan<false, k::kdt::f64>(s.pre, s.len, s.post, x);
        const auto want = reference_scan<false, k::kdt::f64>(s.pre, s.len, s.post, x);
        for (size_t i = 0; i < n; ++i)
            REQUIRE(std::abs(got[i] - want[i]) <= 1e-9 * (1 + std::abs(want[i])));
        // float32 accumulates in double and rounds once per output, as the CPU
        std::vector<float> f(n);
        for (size_t i = 0; i < n; ++i) f[i] = static_cast<float>(x[i]);
        const auto gf = host_scan<false, k::kdt::f32>(s.pre, s.len, s.post, f);
        const auto wf = reference_scan<false, k::kdt::f32>(s.pre, s.len, s.post, f);
        for (size_t i = 0; i < n; ++i)
            REQUIRE(std::abs(gf[i] - wf[i]) <= 1e-6f * (1 + std::abs(wf[i])));
        // products of values near 1 (no overflow), through the block pass too
        for (auto& v : x) v = 1.0 + d(gen) * 1e-3;
        const auto gp = host_scan<true, k::kdt::f64>(s.pre, s.len, s.post, x);
        const auto wp = reference_scan<true, k::kdt::f64>(s.pre, s.len, s.post, x);
        for (size_t i = 0; i < n; ++i) REQUIRE(std::abs(gp[i] - wp[i]) <= 1e-9 * std::abs(wp[i]));
    }
}

namespace {

// The three passes on complex data of kind K (complex128 accumulators), against the CPU's
// cumsum / cumprod of the same (pre, len, post) tensor along axis 1.
template <bool PROD, k::kdt K>
void check_complex_scan(const shape3& s, std::mt19937_64& gen) {
    using T = k::storage_t<K>;
    using R = decltype(T{}.re);
    const isthmus::dtype dt =
        K == k::kdt::c64 ? isthmus::dtype::complex64 : isthmus::dtype::complex128;
    std::normal_distribution<double> d(0.0, 1.0);
    std::uniform_real_distribution<double> angle(-3.2, 3.2);
    const auto n = static_cast<size_t>(s.pre * s.len * s.post);
    std::vector<T> x(n);
    for (auto& v : x) {
        if (PROD) { // unit modulus, slightly perturbed: no overflow over long lines
            const double a = angle(gen), r = 1.0 + d(gen) * 1e-4;
            v = T{static_cast<R>(r * std::cos(a)), static_cast<R>(r * std::sin(a))};
        } else {
            v = T{static_cast<R>(d(gen)), static_cast<R>(d(gen))};
        }
    }
    isthmus::tensor in =
        isthmus::tensor::empty({s.pre, s.len, s.post}, dt, isthmus::MEMRESOURCE_CPU);
    std::memcpy(in.lock(isthmus::LOCK_WRITE, isthmus::MEMRESOURCE_CPU), x.data(), n * sizeof(T));
    in.unlock(isthmus::LOCK_WRITE, isthmus::MEMRESOURCE_CPU);
    const isthmus::tensor cpu = PROD ? isthmus::cumprod(in, 1) : isthmus::cumsum(in, 1);
    REQUIRE(cpu.dtype() == dt);
    std::vector<T> want(n);
    std::memcpy(want.data(), cpu.lock(isthmus::LOCK_READ, isthmus::MEMRESOURCE_CPU), n * sizeof(T));
    cpu.unlock(isthmus::LOCK_READ, isthmus::MEMRESOURCE_CPU);
    const auto got = host_scan<PROD, K>(s.pre, s.len, s.post, x);
    const double tol = K == k::kdt::c64 ? 2e-6 : 1e-11;
    for (size_t i = 0; i < n; ++i) {
        const std::complex<double> g(got[i].re, got[i].im), w(want[i].re, want[i].im);
        REQUIRE(std::abs(g - w) <= tol * (1 + std::abs(w)) * (PROD ? 1.0 : 1.0 + std::sqrt(s.len)));
    }
}

} // namespace

TEST_CASE("cuda cumulative: complex sums and products equal the CPU's (complex128 accumulators)") {
    std::mt19937_64 gen(13);
    for (const shape3 s : scan_shapes) {
        if (s.pre * s.len * s.post > 200000) continue; // the CPU reference stays quick
        CAPTURE(s.pre);
        CAPTURE(s.len);
        CAPTURE(s.post);
        check_complex_scan<false, k::kdt::c64>(s, gen);
        check_complex_scan<true, k::kdt::c64>(s, gen);
        check_complex_scan<false, k::kdt::c128>(s, gen);
        check_complex_scan<true, k::kdt::c128>(s, gen);
    }
    CHECK(k::cumulative_ok(k::kdt::c64));
    CHECK(k::cumulative_ok(k::kdt::c128));
    CHECK(k::cumulative_acc_bytes(k::kdt::c64) == 16);
    CHECK(k::cumulative_acc_bytes(k::kdt::f32) == 8);
}

TEST_CASE("cuda cumulative: block pass 2 segments split the chunks without gaps") {
    for (int64_t chunks : {65, 255, 256, 257, 1000, 131072}) {
        k::cum_geometry g{1, chunks * 64, 1, chunks, 64};
        int64_t next = 0;
        for (int tid = 0; tid < k::cum_block; ++tid) {
            int64_t lo, hi;
            k::cum_segment(g, tid, k::cum_block, lo, hi);
            CHECK(lo == next); // contiguous, in thread order
            CHECK(hi >= lo);
            next = hi;
        }
        CHECK(next == chunks);
    }
}

// ---- gather / scatter addressing ----

TEST_CASE("cuda index: element offsets equal a nested walk of rows and rest (C order)") {
    std::mt19937 gen(3);
    for (int rank = 0; rank <= 3; ++rank)
        for (int trial = 0; trial < 20; ++trial) {
            k::rest_layout g;
            g.rank = rank;
            g.numel = 1;
            for (int d = 0; d < rank; ++d) {
                g.shape[d] = 1 + static_cast<int64_t>(gen() % 4);
                g.a[d] = (static_cast<int64_t>(gen() % 41) - 20) * 8; // negative and zero too
                g.b[d] = (static_cast<int64_t>(gen() % 41) - 20) * 8;
                g.numel *= g.shape[d];
            }
            const int64_t rows = 1 + static_cast<int64_t>(gen() % 5), b_row = 1000;
            std::vector<int64_t> row_off(static_cast<size_t>(rows));
            for (auto& o : row_off) o = static_cast<int64_t>(gen() % 100000) * 8;
            int64_t e = 0;
            for (int64_t r = 0; r < rows; ++r) {
                std::vector<int64_t> q(static_cast<size_t>(rank), 0);
                for (int64_t m = 0; m < g.numel; ++m, ++e) {
                    int64_t wa = row_off[static_cast<size_t>(r)], wb = r * b_row;
                    for (int d = 0; d < rank; ++d) {
                        wa += q[static_cast<size_t>(d)] * g.a[d];
                        wb += q[static_cast<size_t>(d)] * g.b[d];
                    }
                    int64_t oa = 0, ob = 0;
                    k::index_offsets(g, row_off.data(), b_row, e, oa, ob);
                    REQUIRE(oa == wa);
                    REQUIRE(ob == wb);
                    for (int d = rank - 1; d >= 0; --d) { // odometer, last dimension fastest
                        if (++q[static_cast<size_t>(d)] < g.shape[d]) break;
                        q[static_cast<size_t>(d)] = 0;
                    }
                }
            }
        }
}

// ---- elementwise strided offsets ----

TEST_CASE("cuda elementwise: strided offsets equal a nested walk (32-bit and 64-bit splits)") {
    std::mt19937 gen(5);
    for (int rank = 0; rank <= 6; ++rank) // up to 4^6 elements per space
        for (int trial = 0; trial < 10; ++trial) {
            k::space sp;
            sp.rank = rank;
            sp.numel = 1;
            int64_t st[3][k::max_dims] = {};
            for (int d = 0; d < rank; ++d) {
                sp.shape[d] = 2 + static_cast<int64_t>(gen() % 3);
                sp.numel *= sp.shape[d];
                for (auto& s : st) s[d] = static_cast<int64_t>(gen() % 21) - 10; // 0: broadcast
            }
            const int64_t* const strides[3] = {st[0], st[1], st[2]};
            std::vector<int64_t> q(static_cast<size_t>(rank), 0);
            for (int64_t i = 0; i < sp.numel; ++i) {
                int64_t off[3];
                k::offsets<3>(sp, i, strides, off);
                for (int o = 0; o < 3; ++o) {
                    int64_t want = 0;
                    for (int d = 0; d < rank; ++d) want += q[static_cast<size_t>(d)] * st[o][d];
                    REQUIRE(off[o] == want);
                }
                for (int d = rank - 1; d >= 0; --d) { // odometer, last dimension fastest
                    if (++q[static_cast<size_t>(d)] < sp.shape[d]) break;
                    q[static_cast<size_t>(d)] = 0;
                }
            }
        }
    // past 2^31 elements the split stays 64-bit: elements near the end of a (3, 2^31 + 5) space
    k::space big;
    big.rank = 2;
    big.shape[0] = 3;
    big.shape[1] = (int64_t{1} << 31) + 5;
    big.numel = big.shape[0] * big.shape[1];
    const int64_t s0[2] = {big.shape[1], 1}, s1[2] = {0, 2}; // dense, and a broadcast row
    const int64_t* const strides[2] = {s0, s1};
    for (const int64_t i : {int64_t{0}, big.shape[1] - 1, big.shape[1], big.numel - 1,
                            int64_t{1} << 32, (int64_t{1} << 31) + 7}) {
        int64_t off[2];
        k::offsets<2>(big, i, strides, off);
        CHECK(off[0] == i);
        CHECK(off[1] == (i % big.shape[1]) * 2);
    }
}

// ---- launch sizes ----

TEST_CASE("cuda launches: grid sizes stay within the limits and cover the work") {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{255},
                      int64_t{256}, int64_t{257}, int64_t{1023}, int64_t{1025}, int64_t{1} << 24,
                      (int64_t{1} << 31) + 1, int64_t{1} << 40}) {
        CAPTURE(n);
        for (int block : {32, 128, 256, 1024}) {
            const unsigned g = k::grid_for(n, block);
            CHECK(g >= 1u);
            CHECK(g <= 65536u); // grid.x allows 2^31 - 1; the grid-stride loops cover the rest
            // one item per thread when that fits, else every thread loops
            if (n <= int64_t{65536} * block)
                CHECK(int64_t{g} * block >= n);
            else
                CHECK(g == 65536u);
            CHECK(isthmus::plugin::detail::cuda_blocks(n, block) == g);
        }
    }
}

TEST_CASE("cuda plugin launcher: linear positions map to C-order positions") {
    for (int rank = 1; rank <= 4; ++rank) {
        isthmus_range r{};
        r.ndim = rank;
        const int64_t sizes[4] = {3, 1, 4, 5};
        int64_t total = 1;
        for (int d = 0; d < rank; ++d) total *= (r.dims[d] = sizes[d]);
        r.begin = 0;
        r.end = total;
        int64_t want[4] = {0, 0, 0, 0};
        for (int64_t i = 0; i < total; ++i) {
            switch (rank) {
            case 1: {
                isthmus::plugin::ivec<1> p{};
                isthmus::plugin::detail::position_of(p, i, r);
                CHECK(p[0] == want[0]);
                break;
            }
            case 2: {
                isthmus::plugin::ivec<2> p{};
                isthmus::plugin::detail::position_of(p, i, r);
                CHECK((p[0] == want[0] && p[1] == want[1]));
                break;
            }
            case 3: {
                isthmus::plugin::ivec<3> p{};
                isthmus::plugin::detail::position_of(p, i, r);
                CHECK((p[0] == want[0] && p[1] == want[1] && p[2] == want[2]));
                break;
            }
            default: {
                isthmus::plugin::ivec<4> p{};
                isthmus::plugin::detail::position_of(p, i, r);
                CHECK((p[0] == want[0] && p[1] == want[1] && p[2] == want[2] && p[3] == want[3]));
            }
            }
            for (int d = rank - 1; d >= 0; --d) {
                if (++want[d] < r.dims[d]) break;
                want[d] = 0;
            }
        }
    }
}

// ---- stream rules of the exchange protocols ----

TEST_CASE("dlpack streams: the consumer's stream for an export of CUDA data") {
    using isthmus::boundary::dlpack_consumer_stream;
    CHECK(dlpack_consumer_stream(std::nullopt) == reinterpret_cast<void*>(uintptr_t{1}));
    CHECK(dlpack_consumer_stream(1) == reinterpret_cast<void*>(uintptr_t{1}));
    CHECK(dlpack_consumer_stream(2) == reinterpret_cast<void*>(uintptr_t{2}));
    CHECK(dlpack_consumer_stream(-1) == nullptr); // no synchronisation
    const int64_t handle = 0x7f1234567800;
    CHECK(dlpack_consumer_stream(handle) == reinterpret_cast<void*>(uintptr_t(handle)));
    CHECK_THROWS_WITH_AS(dlpack_consumer_stream(0), doctest::Contains("stream=0 is not allowed"),
                         isthmus::value_error);
    CHECK_THROWS_WITH_AS(dlpack_consumer_stream(-2), doctest::Contains("got -2"),
                         isthmus::value_error);
}

TEST_CASE("cuda array interface streams: the producer's stream on import") {
    using isthmus::boundary::cai_producer_stream;
    CHECK(cai_producer_stream(std::nullopt) == nullptr); // None: the data is ready
    CHECK(cai_producer_stream(1) == reinterpret_cast<void*>(uintptr_t{1}));
    CHECK(cai_producer_stream(2) == reinterpret_cast<void*>(uintptr_t{2}));
    CHECK(cai_producer_stream(0x55aa00) == reinterpret_cast<void*>(uintptr_t{0x55aa00}));
    CHECK_THROWS_WITH_AS(cai_producer_stream(0), doctest::Contains("disallowed"),
                         isthmus::value_error);
    CHECK_THROWS_WITH_AS(cai_producer_stream(-1), doctest::Contains("is not a stream"),
                         isthmus::value_error);
}

TEST_CASE("export release: the stream isthmus waits for before reusing an exported block") {
    using isthmus::boundary::release_wait_stream;
    void* consumer = reinterpret_cast<void*>(uintptr_t{0x1000});
    CHECK(release_wait_stream(true, consumer) == consumer); // DLPack: the consumer's
    CHECK(release_wait_stream(true, nullptr) == nullptr);   // stream=-1: none
    CHECK(release_wait_stream(false, nullptr) == reinterpret_cast<void*>(uintptr_t{1})); // CAI
}

TEST_CASE("import hand-back: the producer's stream waits, or the host does") {
    using isthmus::boundary::exchange_producer_stream;
    using isthmus::boundary::hand_back_plan;
    void* const legacy = reinterpret_cast<void*>(uintptr_t{1});
    void* const torch_side = reinterpret_cast<void*>(uintptr_t{0x7f00aa00});
    CHECK(exchange_producer_stream(nullptr) == legacy); // torch's default stream reads as 0
    CHECK(exchange_producer_stream(torch_side) == torch_side);
    CHECK(exchange_producer_stream(reinterpret_cast<void*>(uintptr_t{2})) ==
          reinterpret_cast<void*>(uintptr_t{2}));
    // an exchange-table import: an event wait on the producer's stream, no host wait
    auto p = hand_back_plan(torch_side);
    CHECK_FALSE(p.host_waits);
    CHECK(p.producer_stream == torch_side);
    p = hand_back_plan(static_cast<void*>(nullptr));
    CHECK_FALSE(p.host_waits);
    CHECK(p.producer_stream == legacy);
    // __dlpack__ imports and bare capsules: no stream to hand back on, the host waits
    p = hand_back_plan(std::nullopt);
    CHECK(p.host_waits);
    CHECK(p.producer_stream == nullptr);
}
