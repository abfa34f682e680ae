// A plugin compiled by nvcc (tests/plugins/cuda_plugin.cu): its CPU launchers against references
// everywhere, and on a GPU the same kernels on device data against the CPU results.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include "error_text.hpp"

#include <doctest/doctest.h>

#include <isthmus/cuda.hpp>
#include <isthmus/error.hpp>
#include <isthmus/ops/creation.hpp>
#include <isthmus/plugin_host.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace pl = isthmus::plugin_host;
using namespace isthmus;

namespace {

template <typename T>
tensor random_tensor(const shape_t& shape, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<T> v(static_cast<size_t>(numel_of(shape)));
    for (T& x : v) x = static_cast<T>(dist(rng));
    return tensor::from_vector(v, shape);
}

std::shared_ptr<pl::library> plugin() {
    return pl::load(CUDA_PLUGIN);
}

void run(const char* kernel, const shape_t& dims, std::vector<value> args) {
    pl::parallel_do(dims, args, *plugin()->get_kernel(kernel));
}

// References computed in double from the inputs' values.
std::vector<double> axpb_ref(const tensor& x, double a, double b) {
    std::vector<double> r = x.to(dtype::float64).to_vector<double>();
    for (double& v : r) v = a * v + b;
    return r;
}

std::vector<double> blur_ref(const tensor& x, const double w[3]) {
    const int64_t h = x.shape()[0], wd = x.shape()[1];
    std::vector<double> r(static_cast<size_t>(h * wd * 3));
    auto at = [&](int64_t i, int64_t j, int64_t c) {
        j = std::min(std::max<int64_t>(j, 0), wd - 1);
        return static_cast<double>(x.at<float>({i, j, c}));
    };
    for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < wd; ++j)
            for (int64_t c = 0; c < 3; ++c)
                r[static_cast<size_t>((i * wd + j) * 3 + c)] =
                    w[0] * at(i, j - 1, c) + w[1] * at(i, j, c) + w[2] * at(i, j + 1, c);
    return r;
}

void check_close(const std::vector<double>& got, const std::vector<double>& ref, double tol) {
    REQUIRE(got.size() == ref.size());
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i)
        bad += std::abs(got[i] - ref[i]) > tol * (1 + std::abs(ref[i]));
    CHECK(bad == 0);
}

// A copy of `t` whose only valid copy is on cuda:0.
tensor on_gpu(const tensor& t) {
    tensor g = t.contiguous().clone();
    g.lock(LOCK_READ, MEMRESOURCE_SINGLE_CUDA);
    g.unlock(LOCK_READ, MEMRESOURCE_SINGLE_CUDA);
    g.storage()->evict(MEMRESOURCE_CPU);
    return g;
}

constexpr double canary = -777.0;

// A 10 x 10 canary buffer (on cuda:0 when `gpu`) and its 4 x 4 block at (3, 3): the memory
// around the block is what a kernel must never touch.
struct fenced {
    tensor buffer;
    tensor block;
    explicit fenced(bool gpu) {
        const tensor b = tensor::from_vector(std::vector<double>(100, canary), {10, 10});
        buffer = gpu ? on_gpu(b) : b;
        block = buffer.slice(0, 3, 7).slice(1, 3, 7);
    }
    bool fence_intact() const {
        const std::vector<double> v = buffer.to_vector<double>();
        for (int64_t i = 0; i < 10; ++i)
            for (int64_t j = 0; j < 10; ++j)
                if (!(i >= 3 && i < 7 && j >= 3 && j < 7) &&
                    v[static_cast<size_t>(i * 10 + j)] != canary)
                    return false;
        return true;
    }
};

} // namespace

TEST_CASE("cuda plugin: kernels with device bodies get a CUDA launcher, host lambdas do not") {
    auto lib = plugin();
    for (const char* name : {"cu_axpb", "cu_index3", "cu_blur_rgb", "cu_shift_checked",
                             "cu_shift_clamped", "cu_axpb_declared", "cu_scale"}) {
        const isthmus_kernel* k = lib->get_kernel(name)->abi();
        CAPTURE(name);
        CHECK(static_cast<bool>(k->launch_cpu));
        CHECK(static_cast<bool>(k->launch_cuda));
        CHECK(k->device_types == ((1 << ISTHMUS_DEVICE_CPU) | (1 << ISTHMUS_DEVICE_CUDA)));
    }
    const isthmus_kernel* host = lib->get_kernel("cu_host_only")->abi();
    CHECK_FALSE(static_cast<bool>(host->launch_cuda));
    CHECK(host->device_types == (1 << ISTHMUS_DEVICE_CPU));
}

TEST_CASE("cuda plugin: CPU launchers match references, contiguous and strided") {
    for (const shape_t& shape : {shape_t{3, 4}, shape_t{300, 257}}) {
        const tensor x = random_tensor<double>({shape[1], shape[0]}, 3).t(); // non-contiguous
        tensor y = tensor::empty(shape, dtype::float64, MEMRESOURCE_CPU);
        run("cu_axpb", shape, {x, y, 1.5, -0.25});
        check_close(y.to_vector<double>(), axpb_ref(x, 1.5, -0.25), 0);
    }
    tensor out = tensor::empty({7, 9, 70}, dtype::int64, MEMRESOURCE_CPU);
    run("cu_index3", {7, 9, 70}, {out});
    bool ok = true;
    for (int64_t i = 0; i < 7; ++i)
        for (int64_t j = 0; j < 9; ++j)
            for (int64_t k = 0; k < 70; ++k)
                ok = ok && out.at<int64_t>({i, j, k}) == i * 10000 + j * 100 + k;
    CHECK(ok);

    const tensor img = random_tensor<float>({40, 33, 3}, 4);
    const tensor w = tensor::from_vector<float>({0.25f, 0.5f, 0.25f});
    const double wd[3] = {0.25, 0.5, 0.25};
    tensor blurred = tensor::empty({40, 33, 3}, dtype::float32, MEMRESOURCE_CPU);
    run("cu_blur_rgb", {40, 33}, {img, blurred, w});
    check_close(blurred.to(dtype::float64).to_vector<double>(), blur_ref(img, wd), 1e-6);

    const tensor xs = random_tensor<float>({5000, 2}, 5).select(1, 1); // a strided column
    tensor ys = tensor::empty({5000}, dtype::float32, MEMRESOURCE_CPU);
    run("cu_scale", {5000}, {xs, ys, 3.0});
    std::vector<double> sref = xs.to(dtype::float64).to_vector<double>();
    for (double& v : sref) v = static_cast<double>(3.0f * static_cast<float>(v));
    check_close(ys.to(dtype::float64).to_vector<double>(), sref, 0);

    tensor h = tensor::empty({10}, dtype::float64, MEMRESOURCE_CPU);
    run("cu_host_only", {10}, {h});
    for (int64_t i = 0; i < 10; ++i) CHECK(h.at<double>({i}) == static_cast<double>(i));
}

TEST_CASE("cuda plugin: 'checked access out of bounds on the CPU launcher is an index_error") {
    const int64_t n = 50000;
    const tensor x = random_tensor<double>({n}, 6);
    tensor y = tensor::from_vector(std::vector<double>(static_cast<size_t>(n), 0.0));
    run("cu_shift_checked", {n}, {x, y, int64_t{0}});
    CHECK(y.to_vector<double>() == x.to_vector<double>());
    const std::string e = error_of([&] { run("cu_shift_checked", {n}, {x, y, int64_t{1}}); });
    CHECK(contains(e, "cu_shift_checked: index " + std::to_string(n) +
                          " is out of bounds for dimension 0 with size " + std::to_string(n) +
                          " ('checked access)"));
    CHECK_THROWS_AS(run("cu_shift_checked", {n}, {x, y, int64_t{1}}), index_error);
}

TEST_CASE("a kernel with only a CUDA launcher raises a clear error without CUDA" *
          doctest::skip(cuda::available())) {
    auto lib = pl::load(CUDA_ONLY_PLUGIN);
    tensor y = tensor::from_vector(std::vector<float>(8, 1.0f));
    const value args[] = {y};
    const std::string e =
        error_of([&] { pl::parallel_do({8}, args, *lib->get_kernel("cuda_probe")); });
    CHECK(contains(e, "parallel_do(cuda_probe): the kernel runs only on CUDA"));
    CHECK(contains(e, "CUDA is not available here"));
    CHECK_THROWS_AS(pl::parallel_do({8}, args, *lib->get_kernel("cuda_probe")), runtime_error);
    CHECK(y.to_vector<float>() == std::vector<float>(8, 1.0f));
    CHECK((*lib->get_function("cuda_probe_launches"))().as_scalar().to<int64_t>() == 0);
}

// ---- on a GPU (skipped elsewhere) ------------------------------------------------------------

TEST_CASE("cuda plugin: the same kernels on GPU data match the CPU launchers" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    const resource_id gpu = cuda_resource(0);
    for (const shape_t& shape : {shape_t{3, 4}, shape_t{300, 257}, shape_t{1, 70001}}) {
        const tensor x = random_tensor<double>({shape[1], shape[0]}, 7);
        const tensor xt_gpu = on_gpu(x).t(); // a non-contiguous view of device memory
        tensor y = on_gpu(zeros(shape, dtype::float64, MEMRESOURCE_CPU));
        run("cu_axpb", shape, {xt_gpu, y, 1.5, -0.25});
        CHECK(y.storage()->valid_on(gpu));
        CHECK_FALSE(y.storage()->valid_on(MEMRESOURCE_CPU)); // ran on the GPU, nothing came back
        check_close(y.to_vector<double>(), axpb_ref(x.t(), 1.5, -0.25), 1e-12); // FMA on the GPU
    }
    tensor out = on_gpu(zeros({7, 9, 70}, dtype::int64, MEMRESOURCE_CPU));
    run("cu_index3", {7, 9, 70}, {out});
    tensor out_cpu = tensor::empty({7, 9, 70}, dtype::int64, MEMRESOURCE_CPU);
    set_default_resource(MEMRESOURCE_CPU);
    run("cu_index3", {7, 9, 70}, {out_cpu});
    CHECK(out.to_vector<int64_t>() == out_cpu.to_vector<int64_t>());

    const tensor img = random_tensor<float>({64, 129, 3}, 8);
    const tensor w = tensor::from_vector<float>({0.2f, 0.5f, 0.3f});
    tensor by_cpu = tensor::empty({64, 129, 3}, dtype::float32, MEMRESOURCE_CPU);
    run("cu_blur_rgb", {64, 129}, {img, by_cpu, w});
    cuda::init(0);
    tensor by_gpu = on_gpu(zeros({64, 129, 3}, dtype::float32, MEMRESOURCE_CPU));
    run("cu_blur_rgb", {64, 129}, {on_gpu(img), by_gpu, w});
    check_close(by_gpu.to(dtype::float64).to_vector<double>(),
                by_cpu.to(dtype::float64).to_vector<double>(), 1e-6);

    const tensor xs = random_tensor<float>({1 << 20}, 9);
    tensor ys = on_gpu(zeros({1 << 20}, dtype::float32, MEMRESOURCE_CPU));
    run("cu_scale", {1 << 20}, {on_gpu(xs), ys, -2.0});
    std::vector<double> sref = xs.to(dtype::float64).to_vector<double>();
    for (double& v : sref) v = static_cast<double>(-2.0f * static_cast<float>(v));
    check_close(ys.to(dtype::float64).to_vector<double>(), sref, 0);
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda plugin: 'checked access out of bounds on the GPU is the same index_error" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    const int64_t n = 50000;
    const tensor x = random_tensor<double>({n}, 10);
    tensor y = on_gpu(zeros({n}, dtype::float64, MEMRESOURCE_CPU));
    run("cu_shift_checked", {n}, {on_gpu(x), y, int64_t{0}});
    CHECK(y.storage()->valid_on(cuda_resource(0)));
    CHECK(y.to_vector<double>() == x.to_vector<double>());
    tensor y2 = on_gpu(zeros({n}, dtype::float64, MEMRESOURCE_CPU));
    const std::string e = error_of([&] {
        run("cu_shift_checked", {n}, {on_gpu(x), y2, int64_t{1}});
    });
    CHECK(contains(e, "cu_shift_checked: index " + std::to_string(n) +
                          " is out of bounds for dimension 0 with size " + std::to_string(n) +
                          " ('checked access)"));
    CHECK_THROWS_AS(run("cu_shift_checked", {n}, {on_gpu(x), y2, int64_t{-1}}), index_error);
    // the next launch on the same plugin starts clean
    run("cu_shift_checked", {n}, {on_gpu(x), y2, int64_t{0}});
    CHECK(y2.to_vector<double>() == x.to_vector<double>());
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda plugin: a CPU-only kernel on GPU data runs on the CPU" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    tensor h = on_gpu(zeros({100}, dtype::float64, MEMRESOURCE_CPU));
    run("cu_host_only", {100}, {h});
    CHECK(h.storage()->valid_on(MEMRESOURCE_CPU));
    for (int64_t i = 0; i < 100; ++i) CHECK(h.at<double>({i}) == static_cast<double>(i));
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("a kernel with only a CUDA launcher runs on the GPU, even for CPU data" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    set_default_resource(MEMRESOURCE_CPU);
    auto lib = pl::load(CUDA_ONLY_PLUGIN);
    const int64_t before = (*lib->get_function("cuda_probe_launches"))().as_scalar().to<int64_t>();
    tensor y = tensor::from_vector(std::vector<float>(8, 1.0f)); // valid on the CPU only
    const value args[] = {y};
    pl::parallel_do({8}, args, *lib->get_kernel("cuda_probe"));
    CHECK((*lib->get_function("cuda_probe_launches"))().as_scalar().to<int64_t>() == before + 1);
    CHECK(y.storage()->valid_on(cuda_resource(0)));
    CHECK(y.to_vector<float>() == std::vector<float>(8, 1.0f));
}

// ---- memory safety (docs/plugins.md, "Checked mode" and "Access modifiers") -----------------

TEST_CASE("cuda plugin: CPU launchers: empty dimensions, checked mode and shape rules") {
    tensor empty = zeros({0}, dtype::float64, MEMRESOURCE_CPU);
    tensor y = tensor::from_vector(std::vector<double>{1, 2});
    CHECK_THROWS_WITH_AS(run("cu_shift_clamped", {2}, {empty, y, int64_t{0}}),
                         doctest::Contains("has no element to map to: dimension 0 has size 0 "
                                           "('clamped access) in argument 1 (x)"),
                         index_error);
    CHECK(y.to_vector<double>() == std::vector<double>{1, 2});
    fenced x(false), out(false);
    {
        pl::checked_scope on;
        CHECK_THROWS_WITH_AS(run("cu_axpb", {100, 100}, {x.block, out.block, 2.0, 1.0}),
                             doctest::Contains("(unchecked view, checked mode) in argument 1 (x)"),
                             index_error);
    }
    CHECK_THROWS_AS(run("cu_axpb_declared", {100, 100}, {x.block, out.block, 2.0, 1.0}),
                    value_error);
    CHECK(x.fence_intact());
    CHECK(out.fence_intact());
}

TEST_CASE("cuda plugin: checked mode on the GPU: the 100 x 100 reproducer is an index_error" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    fenced x(true), y(true);
    {
        pl::checked_scope on;
        const std::string e = error_of([&] {
            run("cu_axpb", {100, 100}, {x.block, y.block, 2.0, 1.0});
        });
        CHECK(contains(e, "cu_axpb: index "));
        CHECK(contains(e, "(unchecked view, checked mode) in argument 1 (x): index ("));
        CHECK(contains(e, "into shape (4, 4)"));
        // one past the end in dimension 1 only: the record names it exactly
        CHECK(contains(error_of([&] {
                           run("cu_axpb", {4, 5}, {x.block, y.block, 2.0, 1.0});
                       }),
                       "cu_axpb: index 4 is out of bounds for dimension 1 with size 4 (unchecked "
                       "view, checked mode) in argument 1 (x): index ("));
        // the right dims run, with the same results as in normal mode
        run("cu_axpb", {4, 4}, {x.block, y.block, 2.0, 1.0});
        CHECK(y.buffer.storage()->valid_on(cuda_resource(0)));
    }
    CHECK(x.fence_intact());
    CHECK(y.fence_intact());
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j) CHECK(y.block.at<double>({i, j}) == 2.0 * canary + 1.0);
    // normal mode afterwards: no stale record, no wait
    tensor a = on_gpu(random_tensor<double>({64, 64}, 21));
    tensor b = on_gpu(zeros({64, 64}, dtype::float64, MEMRESOURCE_CPU));
    run("cu_axpb", {64, 64}, {a, b, 3.0, 0.0});
    check_close(b.to_vector<double>(), axpb_ref(a, 3.0, 0.0), 1e-12);
    CHECK_THROWS_AS(run("cu_axpb_declared", {100, 100}, {x.block, y.block, 2.0, 1.0}), value_error);
    set_default_resource(MEMRESOURCE_CPU);
}

TEST_CASE("cuda plugin: 'clamped into an empty dimension on the GPU is an index_error" *
          doctest::skip(!cuda::available())) {
    cuda::init(0);
    tensor empty = zeros({0}, dtype::float64, cuda_resource(0));
    tensor y = on_gpu(tensor::from_vector(std::vector<double>{1, 2, 3}));
    const std::string e = error_of([&] { run("cu_shift_clamped", {3}, {empty, y, int64_t{-1}}); });
    CHECK(contains(e, "cu_shift_clamped: index "));
    CHECK(contains(e, "has no element to map to: dimension 0 has size 0 ('clamped access) in "
                      "argument 1 (x)"));
    // every thread stopped at its failed access: nothing was written
    CHECK(y.to_vector<double>() == std::vector<double>{1, 2, 3});
    tensor x = on_gpu(tensor::from_vector(std::vector<double>{4, 5, 6}));
    run("cu_shift_clamped", {3}, {x, y, int64_t{-1}});
    CHECK(y.to_vector<double>() == std::vector<double>{4, 4, 5});
    set_default_resource(MEMRESOURCE_CPU);
}
