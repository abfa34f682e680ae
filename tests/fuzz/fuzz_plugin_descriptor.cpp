// libFuzzer target: plugin descriptors built from fuzz bytes, through the loader's validation
// and then every host path that reads a descriptor (listings, lookups, calls, kernel launches).
//
// Note [descriptor fuzzing through load]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The validator is private to plugins/src/loader.cpp, so the target goes through the public load():
// a shim plugin (fuzz_plugin_shim.c) returns the descriptor this file builds, and each input loads
// the shim under a fresh hard-link name (the loader keys its registry by path; glibc maps the one
// file once, so the shim's global is shared by all names). Descriptors must stay valid while the
// registry holds their library, so each is kept (a few hundred bytes per input).
#include "fuzz_support.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/plugin_host.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace q = isthmus;
namespace pl = isthmus::plugin_host;
namespace fs = std::filesystem;
using q::fuzz::fail;

namespace {

// What the plugin's functions and launchers do, set per input.
struct behaviour {
    uint8_t result_kind = 0;
    int32_t result_dtype = 0;
    int32_t error_code = 0;
    int32_t tensor_ndim = 0;
    int64_t tensor_shape[4] = {};
    const isthmus_type* object_type = nullptr;
};
behaviour g_main; // read by fake_impl, which the host calls on this thread

int fake_impl(const isthmus_function*, isthmus_call* call, const isthmus_value*, int32_t,
              isthmus_value* result) {
    const behaviour& b = g_main;
    if (b.error_code) {
        call->host->set_error(call, b.error_code, "fuzz: reported error");
        return 1;
    }
    result->dtype = b.result_dtype;
    switch (b.result_kind % 9) {
    case 0:
        result->kind = ISTHMUS_VALUE_NONE;
        break;
    case 1:
        result->kind = ISTHMUS_VALUE_BOOL;
        result->u.i = 1;
        break;
    case 2:
        result->kind = ISTHMUS_VALUE_INT;
        result->u.i = -7;
        break;
    case 3:
        result->kind = ISTHMUS_VALUE_FLOAT;
        result->u.f = 0.5;
        break;
    case 4:
        result->kind = ISTHMUS_VALUE_COMPLEX;
        result->u.c[0] = 1;
        result->u.c[1] = 2;
        break;
    case 5:
        result->kind = ISTHMUS_VALUE_STRING;
        result->u.s.data = "abc";
        result->u.s.size = b.result_dtype & 3;
        break;
    case 6: {
        // A well-formed shape too big to allocate here becomes 2 x 2; overflowing or negative
        // sizes go through (the host must refuse them).
        int64_t shape[4] = {b.tensor_shape[0], b.tensor_shape[1], b.tensor_shape[2],
                            b.tensor_shape[3]};
        long double bytes = 16;
        bool negative = false;
        for (int i = 0; i < b.tensor_ndim && i < 4; ++i) {
            negative |= shape[i] < 0;
            bytes *= static_cast<long double>(shape[i] ? shape[i] : 1);
        }
        if (!negative && bytes > (64 << 20) && bytes < 9.2e18L)
            shape[0] = shape[1] = 2, shape[2] = shape[3] = 0;
        return call->host->new_tensor(call, b.result_dtype, b.tensor_ndim, shape, result);
    }
    case 7:
        if (!b.object_type) return 0; // none
        result->kind = ISTHMUS_VALUE_OBJECT;
        result->u.o.instance = &g_main;
        result->u.o.type = b.object_type;
        break;
    default:
        result->kind = 1000 + b.result_kind;
        break; // not a value kind
    }
    return 0;
}

int fake_launch(const isthmus_kernel*, isthmus_call* call, const isthmus_range* range,
                const isthmus_value*, int32_t) {
    if (range->ndim < 1 || range->ndim > 4 || range->begin > range->end)
        fail("kernel launch", "malformed range");
    (void)call;
    return 0;
}

int fake_launch_cuda(const isthmus_kernel*, isthmus_call*, const isthmus_range*,
                     const isthmus_value*, int32_t, int32_t, void*) {
    fail("kernel launch", "CUDA launcher called without CUDA");
}

void fake_destroy(const isthmus_type*, void*) {}
int fake_get(const isthmus_field*, isthmus_call*, void*, isthmus_value* r) {
    r->kind = ISTHMUS_VALUE_INT;
    r->dtype = ISTHMUS_DT_INT64;
    r->u.i = 3;
    return 0;
}
int fake_set(const isthmus_field*, isthmus_call*, void*, const isthmus_value*) {
    return 0;
}
int fake_add(const isthmus_event*, isthmus_call*, void*, isthmus_callback cb) {
    if (cb.release) cb.release(cb.data);
    return 0;
}
int fake_clear(const isthmus_event*, isthmus_call*, void*) {
    return 0;
}
int64_t fake_count(const isthmus_event*, void*) {
    return 0;
}

// Everything one descriptor points at.
struct arena {
    std::deque<std::string> strings;
    std::deque<std::vector<isthmus_param>> params;
    std::vector<isthmus_function> functions;
    std::vector<isthmus_kernel> kernels;
    std::vector<isthmus_type> types;
    std::deque<std::vector<isthmus_field>> fields;
    std::deque<std::vector<isthmus_function>> methods;
    std::deque<std::vector<isthmus_event>> events;
    isthmus_plugin desc{};
};

class builder {
public:
    builder(q::fuzz::reader& r, arena& a) : r_(r), a_(a) {}

    // A name: often one of a few (so names collide), sometimes NULL, empty or arbitrary.
    const char* name() {
        switch (r_.pick(8)) {
        case 0:
            return nullptr;
        case 1:
            return keep("");
        case 2:
            return keep(r_.str(12));
        default:
            return keep(std::string(1, static_cast<char>('f' + r_.pick(3))));
        }
    }
    const char* text() { return r_.pick(6) == 0 ? nullptr : keep(r_.str(16)); }
    // A count: mostly 0..3, sometimes negative, never more than the arrays built (at most 4):
    // that an array is as long as its count is the plugin's part of the contract, which no
    // host can check (Note [descriptor validation] in plugins/src/loader.cpp).
    int32_t count(int32_t most = 3) {
        switch (r_.pick(10)) {
        case 0:
            return -static_cast<int32_t>(r_.pick(3)) - 1;
        case 1: {
            const auto v = r_.get<int32_t>();
            return v > 4 ? (v & 3) : v;
        }
        default:
            return static_cast<int32_t>(r_.pick(static_cast<unsigned>(most) + 1));
        }
    }
    int32_t code(int32_t lo, int32_t hi) { // a code in [lo, hi], sometimes outside
        return r_.pick(8) == 0
                   ? r_.get<int32_t>()
                   : lo + static_cast<int32_t>(r_.pick(static_cast<unsigned>(hi - lo + 1)));
    }
    // The array for a count: NULL sometimes, else as many entries as the count says (up to 4).
    template <typename T>
    T* array(std::vector<T>& v, int32_t n) {
        if (n <= 0 && r_.flag()) return nullptr;
        if (r_.pick(8) == 0) return nullptr;
        v.resize(static_cast<size_t>(n > 0 ? (n < 4 ? n : 4) : 0));
        return v.data();
    }
    int32_t clamp_count(int32_t n) const { return n > 4 ? 4 : n; }

    const isthmus_param* params(int32_t n) {
        a_.params.emplace_back();
        isthmus_param* p = array(a_.params.back(), n);
        for (int32_t i = 0; p && i < clamp_count(n); ++i)
            p[i] = {name(),
                    code(0, 11),
                    code(-1, 15),
                    code(-2, 5),
                    code(-1, 5),
                    static_cast<uint32_t>(r_.pick(4)),
                    text(),
                    a_.types.empty() || r_.flag()
                        ? nullptr
                        : &a_.types[r_.pick(static_cast<unsigned>(a_.types.size()))]};
        return p;
    }
    isthmus_function function() {
        isthmus_function f{};
        f.name = name();
        f.signature = text();
        f.doc = text();
        f.nparams = count();
        f.params = params(f.nparams);
        f.impl = r_.pick(8) ? fake_impl : nullptr;
        return f;
    }

    const isthmus_plugin& build() {
        isthmus_plugin& d = a_.desc;
        d.abi_version = r_.pick(32) ? ISTHMUS_PLUGIN_ABI_VERSION : r_.get<uint32_t>();
        d.struct_size = r_.pick(16) ? sizeof(isthmus_plugin) : r_.get<uint16_t>();
        d.name = r_.pick(16) ? keep("fz" + r_.str(6)) : name();
        d.description = text();
        // Types first: parameters and results point at them.
        d.ntypes = count(2);
        a_.types.reserve(4);
        if (isthmus_type* t = array(a_.types, d.ntypes)) {
            for (int32_t i = 0; i < clamp_count(d.ntypes); ++i) {
                t[i].name = name();
                t[i].doc = text();
                t[i].destroy = r_.pick(8) ? fake_destroy : nullptr;
                t[i].nfields = count(2);
                a_.fields.emplace_back();
                t[i].fields = array(a_.fields.back(), t[i].nfields);
                for (int32_t j = 0; t[i].fields && j < clamp_count(t[i].nfields); ++j)
                    a_.fields.back()[static_cast<size_t>(j)] = {
                        name(), text(), r_.pick(8) ? fake_get : nullptr,
                        r_.flag() ? fake_set : nullptr, nullptr};
                t[i].nmethods = count(2);
                a_.methods.emplace_back();
                t[i].methods = array(a_.methods.back(), t[i].nmethods);
                for (int32_t j = 0; t[i].methods && j < clamp_count(t[i].nmethods); ++j)
                    a_.methods.back()[static_cast<size_t>(j)] = function();
                t[i].nevents = count(1);
                a_.events.emplace_back();
                t[i].events = array(a_.events.back(), t[i].nevents);
                for (int32_t j = 0; t[i].events && j < clamp_count(t[i].nevents); ++j)
                    a_.events.back()[static_cast<size_t>(j)] = {name(),
                                                                text(),
                                                                r_.pick(8) ? fake_add : nullptr,
                                                                r_.pick(8) ? fake_clear : nullptr,
                                                                r_.pick(8) ? fake_count : nullptr,
                                                                nullptr};
            }
            d.types = t;
        } else {
            d.types = nullptr;
            a_.types.clear();
        }
        d.nfunctions = count();
        d.functions = array(a_.functions, d.nfunctions);
        for (int32_t i = 0; d.functions && i < clamp_count(d.nfunctions); ++i)
            a_.functions[static_cast<size_t>(i)] = function();
        d.nkernels = count(2);
        d.kernels = array(a_.kernels, d.nkernels);
        for (int32_t i = 0; d.kernels && i < clamp_count(d.nkernels); ++i) {
            isthmus_kernel& k = a_.kernels[static_cast<size_t>(i)];
            k.name = name();
            k.signature = text();
            k.doc = text();
            k.nparams = count();
            k.params = params(k.nparams);
            k.pos_ndim = code(0, 5);
            k.device_types = code(0, 7);
            k.launch_cpu = r_.pick(4) ? fake_launch : nullptr;
            k.launch_cuda = r_.pick(4) ? nullptr : fake_launch_cuda;
        }
        return d;
    }

private:
    const char* keep(std::string s) { return a_.strings.emplace_back(std::move(s)).c_str(); }

    q::fuzz::reader& r_;
    arena& a_;
};

// The argument values calls pick from.
const std::vector<q::value>& arg_pool() {
    static const std::vector<q::value> v = {q::value(),
                                            q::value(1.5),
                                            q::value(int64_t{7}),
                                            q::value(true),
                                            q::value("s"),
                                            q::value(q::zeros({2, 3})),
                                            q::value(q::zeros({3}, q::dtype::float64)),
                                            q::value(q::zeros({}, q::dtype::int32)),
                                            q::value::make_cell({2}),
                                            q::value(q::zeros({4}, q::dtype::uint8))};
    return v;
}

struct shim {
    std::string path;
    const isthmus_plugin** slot = nullptr;
    fs::path dir;
};

shim& the_shim() {
    static shim s = [] {
        shim out;
        out.path = FUZZ_PLUGIN_SHIM;
        void* h = ::dlopen(out.path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) fail("setup", std::string("cannot load the shim: ") + ::dlerror());
        out.slot = static_cast<const isthmus_plugin**>(::dlsym(h, "isthmus_fuzz_descriptor"));
        if (!out.slot) fail("setup", "the shim has no isthmus_fuzz_descriptor");
        // Next to the shim: hard links need the same file system.
        out.dir = fs::path(out.path).parent_path() / ("links." + std::to_string(::getpid()));
        fs::create_directories(out.dir);
        return out;
    }();
    return s;
}

void exercise(const std::shared_ptr<pl::library>& lib, q::fuzz::reader& r, const arena& a) {
    auto ok = [](const char* what, auto&& f) { q::fuzz::user_errors_ok(what, f, true); };
    ok("describe", [&] { (void)lib->describe(); });
    ok("names", [&] {
        (void)lib->type_names();
        for (const std::string& n : lib->function_names()) {
            (void)lib->has_function(n);
            auto f = lib->get_function(n);
            (void)f->signature();
            (void)f->to_string();
            for (int calls = 0; calls < 2; ++calls) {
                g_main = {};
                g_main.result_kind = r.get<uint8_t>();
                g_main.result_dtype = static_cast<int32_t>(r.pick(18)) - 1;
                g_main.error_code = r.pick(4) == 0 ? static_cast<int32_t>(r.pick(8)) : 0;
                g_main.tensor_ndim = static_cast<int32_t>(r.pick(6)) - 1;
                for (auto& s : g_main.tensor_shape) s = r.size_like();
                if (!a.types.empty() && r.flag())
                    g_main.object_type = &a.types[r.pick(static_cast<unsigned>(a.types.size()))];
                std::vector<q::value> args(r.pick(4));
                for (auto& v : args)
                    v = arg_pool()[r.pick(static_cast<unsigned>(arg_pool().size()))];
                ok("call", [&] {
                    q::value res = f->call(args);
                    if (res.is_object()) {
                        if (auto o =
                                std::dynamic_pointer_cast<pl::plugin_object>(res.as_object())) {
                            (void)o->to_string();
                            for (const std::string& fld : o->fields())
                                ok("get", [&] { (void)o->get(fld); });
                            for (const std::string& m : o->methods())
                                ok("method", [&] { (void)o->call(m, {}); });
                            for (const std::string& e : o->events())
                                ok("event", [&] { (void)o->listener_count(e); });
                        }
                    }
                });
            }
        }
        for (const std::string& n : lib->kernel_names()) {
            auto k = lib->get_kernel(n);
            (void)k->to_string();
            q::shape_t dims(r.pick(6));
            for (auto& d : dims) d = static_cast<int64_t>(r.pick(5)) - (r.pick(8) == 0);
            std::vector<q::value> args(r.pick(4));
            for (auto& v : args) v = arg_pool()[r.pick(static_cast<unsigned>(arg_pool().size()))];
            ok("parallel_do", [&] { pl::parallel_do(dims, args, *k); });
        }
    });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static std::deque<arena> kept; // Note [descriptor fuzzing through load]
    static uint64_t counter = 0;
    shim& s = the_shim();
    q::fuzz::reader r(data, size);
    arena& a = kept.emplace_back();
    const isthmus_plugin* desc = r.pick(64) ? &builder(r, a).build() : nullptr;
    *s.slot = desc;

    const fs::path link = s.dir / ("p" + std::to_string(counter++) + ".so");
    std::error_code ec;
    fs::create_hard_link(s.path, link, ec);
    if (ec) fail("setup", "cannot link " + link.string() + ": " + ec.message());
    std::shared_ptr<pl::library> lib;
    q::fuzz::user_errors_ok(
        "load", [&] { lib = pl::load(link.string()); }, true);
    fs::remove(link, ec);
    if (lib)
        exercise(lib, r, a);
    else
        kept.pop_back(); // refused: nothing refers to the descriptor
    *s.slot = nullptr;
    return 0;
}
