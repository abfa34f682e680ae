// The plugin loader (Boost.DLL): search path, entry point, ABI version check, registry.
#ifndef BOOST_DLL_USE_STD_FS
#define BOOST_DLL_USE_STD_FS
#endif
#include "call_context.hpp"

#include <boost/dll/shared_library.hpp>

#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

namespace isthmus::plugin_host {

namespace fs = std::filesystem;

struct library::impl {
    boost::dll::shared_library lib;
};

library::library(std::unique_ptr<impl> p, const isthmus_plugin* desc, std::string path)
    : impl_(std::move(p)), desc_(desc), name_(desc->name ? desc->name : "?"),
      path_(std::move(path)) {}

// Note [no unload]
// ~~~~~~~~~~~~~~~~
// A loaded plugin is never unloaded. Its code may still be referenced by objects the host holds
// (types' destroy functions, callbacks stored in events, thread_local destructors, atexit handlers
// of C++ statics), and unloading under them is a classic crash at exit. The registry keeps every
// library for the life of the process, so "keep libraries loaded while any of their functions may
// run" holds trivially; loading one file twice returns the same library.
library::~library() = default;

namespace {

std::mutex g_mu;
std::map<std::string, std::shared_ptr<library>>& registry() {
    static auto* r = new std::map<std::string, std::shared_ptr<library>>(); // never destroyed
    return *r;
}

bool looks_like_path(const std::string& s) {
    return s.find('/') != std::string::npos ||
           (s.size() > 3 && s.compare(s.size() - 3, 3, ".so") == 0);
}

// Resolves a name to a file: ISTHMUS_PLUGIN_PATH entries, then the working directory.
fs::path find_plugin(const std::string& what) {
    if (looks_like_path(what)) {
        ISTHMUS_CHECK(fs::exists(what), runtime_error, "load plugin: no such file \"", what, "\"");
        return fs::path(what);
    }
    std::vector<fs::path> dirs;
    if (const char* env = std::getenv("ISTHMUS_PLUGIN_PATH")) {
        std::string s = env;
        size_t start = 0;
        while (start <= s.size()) {
            const size_t end = std::min(s.find(':', start), s.size());
            if (end > start) dirs.emplace_back(s.substr(start, end - start));
            start = end + 1;
        }
    }
    dirs.push_back(fs::current_path());
    std::string searched;
    for (const fs::path& d : dirs) {
        for (const std::string& f : {what, "lib" + what + ".so", what + ".so"}) {
            const fs::path p = d / f;
            std::error_code ec;
            if (fs::is_regular_file(p, ec)) return p;
        }
        searched += "\n  " + d.string();
    }
    ISTHMUS_THROW(runtime_error, "load plugin: no plugin named \"", what, "\" (tried ", what,
                  ", lib", what, ".so and ", what,
                  ".so in ISTHMUS_PLUGIN_PATH, then the working directory):", searched);
}

void validate(const isthmus_plugin& d, const std::string& path) {
    // See Note [checked mode in the ABI]: `features` was appended within version 1, so a descriptor
    // may end before it.
    ISTHMUS_CHECK(d.struct_size >= offsetof(isthmus_plugin, features), runtime_error, "plugin ",
                  path, ": descriptor is too small (", d.struct_size, " bytes, expected at least ",
                  offsetof(isthmus_plugin, features), ")");
    // Note [plugin definition errors] (plugin.hpp): an empty name carries the definition's error.
    ISTHMUS_CHECK(!(d.name && !*d.name && d.description), runtime_error, "load plugin: \"", path,
                  "\" failed to define itself: ", d.description ? d.description : "");
    ISTHMUS_CHECK(d.name && *d.name, runtime_error, "plugin ", path, " has no name");
    // Note [descriptor validation]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // Every string the host prints or compares must be there (doc strings may be NULL), every count
    // non-negative (a function's nparams may be -1, variadic) and every array there when its count
    // is positive. That the arrays are as long as their counts say, the host cannot see: it is the
    // plugin's part of the contract.
    const auto bad = [&](const std::string& what) {
        ISTHMUS_THROW(runtime_error, "plugin ", path, ": ", what);
    };
    const auto need = [&](const void* p, const std::string& what) {
        if (!p) bad(what + " is NULL");
    };
    const auto counted = [&](int32_t n, const void* array, const std::string& what,
                             int32_t lowest = 0) {
        if (n < lowest) bad(what + " count is " + std::to_string(n));
        if (n > 0 && !array) bad(what + " array is NULL for " + std::to_string(n) + " entries");
    };
    const auto params = [&](int32_t n, const isthmus_param* ps, const std::string& owner) {
        for (int32_t j = 0; j < n; ++j) {
            need(ps[j].name, owner + " parameter " + std::to_string(j) + " name");
            need(ps[j].type_name, owner + " parameter " + std::to_string(j) + " type name");
        }
    };
    const auto function = [&](const isthmus_function& f, const std::string& what) {
        need(f.name, what + " name");
        need(f.signature, what + " " + f.name + " signature");
        need(reinterpret_cast<const void*>(f.impl), what + " " + f.name + " implementation");
        counted(f.nparams, f.params, what + " " + f.name + " parameter", -1);
        params(f.nparams, f.params, what + " " + f.name);
    };
    counted(d.nfunctions, d.functions, "function");
    counted(d.nkernels, d.kernels, "kernel");
    counted(d.ntypes, d.types, "type");
    std::set<std::string> fnames, knames;
    for (int32_t i = 0; i < d.nfunctions; ++i) {
        function(d.functions[i], "function " + std::to_string(i));
        fnames.insert(d.functions[i].name);
    }
    for (int32_t i = 0; i < d.nkernels; ++i) {
        const isthmus_kernel& k = d.kernels[i];
        ISTHMUS_CHECK(k.name && (k.launch_cpu || k.launch_cuda), runtime_error, "plugin ", path,
                      ": kernel ", i, " has no name or launcher");
        ISTHMUS_CHECK(knames.insert(k.name).second && !fnames.count(k.name), runtime_error,
                      "plugin ", path, ": the name \"", k.name, "\" is defined twice");
        ISTHMUS_CHECK(k.pos_ndim >= 1 && k.pos_ndim <= 4, runtime_error, "plugin ", path,
                      ": kernel ", k.name, " has a position of rank ", k.pos_ndim);
        need(k.signature, std::string("kernel ") + k.name + " signature");
        counted(k.nparams, k.params, std::string("kernel ") + k.name + " parameter");
        params(k.nparams, k.params, std::string("kernel ") + k.name);
    }
    for (int32_t i = 0; i < d.ntypes; ++i) {
        const isthmus_type& t = d.types[i];
        need(t.name, "type " + std::to_string(i) + " name");
        const std::string tn = std::string("type ") + t.name;
        counted(t.nfields, t.fields, tn + " field");
        counted(t.nmethods, t.methods, tn + " method");
        counted(t.nevents, t.events, tn + " event");
        for (int32_t j = 0; j < t.nfields; ++j) {
            need(t.fields[j].name, tn + " field " + std::to_string(j) + " name");
            need(t.fields[j].type_name, tn + " field " + t.fields[j].name + " type name");
        }
        for (int32_t j = 0; j < t.nmethods; ++j)
            function(t.methods[j], tn + " method " + std::to_string(j));
        for (int32_t j = 0; j < t.nevents; ++j) {
            need(t.events[j].name, tn + " event " + std::to_string(j) + " name");
            need(t.events[j].signature, tn + " event " + t.events[j].name + " signature");
        }
    }
}

} // namespace

std::shared_ptr<library> load(const std::string& path_or_name) {
    ISTHMUS_CHECK(!path_or_name.empty(), value_error, "load plugin: empty name");
    // (the C library would read the path only up to the NUL: another file than the one named)
    ISTHMUS_CHECK(path_or_name.find('\0') == std::string::npos, value_error,
                  "load plugin: the path or name contains a NUL byte");
    const fs::path found = find_plugin(path_or_name);
    std::error_code ec;
    const fs::path canon = fs::canonical(found, ec);
    const std::string key = ec ? fs::absolute(found).string() : canon.string();

    std::lock_guard lk(g_mu);
    if (auto it = registry().find(key); it != registry().end()) return it->second;

    auto p = std::make_unique<library::impl>();
    try {
        // Local binding: the plugin's symbols never interpose on the host's or other plugins'.
        p->lib.load(key, boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
    } catch (const std::exception& e) {
        ISTHMUS_THROW(runtime_error, "load plugin: cannot load \"", key, "\": ", e.what());
    }
    ISTHMUS_CHECK(p->lib.has(ISTHMUS_PLUGIN_ENTRY_NAME), runtime_error, "load plugin: \"", key,
                  "\" is not an isthmus plugin (it exports no ", ISTHMUS_PLUGIN_ENTRY_NAME,
                  " symbol; define the plugin with ISTHMUS_PLUGIN(name, m) from "
                  "isthmus/plugin.hpp)");
    // The symbol is a Boost.DLL alias: a `const void*` holding the entry function's address.
    const void* addr = p->lib.get<const void*>(ISTHMUS_PLUGIN_ENTRY_NAME);
    ISTHMUS_CHECK(addr != nullptr, runtime_error, "load plugin: \"", key,
                  "\": the entry point is null");
    auto entry = reinterpret_cast<isthmus_plugin_entry_fn>(const_cast<void*>(addr));
    const isthmus_plugin* desc = entry(ISTHMUS_PLUGIN_ABI_VERSION, &detail::host_table());
    ISTHMUS_CHECK(desc != nullptr, runtime_error, "load plugin: \"", key,
                  "\": the entry point returned no descriptor");
    ISTHMUS_CHECK(desc->abi_version == ISTHMUS_PLUGIN_ABI_VERSION, runtime_error, "load plugin: \"",
                  key, "\" was built for isthmus plugin ABI version ", desc->abi_version,
                  ", but this isthmus speaks plugin ABI version ", ISTHMUS_PLUGIN_ABI_VERSION,
                  "; rebuild the plugin against this isthmus");
    validate(*desc, key);
    auto lib = std::make_shared<library>(std::move(p), desc, key);
    registry().emplace(key, lib);
    return lib;
}

uint32_t library::features() const noexcept {
    return desc_->struct_size >= offsetof(isthmus_plugin, features) + sizeof(uint32_t)
               ? desc_->features
               : 0;
}

std::vector<std::string> library::function_names() const {
    std::vector<std::string> r;
    for (int32_t i = 0; i < desc_->nfunctions; ++i) {
        std::string n = desc_->functions[i].name;
        if (std::find(r.begin(), r.end(), n) == r.end()) r.push_back(std::move(n));
    }
    return r;
}

std::vector<std::string> library::kernel_names() const {
    std::vector<std::string> r;
    for (int32_t i = 0; i < desc_->nkernels; ++i) r.emplace_back(desc_->kernels[i].name);
    return r;
}

std::vector<std::string> library::type_names() const {
    std::vector<std::string> r;
    for (int32_t i = 0; i < desc_->ntypes; ++i) r.emplace_back(desc_->types[i].name);
    return r;
}

bool library::has_function(const std::string& n) const {
    for (int32_t i = 0; i < desc_->nfunctions; ++i)
        if (n == desc_->functions[i].name) return true;
    return false;
}

bool library::has_kernel(const std::string& n) const {
    for (int32_t i = 0; i < desc_->nkernels; ++i)
        if (n == desc_->kernels[i].name) return true;
    return false;
}

std::string library::describe() const {
    std::string s = "plugin " + name_ + " (" + path_ + ")";
    for (int32_t i = 0; i < desc_->nfunctions; ++i)
        s += "\n  function " + std::string(desc_->functions[i].signature);
    for (int32_t i = 0; i < desc_->nkernels; ++i)
        s += "\n  kernel " + std::string(desc_->kernels[i].signature);
    for (int32_t i = 0; i < desc_->ntypes; ++i) {
        const isthmus_type& t = desc_->types[i];
        s += "\n  type " + std::string(t.name);
        for (int32_t j = 0; j < t.nfields; ++j)
            s += "\n    field " + std::string(t.fields[j].name) + ": " + t.fields[j].type_name;
        for (int32_t j = 0; j < t.nmethods; ++j)
            s += "\n    method " + std::string(t.methods[j].signature);
        for (int32_t j = 0; j < t.nevents; ++j)
            s += "\n    event " + std::string(t.events[j].name) + t.events[j].signature;
    }
    return s;
}

std::shared_ptr<function> library::get_function(const std::string& n) const {
    std::vector<const isthmus_function*> overloads;
    for (int32_t i = 0; i < desc_->nfunctions; ++i)
        if (n == desc_->functions[i].name) overloads.push_back(&desc_->functions[i]);
    if (overloads.empty()) {
        std::string names;
        for (const auto& f : function_names()) names += (names.empty() ? "" : ", ") + f;
        ISTHMUS_THROW(value_error, "plugin ", name_, " has no function \"", n,
                      "\" (functions: ", names.empty() ? "none" : names, ")");
    }
    return std::make_shared<function>(shared_from_this(), std::move(overloads));
}

std::shared_ptr<kernel> library::get_kernel(const std::string& n) const {
    for (int32_t i = 0; i < desc_->nkernels; ++i)
        if (n == desc_->kernels[i].name)
            return std::make_shared<kernel>(shared_from_this(), &desc_->kernels[i]);
    std::string names;
    for (const auto& k : kernel_names()) names += (names.empty() ? "" : ", ") + k;
    ISTHMUS_THROW(value_error, "plugin ", name_, " has no kernel \"", n,
                  "\" (kernels: ", names.empty() ? "none" : names, ")");
}

} // namespace isthmus::plugin_host
