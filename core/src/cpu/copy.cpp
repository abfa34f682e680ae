// Strided copy with dtype conversion on the CPU: the elementwise executor's conversion loops
// (converter) walked over any layout.
#include "cpu/copy.hpp"
#include "cpu/elementwise_exec.hpp"
#include "cpu/strided_loop.hpp"

namespace isthmus::cpu {

void copy_cast(const tensor& dst, void* dst_data, const tensor& src, const void* src_data) {
    std::array<char*, 2> base{static_cast<char*>(dst_data),
                              const_cast<char*>(static_cast<const char*>(src_data))};
    const convert_fn convert = converter(src.dtype(), dst.dtype());
    for_each<2>(dst.shape(), {&dst, &src}, base, [convert](char** p, const int64_t* s, int64_t n) {
        convert(p[1], s[1], p[0], s[0], n);
    });
}

} // namespace isthmus::cpu
