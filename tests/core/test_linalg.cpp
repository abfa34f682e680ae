// Tests for matmul (NumPy's @ rules), dot, vdot and inner against float64 references.
#include <doctest/doctest.h>

#include "test_support.hpp"

#include "isthmus/ops/linalg.hpp"

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace isthmus;

namespace {

using cd = std::complex<double>;

// Random values: small integers for integer dtypes (exact products), 0/1 for bool, uniform
// reals in [-1, 1) otherwise (complex dtypes get random imaginary parts).
tensor random_tensor(dtype dt, const shape_t& shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<cd> v(static_cast<size_t>(numel_of(shape)));
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    std::uniform_int_distribution<int> di(is_unsigned_int(dt) ? 0 : -4, 4);
    for (auto& x : v) {
        if (is_bool(dt))
            x = std::bernoulli_distribution(0.5)(rng) ? 1.0 : 0.0;
        else if (is_integer(dt))
            x = di(rng);
        else
            x = cd(d(rng), is_complex(dt) ? d(rng) : 0.0);
    }
    return tensor::from_vector(v, shape).to(dt);
}

// NumPy's matmul in complex double: 1-d promotion, broadcast batches.
struct ref_result {
    shape_t shape;
    std::vector<cd> values;
};
ref_result matmul_reference(const tensor& a, const tensor& b, bool boolean = false) {
    const tensor A = a.dim() == 1 ? a.unsqueeze(0) : a;
    const tensor B = b.dim() == 1 ? b.unsqueeze(1) : b;
    const int64_t m = A.size(-2), k = A.size(-1), n = B.size(-1);
    const shape_t batch = broadcast_shapes(shape_t(A.shape().begin(), A.shape().end() - 2),
                                           shape_t(B.shape().begin(), B.shape().end() - 2));
    shape_t sa = batch, sb = batch;
    sa.insert(sa.end(), {m, k});
    sb.insert(sb.end(), {k, n});
    const auto x = A.expand(sa).to_vector<cd>();
    const auto y = B.expand(sb).to_vector<cd>();
    const int64_t nb = numel_of(batch);
    ref_result r;
    r.values.assign(static_cast<size_t>(nb * m * n), 0);
    for (int64_t q = 0; q < nb; ++q)
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                cd s = 0;
                for (int64_t p = 0; p < k; ++p)
                    s += x[static_cast<size_t>((q * m + i) * k + p)] *
                         y[static_cast<size_t>((q * k + p) * n + j)];
                if (boolean) s = s != cd(0) ? 1.0 : 0.0;
                r.values[static_cast<size_t>((q * m + i) * n + j)] = s;
            }
    r.shape = batch;
    if (a.dim() > 1) r.shape.push_back(m);
    if (b.dim() > 1) r.shape.push_back(n);
    return r;
}

void check_close(const tensor& got, const ref_result& want, double tol, const std::string& what) {
    CHECK_MESSAGE(got.shape() == want.shape, what, ": shape ", shape_str(got.shape()), " want ",
                  shape_str(want.shape));
    const auto g = got.to_vector<cd>();
    REQUIRE_MESSAGE(g.size() == want.values.size(), what);
    for (size_t i = 0; i < g.size(); ++i)
        if (std::abs(g[i] - want.values[i]) > tol * std::max(1.0, std::abs(want.values[i]))) {
            FAIL_CHECK(what, ": element ", i, " is ", g[i].real(), "+", g[i].imag(), "j, want ",
                       want.values[i].real(), "+", want.values[i].imag(), "j");
            return;
        }
}

double tolerance(dtype dt) {
    switch (dt) {
    case dtype::float16:
        return 1e-2;
    case dtype::bfloat16:
        return 4e-2;
    case dtype::float32:
    case dtype::complex64:
        return 1e-5;
    case dtype::float64:
    case dtype::complex128:
        return 1e-12;
    default:
        return 0; // exact
    }
}

// A (rows, cols) view of random data in one of several layouts.
tensor matrix(dtype dt, int64_t rows, int64_t cols, int layout, uint32_t seed) {
    switch (layout) {
    case 0:
        return random_tensor(dt, {rows, cols}, seed); // row-major
    case 1:
        return random_tensor(dt, {cols, rows}, seed).t(); // column-major
    case 2:
        return random_tensor(dt, {rows, 2 * cols}, seed).slice(1, 0, 2 * cols, 2); // stepped
    case 3:
        return random_tensor(dt, {rows, cols}, seed).slice(0, rows - 1, -rows - 1, -1);
    case 4:
        return random_tensor(dt, {rows, cols + 3}, seed).slice(1, 2, cols + 2); // padded rows
    default:
        return random_tensor(dt, {1, cols}, seed).expand({rows, cols}); // broadcast
    }
}
const char* layout_names[] = {"row-major", "column-major", "stepped",
                              "reversed",  "padded",       "broadcast"};

} // namespace

TEST_CASE("linalg: matmul of 2-d operands in every layout matches the reference") {
    for (dtype dt :
         {dtype::float32, dtype::float64, dtype::complex64, dtype::complex128, dtype::int32}) {
        for (int la = 0; la < 6; ++la)
            for (int lb = 0; lb < 6; ++lb)
                for (const auto& [m, k, n] :
                     {std::array<int64_t, 3>{5, 7, 3}, std::array<int64_t, 3>{1, 6, 4},
                      std::array<int64_t, 3>{4, 6, 1}, std::array<int64_t, 3>{1, 1, 1}}) {
                    const tensor a = matrix(dt, m, k, la, 10);
                    const tensor b = matrix(dt, k, n, lb, 20);
                    const std::string what = std::string(name(dt)) + " " + layout_names[la] +
                                             " @ " + layout_names[lb] + " " + shape_str({m, k, n});
                    const tensor c = matmul(a, b);
                    CHECK(c.dtype() == dt);
                    check_close(c, matmul_reference(a, b), tolerance(dt), what);
                }
    }
}

TEST_CASE("linalg: matmul of every dtype and mixed dtypes") {
    for (dtype dt : all_dtypes) {
        const tensor a = random_tensor(dt, {6, 5}, 30);
        const tensor b = random_tensor(dt, {5, 7}, 31);
        const tensor c = matmul(a, b);
        CHECK(c.dtype() == dt);
        check_close(c, matmul_reference(a, b, is_bool(dt)), tolerance(dt), std::string(name(dt)));
        check_close(matmul(b.t(), a.t()), matmul_reference(b.t(), a.t(), is_bool(dt)),
                    tolerance(dt), std::string(name(dt)) + " transposed");
    }
    const std::pair<dtype, dtype> pairs[] = {
        {dtype::int32, dtype::float32},   {dtype::int8, dtype::uint8},
        {dtype::float32, dtype::float64}, {dtype::float16, dtype::float32},
        {dtype::bool_, dtype::int16},     {dtype::float64, dtype::complex64}};
    for (const auto& [da, db] : pairs) {
        const tensor a = random_tensor(da, {3, 4}, 32);
        const tensor b = random_tensor(db, {4, 2}, 33);
        const dtype want = promote_types(da, db);
        const tensor c = matmul(a, b);
        CHECK(c.dtype() == want);
        check_close(c, matmul_reference(a, b), tolerance(want),
                    std::string(name(da)) + " @ " + std::string(name(db)));
    }
}

TEST_CASE("linalg: integer matmul wraps around and bool is or-of-ands") {
    const tensor a = tensor::from_vector(std::vector<int8_t>{100, 100}, {1, 2});
    const tensor b = tensor::from_vector(std::vector<int8_t>{2, 1}, {2, 1});
    CHECK(matmul(a, b).item<int8_t>() == static_cast<int8_t>(300 - 256)); // 44, as NumPy
    const tensor u = tensor::from_vector(std::vector<uint16_t>{65535, 65535}, {1, 2});
    const tensor v = tensor::from_vector(std::vector<uint16_t>{65535, 1}, {2, 1});
    CHECK(matmul(u, v).item<uint16_t>() == static_cast<uint16_t>(65535u * 65535u + 65535u));
    const tensor p = tensor::from_vector(std::vector<bool>{true, false, true, true}, {2, 2});
    const tensor q = tensor::from_vector(std::vector<bool>{false, true, true, true}, {2, 2});
    CHECK(matmul(p, q).to_vector<bool>() == std::vector<bool>{false, true, true, true});
}

TEST_CASE("linalg: matmul 1-d promotion and broadcast batches follow NumPy") {
    struct shape_case {
        shape_t a, b, c;
    };
    const shape_case cases[] = {
        {{4}, {4}, {}},
        {{4}, {4, 3}, {3}},
        {{2, 4}, {4}, {2}},
        {{5, 2, 4}, {4}, {5, 2}},
        {{4}, {5, 4, 3}, {5, 3}},
        {{3, 2, 4}, {3, 4, 5}, {3, 2, 5}},
        {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},
        {{1, 3, 4}, {6, 4, 2}, {6, 3, 2}},
        {{10, 7, 5}, {5, 3}, {10, 7, 3}},        // batches fold into one gemm
        {{7, 5}, {10, 5, 3}, {10, 7, 3}},        // a broadcast over b's batches
        {{64, 8, 8}, {64, 8, 8}, {64, 8, 8}},    // many tiny products, one thread
        {{6, 40, 40}, {6, 40, 50}, {6, 40, 50}}, // medium products spread over threads
        {{2, 3, 70, 60}, {60, 80}, {2, 3, 70, 80}},
    };
    for (dtype dt : {dtype::float32, dtype::float64, dtype::complex128, dtype::int64}) {
        for (const auto& c : cases) {
            const tensor a = random_tensor(dt, c.a, 40);
            const tensor b = random_tensor(dt, c.b, 41);
            const std::string what =
                std::string(name(dt)) + " " + shape_str(c.a) + " @ " + shape_str(c.b);
            const tensor r = matmul(a, b);
            CHECK_MESSAGE(r.shape() == c.c, what);
            check_close(r, matmul_reference(a, b), tolerance(dt) * 10, what);
        }
        // Batched operands with transposed matrices and a batch-strided view.
        const tensor a = random_tensor(dt, {3, 5, 4}, 42).transpose(1, 2);   // (3, 4, 5)
        const tensor b = random_tensor(dt, {6, 5, 2}, 43).slice(0, 0, 6, 2); // (3, 5, 2)
        check_close(matmul(a, b), matmul_reference(a, b), tolerance(dt) * 10,
                    std::string(name(dt)) + " transposed batch");
    }
}

TEST_CASE("linalg: large float32 and float64 products (BLAS threads)") {
    for (dtype dt : {dtype::float32, dtype::float64}) {
        const tensor a = random_tensor(dt, {130, 200}, 50);
        const tensor b = random_tensor(dt, {200, 150}, 51);
        check_close(matmul(a, b), matmul_reference(a, b), tolerance(dt) * 100,
                    std::string(name(dt)) + " large");
        check_close(matmul(b.t(), a.t()), matmul_reference(b.t(), a.t()), tolerance(dt) * 100,
                    std::string(name(dt)) + " large transposed");
    }
    // The exact loop with several row blocks in parallel.
    const tensor a = random_tensor(dtype::int32, {100, 90}, 52);
    const tensor b = random_tensor(dtype::int32, {90, 110}, 53);
    check_close(matmul(a, b), matmul_reference(a, b), 0, "int32 large");
}

TEST_CASE("linalg: matmul with empty dimensions") {
    for (dtype dt : {dtype::float32, dtype::int32, dtype::complex64}) {
        CHECK(matmul(tensor::empty({0, 3}, dt, MEMRESOURCE_CPU), random_tensor(dt, {3, 4}, 1))
                  .shape() == shape_t{0, 4});
        CHECK(matmul(random_tensor(dt, {2, 3}, 2), tensor::empty({3, 0}, dt, MEMRESOURCE_CPU))
                  .shape() == shape_t{2, 0});
        const tensor z = matmul(tensor::empty({2, 0}, dt, MEMRESOURCE_CPU),
                                tensor::empty({0, 3}, dt, MEMRESOURCE_CPU));
        CHECK(z.shape() == shape_t{2, 3});
        for (const cd v : z.to_vector<cd>()) CHECK(v == cd(0));
        CHECK(matmul(tensor::empty({0, 2, 3}, dt, MEMRESOURCE_CPU), random_tensor(dt, {3, 4}, 3))
                  .shape() == shape_t{0, 2, 4});
        CHECK(
            matmul(tensor::empty({0}, dt, MEMRESOURCE_CPU), tensor::empty({0}, dt, MEMRESOURCE_CPU))
                .item<double>() == 0.0);
    }
}

TEST_CASE("linalg: matmul errors name both shapes and leave the inputs unchanged") {
    const tensor a = random_tensor(dtype::float32, {2, 3}, 60);
    const tensor b = random_tensor(dtype::float32, {4, 5}, 61);
    const auto before_a = a.to_vector<float>();
    const auto before_b = b.to_vector<float>();
    CHECK_THROWS_AS((void)matmul(a, b), value_error);
    const std::string mismatch = error_of([&] { (void)matmul(a, b); });
    CHECK(contains(mismatch, "(2, 3)"));
    CHECK(contains(mismatch, "(4, 5)"));
    CHECK(contains(mismatch, "not aligned"));
    CHECK_THROWS_AS((void)matmul(tensor::scalar_tensor(2.0f), a), value_error);
    CHECK_THROWS_AS((void)matmul(a, tensor::scalar_tensor(2.0f)), value_error);
    CHECK(contains(error_of([&] { (void)matmul(a, tensor::scalar_tensor(2.0f)); }),
                   "at least one dimension"));
    const tensor c = random_tensor(dtype::float32, {2, 3, 4}, 62);
    const tensor d = random_tensor(dtype::float32, {3, 4, 5}, 63);
    CHECK_THROWS_AS((void)matmul(c, d), value_error);
    const std::string batch = error_of([&] { (void)matmul(c, d); });
    CHECK(contains(batch, "(2, 3, 4)"));
    CHECK(contains(batch, "(3, 4, 5)"));
    CHECK_THROWS_AS((void)matmul(tensor(), a), value_error);
    CHECK_THROWS_AS((void)matmul(random_tensor(dtype::float32, {3}, 64),
                                 random_tensor(dtype::float32, {4}, 65)),
                    value_error);
    CHECK(a.to_vector<float>() == before_a);
    CHECK(b.to_vector<float>() == before_b);
    CHECK(c.shape() == shape_t{2, 3, 4});
}

TEST_CASE("linalg: dot follows NumPy for scalars, vectors, matrices and N-d operands") {
    struct shape_case {
        shape_t a, b;
    };
    const shape_case cases[] = {{{5}, {5}},       {{3, 5}, {5}},      {{5}, {5, 2}},
                                {{3, 5}, {5, 2}}, {{2, 3, 5}, {5}},   {{2, 3, 4}, {5, 4, 6}},
                                {{4}, {3, 4, 2}}, {{2, 3, 4}, {4, 2}}};
    for (dtype dt : {dtype::float64, dtype::int32, dtype::complex64}) {
        for (const auto& c : cases) {
            const tensor a = random_tensor(dt, c.a, 70);
            const tensor b = random_tensor(dt, c.b, 71);
            const std::string what = std::string("dot ") + std::string(name(dt)) + " " +
                                     shape_str(c.a) + " . " + shape_str(c.b);
            // Reference: sum over a's last axis and b's second-to-last (or only) axis.
            const auto x = a.to_vector<cd>();
            const auto y = b.to_vector<cd>();
            const int64_t k = c.a.back();
            const int64_t bn = b.dim() == 1 ? 1 : c.b.back();
            const int64_t bpre = b.numel() / (k * bn);
            const int64_t apre = a.numel() / k;
            shape_t want_shape(c.a.begin(), c.a.end() - 1);
            if (b.dim() > 1) {
                want_shape.insert(want_shape.end(), c.b.begin(), c.b.end() - 2);
                want_shape.push_back(bn);
            }
            ref_result want{want_shape, {}};
            for (int64_t i = 0; i < apre; ++i)
                for (int64_t p = 0; p < bpre; ++p)
                    for (int64_t j = 0; j < bn; ++j) {
                        cd s = 0;
                        for (int64_t q = 0; q < k; ++q)
                            s += x[static_cast<size_t>(i * k + q)] *
                                 y[static_cast<size_t>((p * k + q) * bn + j)];
                        want.values.push_back(s);
                    }
            check_close(dot(a, b), want, tolerance(dt) * 10, what);
        }
        // A 0-d operand multiplies elementwise.
        const tensor s = random_tensor(dt, {1}, 72).reshape({});
        const tensor t = random_tensor(dt, {2, 3}, 73);
        const cd sv = s.item<cd>();
        ref_result want{{2, 3}, {}};
        for (cd v : t.to_vector<cd>()) want.values.push_back(sv * v);
        check_close(dot(s, t), want, tolerance(dt), "dot scalar first");
        check_close(dot(t, s), want, tolerance(dt), "dot scalar second");
        check_close(inner(t, s), want, tolerance(dt), "inner scalar");
        CHECK(dot(s, s).dim() == 0);
    }
    CHECK(
        dot(tensor::scalar_tensor(2.0f), tensor::from_vector(std::vector<int8_t>{1, 2})).dtype() ==
        dtype::float32);
    const tensor a = random_tensor(dtype::float32, {2, 3}, 74);
    CHECK_THROWS_AS((void)dot(a, random_tensor(dtype::float32, {2, 3}, 75)), value_error);
    CHECK(contains(error_of([&] { (void)dot(a, random_tensor(dtype::float32, {4}, 76)); }),
                   "(2, 3)"));
    CHECK_THROWS_AS((void)dot(a, tensor()), value_error);
}

TEST_CASE("linalg: vdot conjugates its first operand; inner sums over the last axes") {
    const tensor a = random_tensor(dtype::complex128, {2, 3}, 80);
    const tensor b = random_tensor(dtype::complex64, {3, 2}, 81);
    cd want = 0;
    const auto x = a.to_vector<cd>(), y = b.to_vector<cd>();
    for (size_t i = 0; i < x.size(); ++i) want += std::conj(x[i]) * y[i];
    const tensor r = vdot(a, b);
    CHECK(r.dim() == 0);
    CHECK(r.dtype() == dtype::complex128);
    CHECK(std::abs(r.item<cd>() - want) < 1e-6);
    CHECK(std::abs(vdot(a.t(), a.t()).item<cd>().imag()) < 1e-12);
    const tensor f = random_tensor(dtype::float32, {4}, 82);
    const tensor g = random_tensor(dtype::int16, {2, 2}, 83);
    double dw = 0;
    const auto fv = f.to_vector<double>(), gv = g.to_vector<double>();
    for (size_t i = 0; i < 4; ++i) dw += fv[i] * gv[i];
    CHECK(std::abs(vdot(f, g).item<double>() - dw) < 1e-5);
    CHECK_THROWS_AS((void)vdot(f, random_tensor(dtype::float32, {5}, 84)), value_error);
    CHECK(contains(error_of([&] { (void)vdot(f, random_tensor(dtype::float32, {5}, 84)); }),
                   "4 and 5 elements"));

    const tensor p = random_tensor(dtype::float64, {2, 3, 4}, 85);
    const tensor q = random_tensor(dtype::float64, {5, 4}, 86);
    const tensor in = inner(p, q);
    CHECK(in.shape() == shape_t{2, 3, 5});
    const auto pv = p.to_vector<double>(), qv = q.to_vector<double>(), iv = in.to_vector<double>();
    for (size_t i = 0; i < 6; ++i)
        for (size_t j = 0; j < 5; ++j) {
            double s = 0;
            for (size_t k = 0; k < 4; ++k) s += pv[i * 4 + k] * qv[j * 4 + k];
            CHECK(std::abs(iv[i * 5 + j] - s) < 1e-12);
        }
    CHECK(inner(random_tensor(dtype::float64, {4}, 87), random_tensor(dtype::float64, {4}, 88))
              .dim() == 0);
    CHECK_THROWS_AS((void)inner(p, random_tensor(dtype::float64, {4, 3}, 89)), value_error);
    CHECK(contains(error_of([&] {
                       (void)inner(p, random_tensor(dtype::float64, {4, 3}, 89));
                   }),
                   "(2, 3, 4)"));
}

TEST_CASE("linalg: share_blas_pools adopts no copy but other OpenBLAS libraries") {
    // This process loads only isthmus's own OpenBLAS: nothing to share, however often asked
    // (Note [one BLAS pool for the process]; NumPy's copy is adopted in
    // tests/python/core/test_blas.py).
    CHECK(share_blas_pools() == 0);
    CHECK(share_blas_pools() == 0);
    const blas_info info = cpu_blas_info();
    CHECK(info.shared_pools == 0);
    CHECK(info.shared_calls == 0);
}

TEST_CASE("linalg: cpu_blas_info names the library and follows the OpenMP pool") {
    const blas_info info = cpu_blas_info();
    REQUIRE(info.name != nullptr);
    REQUIRE(info.version != nullptr);
    REQUIRE(info.core != nullptr);
    REQUIRE(info.config != nullptr);
    const std::string config = info.config, version = info.version, core = info.core;
    CHECK(!version.empty());
    CHECK(contains(config, version));
    CHECK(!core.empty());
    CHECK(contains(config, core));
    CHECK(info.openmp_threads == omp_get_max_threads());
    if (std::getenv("OPENBLAS_NUM_THREADS") == nullptr &&
        std::getenv("GOTO_NUM_THREADS") == nullptr) {
        // See Note [BLAS pool size]: one OpenMP setting bounds both pools.
        threads_guard guard;
        CHECK(info.threads == info.openmp_threads);
        omp_set_num_threads(1);
        CHECK(cpu_blas_info().threads == 1);
        const tensor a = random_tensor(dtype::float64, {130, 200}, 54);
        const tensor b = random_tensor(dtype::float64, {200, 150}, 55);
        check_close(matmul(a, b), matmul_reference(a, b), tolerance(dtype::float64) * 100,
                    "one BLAS thread");
        omp_set_num_threads(2);
        CHECK(cpu_blas_info().threads == 2);
        check_close(matmul(a, b), matmul_reference(a, b), tolerance(dtype::float64) * 100,
                    "two BLAS threads");
    }
}

TEST_CASE("linalg: large products from an OpenMP region and from concurrent threads") {
    // See Note [BLAS jobs on the OpenMP pool]: a threaded product called where no full OpenMP
    // team can be had, and two threaded products at once, still run every job once.
    const tensor a = random_tensor(dtype::float32, {160, 300}, 56);
    const tensor b = random_tensor(dtype::float32, {300, 170}, 57);
    const tensor a2 = random_tensor(dtype::float64, {150, 310}, 58);
    const tensor b2 = random_tensor(dtype::float64, {310, 140}, 59);
    const auto ref = matmul_reference(a, b);
    const auto ref2 = matmul_reference(a2, b2);
    std::vector<tensor> from_region(2);
#pragma omp parallel for num_threads(2)
    for (int i = 0; i < 2; ++i)
        from_region[static_cast<size_t>(i)] = i == 0 ? matmul(a, b) : matmul(a2, b2);
    check_close(from_region[0], ref, tolerance(dtype::float32) * 100, "float32 in a region");
    check_close(from_region[1], ref2, tolerance(dtype::float64) * 100, "float64 in a region");
    tensor t1, t2;
    std::thread other([&] {
        for (int r = 0; r < 5; ++r) t1 = matmul(a, b);
    });
    for (int r = 0; r < 5; ++r) t2 = matmul(a2, b2);
    other.join();
    check_close(t1, ref, tolerance(dtype::float32) * 100, "float32 concurrent");
    check_close(t2, ref2, tolerance(dtype::float64) * 100, "float64 concurrent");
}
