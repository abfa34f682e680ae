// The slow-compile reporter the compiler driver polls while it compiles or waits for a lock.
#pragma once

#include "isthmus/plugin_host.hpp"

#include <chrono>

namespace isthmus::plugin_host {

/// Hands `n` to the notice handler (See Note [compile notices]); never throws.
void report_compile_notice(const compile_notice& n);

/// Reports a compile once, when it has run (or waited) longer than the notice threshold.
/// See Note [compile notices].
class slow_compile_reporter {
public:
    /// `quiet`: never reports (a build no caller waits for: Note [compile tiers]).
    explicit slow_compile_reporter(compile_notice notice, bool quiet = false);
    /// Called between waits: reports once the threshold has passed; `waiting`: for the lock.
    void poll(bool waiting);

private:
    compile_notice notice_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::duration<double> threshold_;
    bool reported_ = false;
};

} // namespace isthmus::plugin_host
