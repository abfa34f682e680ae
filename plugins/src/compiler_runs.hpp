// Running compilers: each in a process group of its own, waited for in interruptible steps,
// background builds paused while a foreground compile runs.
#pragma once

#include "compile_cache.hpp"

#include <string>
#include <vector>

namespace isthmus::plugin_host {

/// One compiler command of run_compilers, and what it said.
struct compiler_run {
    std::vector<std::string> argv; ///< the command
    fs::path log;                  ///< its log's name prefix in the cache (`<stem>.log`): the log
                                   ///< is a temp_file of it, removed once open

    std::string output; ///< its stdout+stderr, once it ended
    int status = 0;     ///< its exit status (128 + signal when a signal ended it)
};

/// Runs the commands at once and waits for all of them, filling in output and status. Throws
/// isthmus::interrupted when `ic` stops, after stopping every one (Note [interruptible compiles]).
/// `background`: a build no caller waits for, paused while others run (Note [background compiles
/// yield]).
void run_compilers(std::vector<compiler_run>& runs, interrupt_check& ic, slow_compile_reporter& rep,
                   bool background = false);

/// Keeps the background compilers paused while it lives (See Note [background compiles yield]):
/// every foreground run_compilers call holds one, and a build that runs several (a compile, then
/// its link) holds one across them, once it holds its entry's lock.
class foreground_compile {
public:
    foreground_compile();
    ~foreground_compile();
    foreground_compile(const foreground_compile&) = delete;
    foreground_compile& operator=(const foreground_compile&) = delete;
};

/// Runs one compiler command; returns its exit status, with stdout+stderr in `output` (`log`
/// as compiler_run's).
int run_compiler(const std::vector<std::string>& argv, const fs::path& log, std::string& output,
                 interrupt_check& ic, slow_compile_reporter& rep, bool background = false);

} // namespace isthmus::plugin_host
