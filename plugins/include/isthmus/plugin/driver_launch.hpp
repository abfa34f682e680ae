// The host side of NVRTC kernels: the plugin's device code, loaded and launched by the CUDA driver.
#pragma once

// Part of the support code (support_code.hpp includes it): Note [NVRTC launcher] in calls.hpp.
// The driver library is opened at the first GPU launch, so a plugin with device code loads and
// runs on the CPU of a machine without CUDA. Only the driver API's C entry points are used,
// declared here (the plugin is compiled by g++ without the CUDA toolkit's headers).
#include "isthmus/plugin.hpp"

#include <dlfcn.h>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace isthmus::plugin::detail {

namespace cu {
using result = int;
using device = int;
using context = struct ctx_st*;
using module = struct mod_st*;
using function = struct func_st*;
using stream = struct stream_st*;
using deviceptr = unsigned long long;
constexpr int attribute_cc_major = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int attribute_cc_minor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

/// The driver entry points the launcher calls, from libcuda.so.1.
struct api {
    result (*init)(unsigned);
    result (*device_get)(device*, int);
    result (*device_attribute)(int*, int, device);
    result (*primary_ctx_retain)(context*, device);
    result (*ctx_push)(context);
    result (*ctx_pop)(context*);
    result (*module_load_data)(module*, const void*);
    result (*module_get_function)(function*, module, const char*);
    result (*module_get_global)(deviceptr*, size_t*, module, const char*);
    result (*launch)(function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     stream, void**, void**);
    result (*memcpy_htod_async)(deviceptr, const void*, size_t, stream);
    result (*memcpy_dtoh_async)(void*, deviceptr, size_t, stream);
    result (*stream_synchronize)(stream);
    result (*error_name)(result, const char**);
    result (*error_string)(result, const char**);
    result (*func_param_info)(function, size_t, size_t*, size_t*); ///< CUDA 12.4+, else null
};
} // namespace cu

/// The failure record's name in NVRTC's module: g_device_index_error of device.hpp, which has
/// external linkage under NVRTC (the Itanium mangling of isthmus::plugin::detail::...).
constexpr const char* k_device_error_symbol = "_ZN7isthmus6plugin6detail20g_device_index_errorE";

/// This plugin's library path without ".so" (the stem of its cache entry); "" when unknown.
ISTHMUS_PLUGIN_SUPPORT std::string library_stem() {
    Dl_info info{};
    if (!::dladdr(reinterpret_cast<void*>(&library_stem), &info) || !info.dli_fname) return {};
    std::string p = info.dli_fname;
    if (p.size() > 3 && p.compare(p.size() - 3, 3, ".so") == 0) p.resize(p.size() - 3);
    return p;
}

ISTHMUS_PLUGIN_SUPPORT bool has_device_code() {
    static const bool has = [] {
        const std::string stem = library_stem();
        return !stem.empty() && std::ifstream(stem + ".ptx").good();
    }();
    return has;
}

/// The driver, each device's module of this plugin and the entries found in it.
struct device_code {
    struct per_device {
        cu::device dev = 0; ///< the driver's handle, read once with the context
        cu::context ctx = nullptr;
        cu::module mod = nullptr;
        cu::deviceptr record = 0;
        std::map<std::string, cu::function> entries;
    };
    std::mutex mu;
    cu::api api{};
    std::string failure; ///< why the driver could not be opened ("" once it is)
    bool opened = false;
    std::map<int32_t, per_device> devices;

    static device_code& get() {
        static device_code* d = new device_code; // never destroyed: launches may outlive exit
        return *d;
    }
};

ISTHMUS_PLUGIN_SUPPORT std::string cu_error_text(const cu::api& api, cu::result r) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (api.error_name) api.error_name(r, &name);
    if (api.error_string) api.error_string(r, &text);
    return cat(name ? name : "CUDA error ", name ? "" : std::to_string(r), ": ",
               text ? text : "unknown");
}

ISTHMUS_PLUGIN_SUPPORT void cu_check(const cu::api& api, cu::result r, const entry_launch& l,
                                     const char* what) {
    if (r != 0)
        throw error(cat("CUDA ", what, " for kernel ", l.self->name, " on cuda:", l.device,
                        " failed: ", cu_error_text(api, r)));
}

/// Opens libcuda.so.1 and resolves the entry points (under the state's lock).
ISTHMUS_PLUGIN_SUPPORT void open_driver(device_code& dc) {
    if (dc.opened) return;
    if (!dc.failure.empty()) throw error(dc.failure);
    void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char* why = ::dlerror();
        dc.failure = cat("isthmus::plugin: cannot open the CUDA driver (libcuda.so.1): ",
                         why ? why : "not found");
        throw error(dc.failure);
    }
    bool all = true;
    auto sym = [&](auto& fn, const char* name, bool required = true) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
        if (!fn && required) {
            all = false;
            dc.failure = cat("isthmus::plugin: the CUDA driver has no ", name);
        }
    };
    cu::api& a = dc.api;
    sym(a.init, "cuInit");
    sym(a.device_get, "cuDeviceGet");
    sym(a.device_attribute, "cuDeviceGetAttribute");
    sym(a.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
    sym(a.ctx_push, "cuCtxPushCurrent_v2");
    sym(a.ctx_pop, "cuCtxPopCurrent_v2");
    sym(a.module_load_data, "cuModuleLoadData");
    sym(a.module_get_function, "cuModuleGetFunction");
    sym(a.module_get_global, "cuModuleGetGlobal_v2");
    sym(a.launch, "cuLaunchKernel");
    sym(a.memcpy_htod_async, "cuMemcpyHtoDAsync_v2");
    sym(a.memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2");
    sym(a.stream_synchronize, "cuStreamSynchronize");
    sym(a.error_name, "cuGetErrorName");
    sym(a.error_string, "cuGetErrorString");
    sym(a.func_param_info, "cuFuncGetParamInfo", false);
    if (!all) throw error(dc.failure);
    if (const cu::result r = a.init(0); r != 0) {
        dc.failure = cat("isthmus::plugin: cuInit failed: ", cu_error_text(a, r));
        throw error(dc.failure);
    }
    dc.opened = true;
}

/// Makes the device's primary context current for a scope (the context the host's streams
/// belong to), restoring the previous one.
struct context_scope {
    const cu::api& api;
    context_scope(const cu::api& a, cu::context c, const entry_launch& l) : api(a) {
        cu_check(api, api.ctx_push(c), l, "setting the device's context");
    }
    ~context_scope() {
        cu::context popped = nullptr;
        api.ctx_pop(&popped);
    }
};

/// The device's module of this plugin: the cubin for its architecture, else the PTX, which the
/// driver compiles for it (under the state's lock, with the device's context current).
ISTHMUS_PLUGIN_SUPPORT void load_module(device_code& dc, device_code::per_device& pd,
                                        const entry_launch& l) {
    const cu::api& a = dc.api;
    int major = 0, minor = 0;
    cu_check(a, a.device_attribute(&major, cu::attribute_cc_major, pd.dev), l,
             "reading the device");
    cu_check(a, a.device_attribute(&minor, cu::attribute_cc_minor, pd.dev), l,
             "reading the device");
    const std::string stem = library_stem();
    const std::string cubin = cat(stem, ".sm_", major, minor, ".cubin");
    std::string path = cubin;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        path = stem + ".ptx";
        in.open(path, std::ios::binary);
    }
    if (!in)
        throw error(cat("isthmus::plugin: kernel ", l.self->name, ": no device code for sm_", major,
                        minor, " (", cubin, " and ", stem,
                        ".ptx are missing; compile again, or list the architecture in "
                        "$ISTHMUS_CUDA_ARCH)"));
    std::ostringstream os;
    os << in.rdbuf();
    const std::string image = os.str(); // a PTX image must end in a NUL: std::string's does
    cu_check(a, a.module_load_data(&pd.mod, image.c_str()), l, cat("loading ", path).c_str());
    size_t bytes = 0;
    if (a.module_get_global(&pd.record, &bytes, pd.mod, k_device_error_symbol) != 0 ||
        bytes != sizeof(device_index_error))
        pd.record = 0;
}

ISTHMUS_PLUGIN_SUPPORT_CALL void launch_device_entry(const entry_launch& l) {
    device_code& dc = device_code::get();
    std::unique_lock lk(dc.mu);
    open_driver(dc);
    const cu::api& a = dc.api;
    device_code::per_device& pd = dc.devices[l.device];
    if (!pd.ctx) {
        cu_check(a, a.device_get(&pd.dev, l.device), l, "cuDeviceGet");
        cu_check(a, a.primary_ctx_retain(&pd.ctx, pd.dev), l, "retaining the primary context");
    }
    context_scope cs(a, pd.ctx, l);
    if (!pd.mod) load_module(dc, pd, l);
    const std::string name = cat(l.entry, l.checked_mode ? "_checked" : "");
    auto it = pd.entries.find(name);
    if (it == pd.entries.end()) {
        cu::function fn = nullptr;
        cu_check(a, a.module_get_function(&fn, pd.mod, name.c_str()), l,
                 cat("finding entry ", name).c_str());
        // See Note [argument blocks]: the device code must read the block the host writes.
        size_t offset = 0, size = 0;
        if (a.func_param_info && a.func_param_info(fn, 1, &offset, &size) == 0 &&
            size != l.block_size)
            throw error(cat("isthmus::plugin: kernel ", l.self->name, ": the device code takes a ",
                            size, "-byte argument block, the host passes ", l.block_size,
                            " bytes (the plugin's device code and library do not match)"));
        it = pd.entries.emplace(name, fn).first;
    }
    const int64_t count = l.range->end - l.range->begin;
    constexpr int64_t threads = 256;
    const unsigned blocks = cuda_blocks(count, threads);
    void* params[] = {const_cast<isthmus_range*>(l.range), const_cast<void*>(l.block)};
    const auto s = static_cast<cu::stream>(l.stream);
    if (!l.wait) {
        lk.unlock(); // the launch itself needs no lock; the wait below keeps it (one record)
        cu_check(a, a.launch(it->second, blocks, 1, 1, threads, 1, 1, 0, s, params, nullptr), l,
                 "kernel launch");
        return;
    }
    if (!pd.record)
        throw error(cat("isthmus::plugin: kernel ", l.self->name,
                        ": the device code has no failure record (", k_device_error_symbol, ")"));
    const device_index_error clear{};
    cu_check(a, a.memcpy_htod_async(pd.record, &clear, sizeof clear, s), l,
             "clearing the checked-access record");
    cu_check(a, a.launch(it->second, blocks, 1, 1, threads, 1, 1, 0, s, params, nullptr), l,
             "kernel launch");
    device_index_error got{};
    cu_check(a, a.memcpy_dtoh_async(&got, pd.record, sizeof got, s), l,
             "reading the checked-access record");
    cu_check(a, a.stream_synchronize(s), l, "kernel execution");
    if (got.failed) throw_device_index_error(got);
}

} // namespace isthmus::plugin::detail
