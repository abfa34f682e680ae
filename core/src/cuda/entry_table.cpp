// libisthmus_cuda.so's entry point: the plain C table that libisthmus loads with dlopen.
#include "cuda/backend.hpp"
#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "cuda/module_abi.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

namespace isthmus::cudabk {

namespace {

std::mutex g_mu;
std::vector<std::shared_ptr<device>>& devices() {
    static auto* d = new std::vector<std::shared_ptr<device>>; // lives until process exit
    return *d;
}

// Runs `f`, turning an exception into a nonzero return and a message (nothing is thrown across
// the C boundary).
template <typename F>
int guarded(char* err, size_t errlen, F&& f) {
    try {
        f();
        return 0;
    } catch (const std::exception& e) {
        std::snprintf(err, errlen, "%s", e.what());
    } catch (...) {
        std::snprintf(err, errlen, "unknown error in the CUDA backend");
    }
    return 1;
}

int device_count(int* count, char* err, size_t errlen) {
    *count = 0;
    const cudaError_t rc = cudaGetDeviceCount(count);
    if (rc != cudaSuccess) {
        cudaGetLastError();
        std::snprintf(err, errlen, "cudaGetDeviceCount failed with %s (%s)%s", cudaGetErrorName(rc),
                      cudaGetErrorString(rc),
                      rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice
                          ? ": no usable NVIDIA driver or GPU on this machine"
                          : "");
        *count = 0;
        return 1;
    }
    return 0;
}

int register_devices(char* err, size_t errlen) {
    return guarded(err, errlen, [] {
        std::lock_guard lk(g_mu);
        if (!devices().empty()) return;
        int n = 0;
        ISTHMUS_CUDA_CHECK(cudaGetDeviceCount(&n));
        // Everything that can fail (streams, cuBLAS handles) is made before anything is
        // registered, so a failure leaves nothing half registered and a later call can retry.
        std::vector<std::shared_ptr<device>> made;
        std::vector<std::shared_ptr<cuda_compute>> computes;
        for (int i = 0; i < n; ++i) {
            made.push_back(std::make_shared<device>(i));
            computes.push_back(std::make_shared<cuda_compute>(*made.back()));
        }
        for (size_t i = 0; i < made.size(); ++i) {
            register_resource(made[i]);
            backend::register_compute(made[i]->id(), computes[i]);
        }
        devices() = std::move(made);
    });
}

device& dev(int i) {
    std::lock_guard lk(g_mu);
    ISTHMUS_CHECK(i >= 0 && static_cast<size_t>(i) < devices().size(), value_error, "CUDA device ",
                  i, " is not registered (", devices().size(), " are)");
    return *devices()[static_cast<size_t>(i)];
}

int synchronize(int device_index, char* err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (device_index >= 0) return dev(device_index).synchronize();
        std::vector<std::shared_ptr<device>> all;
        {
            std::lock_guard lk(g_mu);
            all = devices();
        }
        for (auto& d : all) d->synchronize();
    });
}

int memory_info(int device_index, size_t* stats, char* err, size_t errlen) {
    return guarded(err, errlen, [&] {
        caching_allocator& a = dev(device_index).allocator();
        stats[0] = a.allocated();
        stats[1] = a.cached();
        stats[2] = a.limit();
        stats[3] = a.mallocs();
    });
}

int set_memory_limit(int device_index, size_t bytes, char* err, size_t errlen) {
    return guarded(err, errlen, [&] {
        device& d = dev(device_index);
        d.allocator().set_limit(bytes);
        d.allocator().release_cache(d.stream());
    });
}

int empty_cache(int device_index, size_t* released, char* err, size_t errlen) {
    return guarded(err, errlen, [&] {
        device& d = dev(device_index);
        *released = d.allocator().release_cache(d.stream());
    });
}

int set_memory_source(const isthmus_cuda_memory_source* source, char* err, size_t errlen) {
    return guarded(err, errlen, [&] {
        ISTHMUS_CHECK(!source || (source->allocate && source->deallocate), value_error,
                      "a memory source needs both an allocate and a deallocate function");
        set_device_memory_source(source);
        std::vector<std::shared_ptr<device>> all;
        {
            std::lock_guard lk(g_mu);
            all = devices();
        }
        // the cached blocks go back to the driver: the source serves what comes next
        if (source)
            for (auto& d : all) d->allocator().release_cache(d->stream());
    });
}

int stream(int device_index, void** out, char* err, size_t errlen) {
    return guarded(err, errlen, [&] { *out = dev(device_index).stream(); });
}

int stream_wait(int device_index, void* other, int other_waits, char* err, size_t errlen) {
    return guarded(err, errlen, [&] {
        device& d = dev(device_index);
        // An event is recorded on a stream of its own device: `other`'s device for a handle (a
        // consumer's stream may be on another GPU), the device's own for 1 and 2 (its default
        // streams, current under stream_after's guard). Waiting across devices is allowed.
        const auto o = static_cast<cudaStream_t>(other);
        int other_device = d.ordinal();
        if (o != nullptr && o != cudaStreamLegacy && o != cudaStreamPerThread &&
            cudaStreamGetDevice(o, &other_device) != cudaSuccess) {
            cudaGetLastError(); // not a stream the driver knows: the record below reports it
            other_device = d.ordinal();
        }
        if (other_waits)
            stream_after(d.ordinal(), d.stream(), o);
        else
            stream_after(other_device, o, d.stream());
    });
}

int pointer_device(const void* ptr, int* device_out, char* err, size_t errlen) {
    return guarded(err, errlen, [&] {
        cudaPointerAttributes a{};
        const cudaError_t rc = cudaPointerGetAttributes(&a, ptr);
        if (rc != cudaSuccess) cudaGetLastError();
        ISTHMUS_CHECK(rc == cudaSuccess &&
                          (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged),
                      value_error, "address ", ptr, " is not CUDA device memory");
        *device_out = a.device;
    });
}

} // namespace

} // namespace isthmus::cudabk

extern "C" __attribute__((visibility("default"))) int
isthmus_cuda_module_v4(isthmus_cuda_module* table) {
    using namespace isthmus::cudabk;
    table->version = ISTHMUS_CUDA_MODULE_VERSION;
    table->device_count = &device_count;
    table->register_devices = &register_devices;
    table->synchronize = &synchronize;
    table->memory_info = &memory_info;
    table->set_memory_limit = &set_memory_limit;
    table->empty_cache = &empty_cache;
    table->stream = &stream;
    table->stream_wait = &stream_wait;
    table->pointer_device = &pointer_device;
    table->set_memory_source = &set_memory_source;
    return 0;
}
