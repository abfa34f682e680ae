// The quick build's link run as the linker's own command against stubs of the C and C++ runtime
// libraries (Note [direct links for quick builds] in direct_link.cpp).
#pragma once

#include "compile_cache.hpp"

#include <optional>
#include <string>
#include <vector>

namespace isthmus::plugin_host {

/// What links a plugin without the compiler driver: the driver's own link line, run by the
/// linker itself, with its runtime libraries replaced by stubs, and placeholders for the objects
/// and the output (direct_link_command fills them in).
struct direct_link {
    std::vector<std::string> words;
};

/// False when ISTHMUS_DIRECT_LINK=0: quick builds are linked by the compiler driver.
bool direct_links_enabled();

/// The direct link for plugins that `driver` (the compiler command and its fixed and user flags)
/// links, when this process has looked for it: nullopt when it has not (run
/// direct_link_probe(driver) then), else what it found (nullopt inside: none, the driver links).
std::optional<std::optional<direct_link>> known_direct_link(const std::vector<std::string>& driver);

/// The command that prints `driver`'s link line (`-###`) for the existing object `object` (Clang
/// leaves a missing input out of the line), to run beside the compile.
std::vector<std::string> direct_link_probe(const std::vector<std::string>& driver,
                                           const std::string& object);

/// The direct link made of the probe's output and exit status (nullopt: none: not gold, a line
/// or library this does not understand), remembered for `driver`.
std::optional<direct_link> direct_link_from_probe(const std::vector<std::string>& driver,
                                                  const std::string& object,
                                                  const std::string& output, int status);

/// Forgets `driver`'s direct link (a link with it failed): the next compile looks again.
void forget_direct_link(const std::vector<std::string>& driver);

/// The link command of `objects` into `out`.
std::vector<std::string> direct_link_command(const direct_link& l,
                                             const std::vector<std::string>& objects,
                                             const fs::path& out);

namespace detail {

/// The words of one command line as a compiler driver's `-###` prints it (double quotes with
/// backslash escapes around some words).
std::vector<std::string> driver_words(const std::string& line);

/// DT_SONAME of a 64-bit little-endian ELF shared library (nullopt: not one, or none).
std::optional<std::string> elf_soname(const fs::path& lib);

/// Writes a shared library that has `soname` and no symbols, for the machine of `like` (a real
/// library); false when `like` is no 64-bit little-endian ELF shared library.
bool write_stub_library(const fs::path& out, const std::string& soname, const fs::path& like);

} // namespace detail

} // namespace isthmus::plugin_host
