// isthmus::cuda: finds and loads the CUDA backend module with dlopen (libisthmus links no CUDA).
#include "isthmus/cuda.hpp"
#include "isthmus/error.hpp"

#include "cuda/module_abi.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace isthmus::cuda {

namespace {

// Note [cuda module search]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// The module is looked for, in order, at $ISTHMUS_CUDA_MODULE (a full path), next to the file this
// code was loaded from (libisthmus.so, the Python package's _isthmus*.so link, or a test
// executable), next to that file's real path, in the build tree that produced it, and finally by
// name through the dynamic loader's search path.
constexpr const char* module_name = "libisthmus_cuda.so";

struct loader {
    std::mutex mu;
    bool tried = false;
    std::string reason; // why the module or CUDA cannot be used ("" when it can)
    isthmus_cuda_module table{};
    int count = 0;
    bool registered = false;
};

loader& state() {
    static loader* l = new loader; // never destroyed: the module is never unloaded
    return *l;
}

#if ISTHMUS_CUDA_MODULE_BUILT
std::string self_path() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&state), &info) && info.dli_fname) return info.dli_fname;
    return {};
}

std::vector<std::string> candidates() {
    std::vector<std::string> c;
    if (const char* env = std::getenv("ISTHMUS_CUDA_MODULE"); env && *env) c.emplace_back(env);
    namespace fs = std::filesystem;
    if (const std::string self = self_path(); !self.empty()) {
        std::error_code ec;
        c.push_back((fs::path(self).parent_path() / module_name).string());
        const fs::path real = fs::canonical(self, ec);
        if (!ec) c.push_back((real.parent_path() / module_name).string());
    }
#ifdef ISTHMUS_CUDA_MODULE_BUILD_PATH
    c.emplace_back(ISTHMUS_CUDA_MODULE_BUILD_PATH);
#endif
    c.emplace_back(module_name);
    return c;
}

// Makes libisthmus's exported symbols visible to the module. Python opens extension modules
// with RTLD_LOCAL, so the module could not resolve them otherwise; re-opening an object that
// is already loaded with RTLD_NOLOAD | RTLD_GLOBAL promotes it (a no-op for an executable).
void promote_self() {
    const std::string self = self_path();
    if (self.empty()) return;
    if (void* h = dlopen(self.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) (void)h;
}
#endif

// Loads the module and asks it for the device count, once. Called with the mutex held.
void try_load(loader& l) {
    if (l.tried) return;
    l.tried = true;
#if !ISTHMUS_CUDA_MODULE_BUILT
    l.reason = "this build of isthmus has no CUDA backend module (it was configured with "
               "ISTHMUS_CUDA=OFF or without nvcc)";
    return;
#else
    promote_self();
    std::string errors;
    void* handle = nullptr;
    for (const std::string& path : candidates()) {
        if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) continue;
        dlerror();
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle) break;
        const char* e = dlerror();
        errors += "\n  " + path + ": " + (e ? e : "dlopen failed");
    }
    if (!handle) {
        l.reason = "the CUDA backend module " + std::string(module_name) + " could not be loaded" +
                   (errors.empty() ? " (not found next to libisthmus; set ISTHMUS_CUDA_MODULE)"
                                   : ":" + errors);
        return;
    }
    auto entry = reinterpret_cast<isthmus_cuda_entry_fn>(dlsym(handle, ISTHMUS_CUDA_ENTRY));
    if (!entry) {
        l.reason = std::string(module_name) + " has no entry point " + ISTHMUS_CUDA_ENTRY +
                   " (a module from another isthmus version?)";
        return;
    }
    if (entry(&l.table) != 0 || l.table.version != ISTHMUS_CUDA_MODULE_VERSION) {
        l.reason = std::string(module_name) + " speaks module ABI version " +
                   std::to_string(l.table.version) + ", this libisthmus expects " +
                   std::to_string(ISTHMUS_CUDA_MODULE_VERSION);
        return;
    }
    char err[1024] = {};
    int n = 0;
    if (l.table.device_count(&n, err, sizeof err) != 0) {
        l.reason = err;
        return;
    }
    if (n <= 0) {
        l.reason = "the CUDA runtime found no CUDA device";
        return;
    }
    l.count = n;
#endif
}

// The loaded module's table, or runtime_error saying why CUDA cannot run (`what` names the call).
const isthmus_cuda_module& module_or_throw(const char* what) {
    loader& l = state();
    std::lock_guard lk(l.mu);
    try_load(l);
    ISTHMUS_CHECK(l.reason.empty(), runtime_error, what, ": CUDA is not available: ", l.reason);
    return l.table;
}

void check_call(int rc, const char* err, const char* what) {
    ISTHMUS_CHECK(rc == 0, runtime_error, what, ": ", err);
}

void check_device(int device, const char* what) {
    const int n = device_count();
    ISTHMUS_CHECK(device >= 0 && device < n, value_error, what, ": CUDA device ", device,
                  " does not exist (this machine has ", n, " device", n == 1 ? "" : "s",
                  ", numbered 0..", n - 1, ")");
}

} // namespace

bool available() noexcept {
    try {
        loader& l = state();
        std::lock_guard lk(l.mu);
        try_load(l);
        return l.reason.empty();
    } catch (...) {
        return false;
    }
}

std::string unavailable_reason() {
    loader& l = state();
    std::lock_guard lk(l.mu);
    try_load(l);
    return l.reason;
}

int device_count() {
    module_or_throw("cuda::device_count");
    return state().count;
}

namespace {

// Registers the devices once (module_or_throw succeeded); `what` names the call in errors.
void register_once(const isthmus_cuda_module& m, const char* what) {
    loader& l = state();
    std::lock_guard lk(l.mu);
    if (l.registered) return;
    char err[1024] = {};
    check_call(m.register_devices(err, sizeof err), err, what);
    l.registered = true;
}

} // namespace

void init(int device) {
    const isthmus_cuda_module& m = module_or_throw("cuda::init");
    check_device(device, "cuda::init");
    register_once(m, "cuda::init");
    set_default_resource(cuda_resource(device));
}

void ensure_registered() {
    register_once(module_or_throw("cuda::ensure_registered"), "cuda::ensure_registered");
}

bool initialized() noexcept {
    loader& l = state();
    std::lock_guard lk(l.mu);
    return l.registered;
}

void synchronize(int device) {
    const isthmus_cuda_module& m = module_or_throw("cuda::synchronize");
    if (device != -1) check_device(device, "cuda::synchronize");
    char err[1024] = {};
    check_call(m.synchronize(device, err, sizeof err), err, "cuda::synchronize");
}

memory_stats memory_info(int device) {
    const isthmus_cuda_module& m = module_or_throw("cuda::memory_info");
    check_device(device, "cuda::memory_info");
    char err[1024] = {};
    size_t s[4] = {};
    check_call(m.memory_info(device, s, err, sizeof err), err, "cuda::memory_info");
    return {s[0], s[1], s[2], s[3]};
}

void set_memory_limit(int device, size_t bytes) {
    const isthmus_cuda_module& m = module_or_throw("cuda::set_memory_limit");
    check_device(device, "cuda::set_memory_limit");
    char err[1024] = {};
    check_call(m.set_memory_limit(device, bytes, err, sizeof err), err, "cuda::set_memory_limit");
}

size_t empty_cache(int device) {
    const isthmus_cuda_module& m = module_or_throw("cuda::empty_cache");
    check_device(device, "cuda::empty_cache");
    char err[1024] = {};
    size_t released = 0;
    check_call(m.empty_cache(device, &released, err, sizeof err), err, "cuda::empty_cache");
    return released;
}

void* stream(int device) {
    const isthmus_cuda_module& m = module_or_throw("cuda::stream");
    check_device(device, "cuda::stream");
    ISTHMUS_CHECK(initialized(), runtime_error,
                  "cuda::stream: call init(\"cuda\") or ensure_registered() first");
    char err[1024] = {};
    void* s = nullptr;
    check_call(m.stream(device, &s, err, sizeof err), err, "cuda::stream");
    return s;
}

void stream_wait_for(int device, void* other) {
    const isthmus_cuda_module& m = module_or_throw("cuda::stream_wait_for");
    check_device(device, "cuda::stream_wait_for");
    ISTHMUS_CHECK(initialized(), runtime_error,
                  "cuda::stream_wait_for: call init(\"cuda\") or ensure_registered() first");
    char err[1024] = {};
    check_call(m.stream_wait(device, other, 0, err, sizeof err), err, "cuda::stream_wait_for");
}

void make_stream_wait(void* other, int device) {
    const isthmus_cuda_module& m = module_or_throw("cuda::make_stream_wait");
    check_device(device, "cuda::make_stream_wait");
    ISTHMUS_CHECK(initialized(), runtime_error,
                  "cuda::make_stream_wait: call init(\"cuda\") or ensure_registered() first");
    char err[1024] = {};
    check_call(m.stream_wait(device, other, 1, err, sizeof err), err, "cuda::make_stream_wait");
}

int pointer_device(const void* ptr) {
    const isthmus_cuda_module& m = module_or_throw("cuda::pointer_device");
    char err[1024] = {};
    int d = -1;
    const int rc = m.pointer_device(ptr, &d, err, sizeof err);
    ISTHMUS_CHECK(rc == 0, value_error, "cuda::pointer_device: ", err);
    return d;
}

namespace {

// The sources handed to the module: kept for the process (blocks from a source go back to it
// even after another is set), with their names. Guarded by sources_mu.
struct kept_source {
    isthmus_cuda_memory_source c{};
    std::string name;
};
std::mutex sources_mu;
std::deque<kept_source>& kept_sources() {
    static auto* d = new std::deque<kept_source>; // never destroyed: the module holds pointers
    return *d;
}
std::string current_source = "isthmus";

} // namespace

void set_memory_source(const memory_source& source) {
    ISTHMUS_CHECK((source.allocate == nullptr) == (source.deallocate == nullptr), value_error,
                  "cuda::set_memory_source: give both allocate and deallocate (or neither, for "
                  "isthmus's own caching allocator)");
    ISTHMUS_CHECK(!source.allocate || !source.name.empty(), value_error,
                  "cuda::set_memory_source: a source needs a name (what memory_source_name() "
                  "reports)");
    ISTHMUS_CHECK(!source.allocate || source.name != "isthmus", value_error,
                  "cuda::set_memory_source: \"isthmus\" names the built-in caching allocator");
    const isthmus_cuda_module& m = module_or_throw("cuda::set_memory_source");
    register_once(m, "cuda::set_memory_source");
    std::lock_guard lk(sources_mu);
    const isthmus_cuda_memory_source* c = nullptr;
    if (source.allocate) {
        kept_source& k = kept_sources().emplace_back();
        k.name = source.name;
        k.c = {source.allocate, source.deallocate, source.ctx, k.name.c_str()};
        c = &k.c;
    }
    char err[1024] = {};
    check_call(m.set_memory_source(c, err, sizeof err), err, "cuda::set_memory_source");
    current_source = source.allocate ? source.name : "isthmus";
}

std::string memory_source_name() {
    std::lock_guard lk(sources_mu);
    return current_source;
}

} // namespace isthmus::cuda
