// Compile notices: the handler registry, its default (stderr) and the slow-compile reporter.
#include "compile_notice.hpp"

#include "compile_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

namespace isthmus::plugin_host {

// Note [compile notices]
// ~~~~~~~~~~~~~~~~~~~~~~
// A cold compile_string takes seconds (tens with nvcc) and used to print nothing, so a user
// could not tell a slow compile from a hang. Now a compile that is still running after
// ISTHMUS_COMPILE_NOTICE_SECONDS (default 0.5 s; 0 reports every cold compile) reports once what
// it compiles, with which compiler, and the cache entry it writes; a compile_string that waits
// that long for another process's lock on the same entry says so instead. Cached loads, which
// take milliseconds, never report. The report goes to a handler (set_compile_notice_handler),
// called on the compiling thread from the driver's 10 ms wait loop (Note [interruptible
// compiles]), so a handler that blocks delays only the compile's end, never its progress. The
// default handler writes one line to stderr unless ISTHMUS_VERBOSE=0; the Python module installs
// one that hands it to the "isthmus.compile" logger (isthmus/compile_log.py), which writes to
// stderr itself only while the program has configured no logging. A handler's exception is
// swallowed: a notice never fails a compile.

namespace {

std::mutex g_mu;
compile_notice_handler g_handler; // empty: the default

void default_handler(const compile_notice& n) {
    if (switched_off("ISTHMUS_VERBOSE")) return;
    std::fprintf(stderr, "%s\n", n.message.c_str());
    std::fflush(stderr);
}

void notify(const compile_notice& n) {
    compile_notice_handler h;
    {
        std::lock_guard lk(g_mu);
        h = g_handler;
    }
    try {
        if (h)
            h(n);
        else
            default_handler(n);
    } catch (...) { // See Note [compile notices]: never fails the compile
    }
}

double notice_seconds() {
    const char* s = std::getenv("ISTHMUS_COMPILE_NOTICE_SECONDS");
    if (!s || !*s) return 0.5;
    char* end = nullptr;
    const double v = std::strtod(s, &end);
    return (end && *end == '\0' && v >= 0) ? v : 0.5;
}

} // namespace

compile_notice_handler set_compile_notice_handler(compile_notice_handler handler) {
    std::lock_guard lk(g_mu);
    return std::exchange(g_handler, std::move(handler));
}

void report_compile_notice(const compile_notice& n) {
    notify(n);
}

slow_compile_reporter::slow_compile_reporter(compile_notice notice, bool quiet)
    : notice_(std::move(notice)), start_(std::chrono::steady_clock::now()),
      threshold_(notice_seconds()), reported_(quiet) {}

void slow_compile_reporter::poll(bool waiting) {
    if (reported_ || std::chrono::steady_clock::now() - start_ < threshold_) return;
    reported_ = true;
    notice_.waiting = waiting;
    notice_.message =
        waiting ? "isthmus: waiting for another process that compiles plugin '" + notice_.plugin +
                      "' (" + notice_.language + ") into " + notice_.library
                : "isthmus: compiling plugin '" + notice_.plugin + "' (" + notice_.language + ", " +
                      notice_.compiler + ") into " + notice_.library +
                      "; a first compile takes seconds, later loads come from the cache";
    notify(notice_);
}

} // namespace isthmus::plugin_host
