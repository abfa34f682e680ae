// Marks a translation unit as a plugin's quick build (Note [the quick build's launcher] in
// isthmus/plugin/kernel_cpu.hpp): compile_string includes it after the precompiled layer.
#pragma once

#include "isthmus/plugin/kernel_cpu.hpp"

namespace isthmus::plugin::detail {

template <>
struct tier_policy<this_build> {
    static constexpr bool quick = true;
};

} // namespace isthmus::plugin::detail
