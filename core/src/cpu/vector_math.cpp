// The choice of vector math loops: which instruction sets were built, which one this CPU runs.
#include "cpu/vector_math.hpp"

#include <cstdlib>
#include <cstring>

namespace isthmus::cpu::vmath {

// Note [isa translation units]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The library targets baseline x86-64, so the vector loops live in files of their own compiled with
// -mavx2 -mfma or -mavx512f (core/CMakeLists.txt), and are reached only through the table they
// return, after the CPU was asked whether it runs that set. Those files instantiate nothing with
// external linkage (no std:: templates, no inline functions of shared headers): the linker could
// otherwise keep their AVX-512 copy of a function the whole library shares, and a CPU without
// AVX-512 would fault in it.
#if ISTHMUS_HAVE_SLEEF
const table* avx2_table() noexcept;
const table* avx512_table() noexcept;
#endif

namespace {

bool cpu_runs(isa set) noexcept {
#if ISTHMUS_HAVE_SLEEF
    switch (set) {
    case isa::avx512:
        return __builtin_cpu_supports("avx512f");
    case isa::avx2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case isa::none:
        return true;
    }
#endif
    return set == isa::none;
}

isa pick() noexcept {
    isa best = cpu_runs(isa::avx512) ? isa::avx512 : cpu_runs(isa::avx2) ? isa::avx2 : isa::none;
    if (const char* env = std::getenv("ISTHMUS_SIMD"); env && *env) {
        if (std::strcmp(env, "none") == 0) best = isa::none;
        if (std::strcmp(env, "avx2") == 0 && best == isa::avx512) best = isa::avx2;
    }
    return best;
}

} // namespace

const table* table_for(isa set) noexcept {
    if (!cpu_runs(set)) return nullptr;
#if ISTHMUS_HAVE_SLEEF
    if (set == isa::avx512) return avx512_table();
    if (set == isa::avx2) return avx2_table();
#endif
    return nullptr;
}

isa active() noexcept {
    static const isa a = pick();
    return a;
}

loop_fn loop(fn f, bool f64) noexcept {
    static const table* const t = table_for(active());
    if (!t) return nullptr;
    return f64 ? t->f64[static_cast<int>(f)] : t->f32[static_cast<int>(f)];
}

const char* name(isa set) noexcept {
    switch (set) {
    case isa::avx512:
        return "avx512";
    case isa::avx2:
        return "avx2";
    case isa::none:
        break;
    }
    return "none";
}

} // namespace isthmus::cpu::vmath
