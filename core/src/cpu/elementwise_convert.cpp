// The 15x15 dtype conversion loops the elementwise executor converts blocks with.
#include "cpu/convert.hpp"
#include "cpu/elementwise_exec.hpp"

namespace isthmus::cpu {

namespace {

template <typename To, typename From>
void convert_loop(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
    if (ss == static_cast<int64_t>(sizeof(From)) && ds == static_cast<int64_t>(sizeof(To))) {
        const From* a = reinterpret_cast<const From*>(src);
        To* o = reinterpret_cast<To*>(dst);
        for (int64_t i = 0; i < n; ++i) o[i] = convert<To>(a[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
        *reinterpret_cast<To*>(dst) = convert<To>(*reinterpret_cast<const From*>(src));
}

} // namespace

convert_fn converter(dtype from, dtype to) {
    ISTHMUS_DISPATCH(to, To,
                     { ISTHMUS_DISPATCH(from, From, { return &convert_loop<To, From>; }); });
    ISTHMUS_ASSERT(false, "no conversion from ", from, " to ", to);
}

} // namespace isthmus::cpu
