// A kernel-only C++ source's builds: the quick one first, its optimised build queued (Note
// [compile tiers] in compile_tiers.cpp), each compiled with its object linked directly where it
// can be (Note [direct links for quick builds] in direct_link.cpp).
#include "kernel_only_build.hpp"

#include "compile_tiers.hpp"
#include "compiler_runs.hpp"
#include "direct_link.hpp"
#include "isthmus/error.hpp"

#include <optional>

namespace isthmus::plugin_host {

namespace {

// The driver words whose link line a direct link takes (See Note [direct links for quick builds]):
// the compiler command, its fixed flags and the user's (their -Wl, options reach the link).
std::vector<std::string> link_driver(const compile_setup& c) {
    std::vector<std::string> d = c.cmd;
    d.insert(d.end(), c.fixed.begin(), c.fixed.end());
    d.insert(d.end(), c.flags.begin(), c.flags.end());
    return d;
}

// Compiles `b` with -c and links the object with the direct link (See Note [direct links for quick
// builds]), whose driver's link line, the first time, is found beside the compile; a link that
// fails, or a line with no direct link, is linked by the driver, whose messages a failure
// reports. nullopt when this process knows there is no direct link for the driver (the caller
// runs the driver's whole command), else the exit status, with the output in `output` and
// `linked` true when the direct link made the library.
std::optional<int> compile_and_link_directly(const kernel_only_build& b, const fs::path& src,
                                             const fs::path& tmp_so, interrupt_check& ic,
                                             slow_compile_reporter& rep, std::string& output,
                                             bool& linked) {
    const std::vector<std::string> driver = link_driver(b.setup);
    const auto known = known_direct_link(driver);
    if (known && !*known) return std::nullopt;
    const fs::path log = b.dir / (b.stem + ".log");
    const fs::path obj = make_temp(b.dir / (b.stem + ".o")).path;
    removed_unless_kept cleanup({obj});
    std::vector<compiler_run> runs(known ? 1 : 2);
    runs[0].argv =
        compile_command(b.setup, b.layer, true, src, obj, b.tier_flags, b.tier_header, true);
    runs[0].log = log;
    if (!known) {
        runs[1].argv = direct_link_probe(driver, b.layer.object);
        runs[1].log = log;
    }
    run_compilers(runs, ic, rep, b.background);
    const std::optional<direct_link> link =
        known ? *known
              : direct_link_from_probe(driver, b.layer.object, runs[1].output, runs[1].status);
    output = std::move(runs[0].output);
    if (runs[0].status != 0) return runs[0].status;
    const std::vector<std::string> objects{obj.string(), b.layer.object};
    if (link) {
        std::string link_output;
        linked = run_compiler(direct_link_command(*link, objects, tmp_so), log, link_output, ic,
                              rep, b.background) == 0;
        if (linked) return 0;
        forget_direct_link(driver);
    }
    std::vector<std::string> argv = driver; // the driver links the objects
    argv.insert(argv.end(), objects.begin(), objects.end());
    argv.push_back("-o");
    argv.push_back(tmp_so.string());
    return run_compiler(argv, log, output, ic, rep, b.background);
}

} // namespace

bool build_kernel_only(const kernel_only_build& b, interrupt_check& ic, slow_compile_reporter& rep,
                       std::string& output) {
    const fs::path so = b.dir / (b.stem + ".so"), meta = b.dir / (b.stem + ".meta");
    cache_dir_ready(b.dir, true);
    file_lock lock(b.dir / (b.stem + ".lock"), ic, rep);
    if (entry_problem(so, meta).empty()) return true;
    std::optional<foreground_compile> waited_for; // the compile and its link: See Note
    if (!b.background) waited_for.emplace();      // [background compiles yield]
    const fs::path src = b.dir / (b.stem + b.ext);
    write_atomically(src, b.text);
    const fs::path tmp_so = make_temp(so).path;
    removed_unless_kept cleanup({tmp_so, src});
    std::optional<int> direct;
    bool linked = false;
    if (b.direct_link) direct = compile_and_link_directly(b, src, tmp_so, ic, rep, output, linked);
    const int rc = direct ? *direct
                          : run_compiler(compile_command(b.setup, b.layer, true, src, tmp_so,
                                                         b.tier_flags, b.tier_header),
                                         b.dir / (b.stem + ".log"), output, ic, rep, b.background);
    if (rc != 0) return false;
    install_entry(tmp_so, so, meta, b.meta_extra + (linked ? "link direct\n" : ""));
    cleanup.keep_all();
    return true;
}

// See Note [compile tiers]: the quick build of a kernel-only C++ source (`key` is the optimised
// build's key, `b` its build, `layer` the precompiled layer's request), with the optimised build
// queued; nullptr when there is no quick build to give (no precompiled kernel half, or the source
// does not compile against it: the caller's compile then takes over, with its messages).
std::shared_ptr<library> quick_tier(const std::string& name, const std::string& source,
                                    const compile_options& opts, const fnv& key,
                                    const kernel_only_build& b, const pch_request& layer) {
    fnv quick_key = key;
    quick_key.add("tier quick");
    kernel_only_build q = b;
    q.direct_link = direct_links_enabled();
    if (q.direct_link) quick_key.add("link direct");
    q.stem = b.stem.substr(0, b.stem.rfind('-') + 1) + quick_key.hex();
    // -pipe: the assembler reads the compiler's output as it comes, instead of starting when it
    // is written (5-6 ms of the saxpy kernel's quick build, g++ 12 on the 2-core VM).
    q.tier_flags = {"-O1", "-pipe"};
    q.tier_header = "isthmus/plugin/quick_build.hpp"; // See Note [the quick build's launcher]
    q.meta_extra += "tier quick\n";
    const fs::path qso = b.dir / (q.stem + ".so");
    const fs::path qmeta = b.dir / (q.stem + ".meta");
    std::shared_ptr<library> lib =
        cached_entry(b.dir, qso, [&] { return entry_problem(qso, qmeta).empty(); });
    if (!lib) {
        interrupt_check ic; // Note [interruptible compiles]
        slow_compile_reporter rep(
            compile_notice{name, "C++", b.setup.cmd.front(), qso.string(), false, {}});
        cache_dir_ready(b.dir, true);
        q.layer = precompiled_header(layer, ic, rep);
        if (q.layer.lean_header.empty()) return nullptr;
        std::string output;
        if (!build_kernel_only(q, ic, rep, output)) return nullptr;
        lib = load(qso.string());
    }
    build_optimised_later(
        lib,
        [b, layer, name] {
            interrupt_check ic(&background_stop); // not the host's poll: nobody waits for it
            kernel_only_build o = b;
            o.background = true;
            slow_compile_reporter rep(compile_notice{name,
                                                     "C++",
                                                     o.setup.cmd.front(),
                                                     (o.dir / (o.stem + ".so")).string(),
                                                     false,
                                                     {}},
                                      true);
            o.layer = precompiled_header(layer, ic, rep);
            ISTHMUS_CHECK(!o.layer.lean_header.empty(), runtime_error,
                          "the precompiled author layer is gone");
            std::string output;
            if (!build_kernel_only(o, ic, rep, output))
                throw compile_error("the compiler (" + o.setup.cmd.front() + ") failed", output);
            return load((o.dir / (o.stem + ".so")).string());
        },
        pending_build{name, source, opts.flags, b.dir.string()});
    return lib;
}

} // namespace isthmus::plugin_host
