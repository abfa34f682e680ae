// CUDA benchmark: add vs cudaMemcpy GB/s, 8192 matmul (f32/bf16/f16), casts, reductions.
#include <isthmus/cuda.hpp>
#include <isthmus/ops.hpp>
#include <isthmus/storage.hpp>
#include <isthmus/tensor.hpp>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

using namespace isthmus;

namespace {

// Best of `reps` timings of f() followed by a device synchronisation, in seconds.
double best_of(int reps, const std::function<void()>& f) {
    double best = 1e30;
    for (int i = 0; i < reps; ++i) {
        cuda::synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        f();
        cuda::synchronize();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s < best) best = s;
    }
    return best;
}

} // namespace

int main() {
    if (!cuda::available()) {
        std::printf("no CUDA: %s\n", cuda::unavailable_reason().c_str());
        return 0;
    }
    cuda::init(0);
    const int64_t n = int64_t{1} << 28; // 1 GiB of float32 per operand
    // random inputs: constant data (ones, zeros) runs the matrix units faster than real data
    tensor a = rand({n}, dtype::float32), b = rand({n}, dtype::float32);
    tensor c = add(a, b);
    const double bytes = 3.0 * static_cast<double>(n) * 4;
    const double t_add = best_of(10, [&] { c = add(a, b); });
    void* d0 = a.lock(LOCK_READ, MEMRESOURCE_SINGLE_CUDA);
    void* d1 = c.lock(LOCK_WRITE, MEMRESOURCE_SINGLE_CUDA);
    cudaError_t copy_err = cudaSuccess;
    const double t_copy = best_of(10, [&] {
        // A device-to-device cudaMemcpy returns before the copy ends, and it runs on this
        // program's cudart's default stream, which cuda::synchronize() (isthmus's streams)
        // does not wait for: without this wait the first H200 run printed 235 TB/s.
        cudaError_t e = cudaMemcpy(d1, d0, size_t(n) * 4, cudaMemcpyDeviceToDevice);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) copy_err = e;
    });
    if (copy_err != cudaSuccess)
        std::printf("cudaMemcpy D2D failed: %s (the copy figure below is void)\n",
                    cudaGetErrorString(copy_err));
    c.unlock(LOCK_WRITE, MEMRESOURCE_SINGLE_CUDA);
    a.unlock(LOCK_READ, MEMRESOURCE_SINGLE_CUDA);
    std::printf("add float32 %lld: %.1f GB/s; cudaMemcpy D2D: %.1f GB/s (read+write); ratio %.2f\n",
                static_cast<long long>(n), bytes / t_add / 1e9, 2.0 * n * 4 / t_copy / 1e9,
                (bytes / t_add) / (2.0 * n * 4 / t_copy));

    const int64_t m = 8192;
    tensor x = rand({m, m}, dtype::float32), y = rand({m, m}, dtype::float32);
    tensor z = matmul(x, y);
    const double t_mm = best_of(5, [&] { z = matmul(x, y); });
    std::printf("matmul float32 %lld: %.0f GFLOP/s\n", static_cast<long long>(m),
                2.0 * m * m * m / t_mm / 1e9);
    // half inputs and output, float32 accumulation (cublasGemmStridedBatchedEx)
    for (dtype dt : {dtype::bfloat16, dtype::float16}) {
        tensor xh = rand({m, m}, dt), yh = rand({m, m}, dt);
        tensor zh = matmul(xh, yh);
        const double t = best_of(5, [&] { zh = matmul(xh, yh); });
        std::printf("matmul %s %lld: %.0f GFLOP/s\n", std::string(name(dt)).c_str(),
                    static_cast<long long>(m), 2.0 * m * m * m / t / 1e9);
    }

    // the newer kernels: a cast (float32 -> bfloat16), a bf16 add, prod and argmax reductions
    tensor hb = a.to(dtype::bfloat16);
    const double t_cast = best_of(10, [&] { hb = a.to(dtype::bfloat16); });
    std::printf("cast float32 -> bfloat16 %lld: %.1f GB/s\n", static_cast<long long>(n),
                6.0 * n / t_cast / 1e9);
    // two operands: add(hb, hb) reads one buffer twice, the second read from cache (6 TB/s)
    tensor hb2 = b.to(dtype::bfloat16);
    tensor hc = add(hb, hb2);
    const double t_hadd = best_of(10, [&] { hc = add(hb, hb2); });
    std::printf("add bfloat16 %lld: %.1f GB/s\n", static_cast<long long>(n),
                6.0 * n / t_hadd / 1e9);
    tensor r = prod(a);
    const double t_prod = best_of(10, [&] { r = prod(a); });
    tensor am = argmax(a.view({1 << 14, n >> 14}), 1);
    const double t_arg = best_of(10, [&] { am = argmax(a.view({1 << 14, n >> 14}), 1); });
    std::printf("prod float32 %lld: %.1f GB/s; argmax rows: %.1f GB/s\n", static_cast<long long>(n),
                4.0 * n / t_prod / 1e9, 4.0 * n / t_arg / 1e9);

    tensor h = ones({n}, dtype::float32, MEMRESOURCE_CPU);
    h.to_vector<float>(); // valid on the CPU
    const double t_up = best_of(5, [&] {
        h.lock(LOCK_WRITE, MEMRESOURCE_CPU); // makes the GPU copy stale
        h.unlock(LOCK_WRITE, MEMRESOURCE_CPU);
        h.lock(LOCK_READ, MEMRESOURCE_SINGLE_CUDA);
        h.unlock(LOCK_READ, MEMRESOURCE_SINGLE_CUDA);
    });
    const double t_down = best_of(5, [&] {
        h.lock(LOCK_WRITE, MEMRESOURCE_SINGLE_CUDA);
        h.unlock(LOCK_WRITE, MEMRESOURCE_SINGLE_CUDA);
        h.lock(LOCK_READ, MEMRESOURCE_CPU);
        h.unlock(LOCK_READ, MEMRESOURCE_CPU);
    });
    std::printf("host->device %.1f GB/s, device->host %.1f GB/s (pinned staging)\n",
                n * 4.0 / t_up / 1e9, n * 4.0 / t_down / 1e9);
    return 0;
}
