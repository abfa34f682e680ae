// nextafter composed from integer steps on the floats' bit patterns (any backend, any float).
#include "isthmus/ops/elementwise.hpp"

#include <cmath>

namespace isthmus {

// Note [nextafter by bits]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// An IEEE float's neighbours are its bit pattern read as a signed integer plus or minus one: +1
// moves away from zero, -1 toward it, for either sign (negative floats grow in magnitude as their
// signed pattern decreases, which is the same step in two's complement). So nextafter is a few
// elementwise ops on an integer view of the same storage (tensor::view_as) that every backend
// already has: step = +1 where the target lies farther from zero than x on the same side ((y > x)
// == (x > 0)), else -1. Zero steps to the smallest subnormal with y's sign; x == y gives y (so
// nextafter(0.0, -0.0) is -0.0); a NaN operand gives NaN; inf steps to the largest finite value and
// the largest finite to inf by the same rule. float16 and bfloat16 step in their own format, which
// a kernel computing in float32 could not do.
tensor nextafter(const tensor& a, const tensor& b) {
    ISTHMUS_CHECK(a.defined() && b.defined(), value_error,
                  "nextafter: an input tensor is undefined");
    const dtype c = promote_types(a.dtype(), b.dtype());
    ISTHMUS_CHECK(!is_complex(c), type_error, "nextafter: not supported for dtypes ", a.dtype(),
                  " and ", b.dtype(), " (defined for real numbers only)");
    const dtype f = is_inexact(c) ? c : promote_types(c, dtype::float16); // NumPy's math rule
    const tensor x = a.to(f, false), y = b.to(f, false);
    const dtype bits_dt = itemsize(f) == 2   ? dtype::int16
                          : itemsize(f) == 4 ? dtype::int32
                                             : dtype::int64;
    // the smallest subnormal of f: 2^(min exponent - mantissa bits)
    const double tiny = f == dtype::float16    ? std::ldexp(1.0, -24)
                        : f == dtype::bfloat16 ? std::ldexp(1.0, -133)
                        : f == dtype::float32  ? std::ldexp(1.0, -149)
                                               : std::ldexp(1.0, -1074);
    const tensor away =
        binary(binary_op::eq, binary(binary_op::gt, y, x), binary(binary_op::gt, x, scalar(0)));
    const tensor pattern = x.view_as(bits_dt);
    const tensor stepped = where(away, binary(binary_op::add, pattern, scalar(1)),
                                 binary(binary_op::sub, pattern, scalar(1)))
                               .view_as(f);
    const tensor from_zero = where(unary(unary_op::signbit, y), scalar(-tiny), scalar(tiny)).to(f);
    tensor r = where(binary(binary_op::eq, x, scalar(0)), from_zero, stepped);
    r = where(binary(binary_op::eq, x, y), y, r);
    const tensor nan =
        binary(binary_op::logical_or, unary(unary_op::isnan, x), unary(unary_op::isnan, y));
    return where(nan, binary(binary_op::add, x, y), r);
}

} // namespace isthmus
