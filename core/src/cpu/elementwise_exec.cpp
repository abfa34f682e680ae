// The CPU elementwise executor: strided plans, converting operands per block (run_kernel).
#include "cpu/elementwise_exec.hpp"

#include <algorithm>

namespace isthmus::cpu {

namespace {

constexpr int64_t block = 256;  // elements per conversion block
constexpr size_t max_item = 16; // the largest itemsize (complex128)

} // namespace

template <int N>
void run_kernel(const shape_t& shape, const std::array<operand, N>& ops,
                const std::array<dtype, N>& kdt, loop_fn fn, int64_t grain) {
    std::array<const shape_t*, N> strides;
    std::array<int64_t, N> isz;
    std::array<char*, N> base;
    bool direct = true;
    for (size_t i = 0; i < N; ++i) {
        strides[i] = ops[i].strides;
        isz[i] = static_cast<int64_t>(itemsize(ops[i].dt));
        base[i] = ops[i].data;
        direct = direct && ops[i].dt == kdt[i];
    }
    const strided_plan<N> plan = make_plan<N>(shape, strides, isz);
    if (direct) {
        run_plan<N>(plan, base, fn, grain);
        return;
    }
    // See Note [elementwise conversion].
    std::array<convert_fn, N> conv{};
    std::array<int64_t, N> ksz;
    for (size_t i = 0; i < N; ++i) {
        ksz[i] = static_cast<int64_t>(itemsize(kdt[i]));
        if (ops[i].dt != kdt[i])
            conv[i] = i == 0 ? converter(kdt[0], ops[0].dt) : converter(ops[i].dt, kdt[i]);
    }
    run_plan<N>(
        plan, base,
        [&](char** p, const int64_t* s, int64_t n) {
            alignas(64) unsigned char buf[N][block * max_item];
            char* q[N];
            int64_t qs[N];
            for (size_t i = 1; i < N; ++i)
                if (conv[i] && s[i] == 0) conv[i](p[i], 0, reinterpret_cast<char*>(buf[i]), 0, 1);
            for (int64_t k = 0; k < n; k += block) {
                const int64_t m = std::min(block, n - k);
                for (size_t i = 0; i < N; ++i) {
                    char* at = p[i] + k * s[i];
                    char* b = reinterpret_cast<char*>(buf[i]);
                    if (!conv[i]) {
                        q[i] = at;
                        qs[i] = s[i];
                    } else if (i > 0 && s[i] == 0) {
                        q[i] = b;
                        qs[i] = 0;
                    } else {
                        if (i > 0) conv[i](at, s[i], b, ksz[i], m);
                        q[i] = b;
                        qs[i] = ksz[i];
                    }
                }
                fn(q, qs, m);
                if (conv[0])
                    conv[0](reinterpret_cast<char*>(buf[0]), ksz[0], p[0] + k * s[0], s[0], m);
            }
        },
        grain);
}

template void run_kernel<2>(const shape_t&, const std::array<operand, 2>&,
                            const std::array<dtype, 2>&, loop_fn, int64_t);
template void run_kernel<3>(const shape_t&, const std::array<operand, 3>&,
                            const std::array<dtype, 3>&, loop_fn, int64_t);
template void run_kernel<4>(const shape_t&, const std::array<operand, 4>&,
                            const std::array<dtype, 4>&, loop_fn, int64_t);

} // namespace isthmus::cpu
