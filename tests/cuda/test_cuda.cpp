// CUDA backend tests: the clear error without a GPU; on a GPU, results against the CPU.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <isthmus/cuda.hpp>
#include <isthmus/error.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace isthmus;

namespace {

std::vector<float> random_floats(size_t n, unsigned seed) {
    std::mt19937 g(seed);
    std::normal_distribution<float> d;
    std::vector<float> v(n);
    for (float& x : v) x = d(g);
    return v;
}

// A tensor valid only on cuda:0.
// A tensor whose only valid copy is on the GPU: a read-write lock there copies the host data in
// and invalidates the host copy (evict never drops host memory, the backing store).
tensor on_gpu(const std::vector<float>& v, shape_t shape) {
    tensor t = tensor::from_vector(v, std::move(shape));
    t.lock(LOCK_READWRITE, MEMRESOURCE_SINGLE_CUDA);
    t.unlock(LOCK_READWRITE, MEMRESOURCE_SINGLE_CUDA);
    return t;
}

void check_close(const tensor& got, const tensor& ref, double tol) {
    REQUIRE(got.shape() == ref.shape());
    const auto g = got.to(dtype::float64).to_vector<double>();
    const auto r = ref.to(dtype::float64).to_vector<double>();
    for (size_t i = 0; i < g.size(); ++i)
        REQUIRE(std::abs(g[i] - r[i]) <= tol * (1 + std::abs(r[i])));
}

} // namespace

TEST_CASE("cuda: without a GPU, init raises a runtime_error naming the cause") {
    if (cuda::available()) return; // covered by the GPU cases below
    const std::string reason = cuda::unavailable_reason();
    CHECK_FALSE(reason.empty());
    try {
        cuda::init(0);
        FAIL("cuda::init did not throw");
    } catch (const runtime_error& e) {
        CHECK(std::string(e.what()).find("CUDA is not available") != std::string::npos);
        CHECK(std::string(e.what()).find(reason) != std::string::npos);
    }
    CHECK_THROWS_AS(cuda::device_count(), runtime_error);
    CHECK(default_resource() == MEMRESOURCE_CPU);
    // the CPU keeps working
    const tensor a = tensor::from_vector<float>({1, 2, 3});
    CHECK(add(a, a).to_vector<float>() == std::vector<float>{2, 4, 6});
}

TEST_CASE("cuda: ops on the GPU match the CPU" * doctest::skip(!cuda::available())) {
    cuda::init(0);
    const auto x = random_floats(64 * 130, 1), y = random_floats(130, 2);
    const tensor a = on_gpu(x, {64, 130}), b = on_gpu(y, {130});
    const tensor ac = tensor::from_vector(x, {64, 130}), bc = tensor::from_vector(y, {130});
    check_close(add(a, b), add(ac, bc), 1e-6);
    check_close(maximum(a, b), maximum(ac, bc), 0);
    check_close(exp(a.t()), exp(ac.t()), 1e-6);
    check_close(sum(a, {1}), sum(ac, {1}), 1e-5);
    check_close(mean(a), mean(ac), 1e-5);
    check_close(max(a, {0}), max(ac, {0}), 0);
    check_close(matmul(a, a.t()), matmul(ac, ac.t()), 1e-4);
    // the results were computed on the GPU and are valid only there until read
    const tensor c = mul(a, scalar(2.0));
    CHECK(c.storage()->valid_on(MEMRESOURCE_SINGLE_CUDA));
    CHECK_FALSE(c.storage()->valid_on(MEMRESOURCE_CPU));
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda: transfers through the staging buffers, around their 16 MiB chunks" *
          doctest::skip(!cuda::available())) {
    // See Note [pinned staging]: chunks of 16 MiB through two pinned buffers used in turn; one
    // chunk, a chunk and 4 bytes, and three chunks (both buffers reused, an uneven tail).
    cuda::init(0);
    const size_t chunk = (size_t{16} << 20) / sizeof(float);
    for (size_t n : {size_t{1}, size_t{3}, chunk - 1, chunk, chunk + 1, 10 * (size_t{1} << 20)}) {
        CAPTURE(n);
        const auto x = random_floats(n, static_cast<unsigned>(n % 1000));
        const tensor g = on_gpu(x, {static_cast<int64_t>(n)}); // host -> device
        CHECK_FALSE(g.storage()->valid_on(MEMRESOURCE_CPU));
        const tensor d = mul(g, scalar(2.0)); // a kernel reading the transferred bytes
        CHECK(g.to_vector<float>() == x);     // device -> host
        const auto twice = d.to_vector<float>();
        for (size_t i = 0; i < n; ++i) REQUIRE(twice[i] == 2 * x[i]);
    }
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda: eviction under a device memory cap" * doctest::skip(!cuda::available())) {
    cuda::init(0);
    cuda::set_memory_limit(0, size_t{8} << 20);
    const auto x = random_floats(1 << 20, 3); // 4 MiB each
    std::vector<tensor> ts;
    for (int i = 0; i < 6; ++i) ts.push_back(on_gpu(x, {1 << 20}));
    CHECK(cuda::memory_info(0).allocated_bytes <= (size_t{8} << 20));
    for (const tensor& t : ts) CHECK(t.to_vector<float>() == x);
    cuda::set_memory_limit(0, SIZE_MAX);
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda: ensure_registered registers the devices and keeps the default device") {
    const resource_id before = default_resource();
    if (!cuda::available()) {
        try {
            cuda::ensure_registered();
            FAIL("cuda::ensure_registered did not throw");
        } catch (const runtime_error& e) {
            CHECK(std::string(e.what()).find("CUDA is not available") != std::string::npos);
            CHECK(std::string(e.what()).find(cuda::unavailable_reason()) != std::string::npos);
        }
        CHECK_FALSE(cuda::initialized());
        CHECK(default_resource() == before);
        return;
    }
    cuda::ensure_registered();
    cuda::ensure_registered(); // idempotent
    CHECK(cuda::initialized());
    CHECK(default_resource() == before); // DLPack imports after init("cpu") rely on this
    for (int n = 0; n < cuda::device_count(); ++n) {
        CHECK(find_resource(cuda_resource(n)) != nullptr);
        CHECK(cuda::stream(n) != nullptr);
    }
}
