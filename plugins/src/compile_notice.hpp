// The slow-compile reporter the compiler driver polls while it compiles or waits for a lock.
#pragma once

#include "isthmus/plugin_host.hpp"

#include <chrono>

namespace isthmus::plugin_host {

/// Reports a compile once, when it has run (or waited) longer than the notice threshold.
/// See Note [compile notices].
class slow_compile_reporter {
public:
    explicit slow_compile_reporter(compile_notice notice);
    /// Called between waits: reports once the threshold has passed; `waiting`: for the lock.
    void poll(bool waiting);

private:
    compile_notice notice_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::duration<double> threshold_;
    bool reported_ = false;
};

} // namespace isthmus::plugin_host
