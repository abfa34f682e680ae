// The one table of elementwise ops: enums, dispatch, bindings, docs and tests derive from it.
#pragma once

#include <cstdint>

// Note [one op table]
// ~~~~~~~~~~~~~~~~~~~
// Every elementwise op is one row below, and everything that used to list the ops derives from
// these rows: the enums unary_op/binary_op and their name(), the C++ wrappers (isthmus::tanh), the
// dtype rules (ops/elementwise_types.cpp switches on the rule column, not on the op), the CPU and
// CUDA dispatch (cpu/elementwise_*.cpp pick the kernel by rule and the element functor by op;
// cudak::uop/bop and the backend's op maps are this list), the Python functions with their aliases
// and docstrings (cpp_in_py/src/module_ops.cpp), the private q._op_table() the tests iterate, and,
// through scripts/gen_ops.py, the .pyi stubs and the table in docs/ops.md (committed between marker
// comments; tests/python/core/test_op_table.py fails when they are stale). Adding an op is one row
// plus its element functor (docs/ops.md, "Adding an elementwise op").
//
// The table is a header of named X-macros rather than a .def file that is included once per
// use with X redefined: a named list can be expanded several times in one file (an enum and a
// switch next to it), needs no include-order discipline, is included like any header (nvcc
// too: nothing here needs the runtime), and its rows stay one regular `X(...)` per line that
// scripts/gen_ops.py parses without a C preprocessor. Keep every row on one line.
//
// Columns of ISTHMUS_UNARY_OPS(X) and ISTHMUS_BINARY_OPS(X):
//   X(name, rule, python, doc)
//   name    the C++ name: the enumerator, the wrapper function and name(op);
//   rule    the dtype rule (unary_rule/binary_rule below): which dtypes it takes, which it
//           computes and returns in, and which kernel family runs it;
//   python  the Python function names, space-separated: NumPy's name first, then aliases;
//   doc     one line: the docstring of the Python function and the docs' ops table.
// Binary rows have one more column after rule, `on_bool` (binary_bool below): what bool
// operands do. The order of the rows is the enums' order.

namespace isthmus {

/// The dtype rules of unary ops (the `rule` column of ISTHMUS_UNARY_OPS).
enum class unary_rule : uint8_t {
    math,          ///< floats and complex; bool/integers compute in promote_types(t, float16)
    math_real,     ///< math, but complex raises type_error (defined on the real line only)
    keep_int,      ///< bool/integers are returned unchanged (a copy); floats and complex computed
    keep_int_real, ///< keep_int, but complex raises type_error (not ordered)
    test_false,    ///< a bool predicate on floats/complex; false for bool/integers
    test_true,     ///< a bool predicate on floats/complex; true for bool/integers
    sign_bit,      ///< bool: the sign bit of floats (NaN's too), x < 0 for signed integers,
                   ///< false for bool and unsigned integers; complex raises type_error
    logical,       ///< computes on the input as bool, returns bool
    bitwise,       ///< bool and integers only, same dtype
    negate,        ///< same dtype; bool raises type_error
    same,          ///< same dtype; bool is returned unchanged (a copy)
    magnitude,     ///< same dtype (complex: its real dtype); bool and unsigned unchanged
    complex_only,  ///< computed for complex; other dtypes unchanged (a copy)
    inverse,       ///< same dtype for floats/complex; bool/integers give float64
    real_part,     ///< complex: the real part; other dtypes unchanged (a copy)
    imag_part,     ///< complex: the imaginary part; other dtypes give zeros
};

/// The dtype rules of binary ops (the `rule` column of ISTHMUS_BINARY_OPS); the operands
/// promote with promote_types first.
enum class binary_rule : uint8_t {
    arith,    ///< the promoted dtype
    true_div, ///< the promoted dtype if inexact, else float64
    divmod,   ///< the promoted dtype; complex raises type_error (Python's // and %)
    extremum, ///< the promoted dtype; complex raises type_error (maximum, minimum)
    math,     ///< like unary math: bool/integers compute in float; complex raises type_error
    equality, ///< compares in the promoted dtype, returns bool
    order,    ///< equality, but complex raises type_error
    logical,  ///< computes on both as bool, returns bool
    bitwise,  ///< bool and integers only
    shift,    ///< integers only (bool computes as int8)
};

/// What a binary op does with bool operands (promoted dtype bool): the `on_bool` column.
enum class binary_bool : uint8_t {
    keep,        ///< computes in bool (or as the rule says)
    int8,        ///< computes (and returns) int8, as NumPy
    error,       ///< raises type_error
    logical_or,  ///< is logical_or (bool + bool, maximum)
    logical_and, ///< is logical_and (bool * bool, minimum)
};

} // namespace isthmus

// clang-format off
/// The unary elementwise ops, one row each: X(name, rule, python, doc).
#define ISTHMUS_UNARY_OPS(X) \
    X(neg, negate, "negative", "-x elementwise (bool raises TypeError).") \
    X(abs, magnitude, "abs absolute", "|x| elementwise (complex -> its real dtype; abs(INT_MIN) == INT_MIN).") \
    X(sign, same, "sign", "-1, 0 or 1 elementwise (NaN stays NaN; complex: x/|x|, 0 at 0).") \
    X(exp, math, "exp", "e**x elementwise.") \
    X(exp2, math, "exp2", "2**x elementwise.") \
    X(log, math, "log", "Natural logarithm elementwise.") \
    X(log2, math, "log2", "Base-2 logarithm elementwise.") \
    X(log10, math, "log10", "Base-10 logarithm elementwise.") \
    X(expm1, math, "expm1", "e**x - 1 elementwise, accurate near 0.") \
    X(log1p, math, "log1p", "log(1 + x) elementwise, accurate near 0.") \
    X(sqrt, math, "sqrt", "Square root elementwise.") \
    X(cbrt, math_real, "cbrt", "Cube root elementwise, negative for negative x (not for complex).") \
    X(rsqrt, math, "rsqrt", "1 / sqrt(x) elementwise.") \
    X(sin, math, "sin", "Sine elementwise (radians).") \
    X(cos, math, "cos", "Cosine elementwise (radians).") \
    X(tan, math, "tan", "Tangent elementwise (radians).") \
    X(asin, math, "arcsin asin", "Inverse sine elementwise.") \
    X(acos, math, "arccos acos", "Inverse cosine elementwise.") \
    X(atan, math, "arctan atan", "Inverse tangent elementwise.") \
    X(sinh, math, "sinh", "Hyperbolic sine elementwise.") \
    X(cosh, math, "cosh", "Hyperbolic cosine elementwise.") \
    X(tanh, math, "tanh", "Hyperbolic tangent elementwise.") \
    X(asinh, math, "arcsinh asinh", "Inverse hyperbolic sine elementwise.") \
    X(acosh, math, "arccosh acosh", "Inverse hyperbolic cosine elementwise.") \
    X(atanh, math, "arctanh atanh", "Inverse hyperbolic tangent elementwise.") \
    X(erf, math_real, "erf", "The error function elementwise (not for complex; NumPy has none: scipy.special.erf, torch.erf).") \
    X(erfc, math_real, "erfc", "1 - erf(x) elementwise, accurate where erf(x) is near 1 (not for complex).") \
    X(floor, keep_int_real, "floor", "Rounds down elementwise (integers unchanged).") \
    X(ceil, keep_int_real, "ceil", "Rounds up elementwise (integers unchanged).") \
    X(round, keep_int, "round rint", "Rounds half to even elementwise, as np.round with decimals=0 (complex: each part).") \
    X(logical_not, logical, "logical_not", "x == 0 elementwise (a bool tensor).") \
    X(bit_not, bitwise, "bitwise_not invert", "~x elementwise (bool: logical not; bool and integers only).") \
    X(isnan, test_false, "isnan", "True where x is NaN.") \
    X(isinf, test_false, "isinf", "True where x is +-inf.") \
    X(isfinite, test_true, "isfinite", "True where x is neither NaN nor infinite.") \
    X(signbit, sign_bit, "signbit", "True where x's sign bit is set: negative numbers, -0.0 and NaNs with the sign bit (not for complex).") \
    X(conj, complex_only, "conj conjugate", "The complex conjugate (a copy; real dtypes unchanged).") \
    X(square, same, "square", "x * x elementwise.") \
    X(reciprocal, inverse, "reciprocal", "1 / x elementwise (integers give float64, unlike NumPy).")

/// The unary ops whose C++ and Python functions are written by hand because they return views of
/// complex tensors (isthmus::real, q.real); unary(op, t) on them returns copies. Same columns.
#define ISTHMUS_UNARY_PART_OPS(X) \
    X(real, real_part, "real", "The real part (a view of complex tensors, as NumPy's .real).") \
    X(imag, imag_part, "imag", "The imaginary part (a view of complex tensors; zeros for real ones).")

/// The binary elementwise ops, one row each: X(name, rule, on_bool, python, doc).
#define ISTHMUS_BINARY_OPS(X) \
    X(add, arith, logical_or, "add", "x1 + x2 elementwise, broadcasting (bool: logical or).") \
    X(sub, arith, error, "subtract", "x1 - x2 elementwise, broadcasting (bool raises TypeError).") \
    X(mul, arith, logical_and, "multiply", "x1 * x2 elementwise, broadcasting (bool: logical and).") \
    X(div, true_div, keep, "divide true_divide", "x1 / x2 (true division) elementwise; integers give float64.") \
    X(floor_div, divmod, int8, "floor_divide", "x1 // x2 elementwise, broadcasting (not for complex).") \
    X(mod, divmod, int8, "mod remainder", "x1 % x2 (sign of x2, as Python) elementwise.") \
    X(pow, arith, int8, "power pow", "x1 ** x2 elementwise; negative integer powers of integers raise ValueError.") \
    X(maximum, extremum, logical_or, "maximum", "Elementwise maximum, NaN-propagating.") \
    X(minimum, extremum, logical_and, "minimum", "Elementwise minimum, NaN-propagating.") \
    X(atan2, math, keep, "arctan2 atan2", "atan2(x1, x2) elementwise, in radians.") \
    X(eq, equality, keep, "equal", "x1 == x2 elementwise (a bool tensor).") \
    X(ne, equality, keep, "not_equal", "x1 != x2 elementwise (a bool tensor).") \
    X(lt, order, keep, "less", "x1 < x2 elementwise (a bool tensor).") \
    X(le, order, keep, "less_equal", "x1 <= x2 elementwise (a bool tensor).") \
    X(gt, order, keep, "greater", "x1 > x2 elementwise (a bool tensor).") \
    X(ge, order, keep, "greater_equal", "x1 >= x2 elementwise (a bool tensor).") \
    X(logical_and, logical, keep, "logical_and", "(x1 != 0) and (x2 != 0) elementwise.") \
    X(logical_or, logical, keep, "logical_or", "(x1 != 0) or (x2 != 0) elementwise.") \
    X(logical_xor, logical, keep, "logical_xor", "(x1 != 0) != (x2 != 0) elementwise.") \
    X(bit_and, bitwise, keep, "bitwise_and", "x1 & x2 elementwise (bool and integers).") \
    X(bit_or, bitwise, keep, "bitwise_or", "x1 | x2 elementwise (bool and integers).") \
    X(bit_xor, bitwise, keep, "bitwise_xor", "x1 ^ x2 elementwise (bool and integers).") \
    X(shift_left, shift, int8, "left_shift", "x1 << x2 elementwise (integers; counts past the width give 0).") \
    X(shift_right, shift, int8, "right_shift", "x1 >> x2 elementwise (integers; arithmetic for signed).")

// Note [derivatives in the op table]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Each op of the tables above states its derivative once, in the rows below (same order, same
// names; a static_assert in autograd/derivatives_elementwise.cpp checks both). A row is
//   X(name, saves, formula)                 unary:  x the input, y the output, g dL/dy
//   X(name, saves, formula_a, formula_b)    binary: a, b the inputs, y the output, g dL/dy
// where `saves` says which of x/a/b/y backward keeps (none, x, y, xy, ab, aby; an in-place change
// of a kept tensor is an error at backward time), and each formula is a C++ expression in the
// public ops (so every backend differentiates it). The formula gives the gradient at the
// broadcast shape; the engine sums it to each input's shape and casts it to the input's dtype.
// `none` marks an op without a derivative: its results are integer or bool (nothing to
// differentiate), or backward through it raises runtime_error naming it. `zero` marks ops whose
// derivative is 0 almost everywhere (floor, sign, ...). scripts/gen_ops.py lists the formulas in
// docs/ops.md.

/// The derivative of each unary op: X(name, saves, formula).
#define ISTHMUS_UNARY_DERIVATIVES(X) \
    X(neg, none, neg(g)) \
    X(abs, x, mul(g, sign(x))) \
    X(sign, none, zero) \
    X(exp, y, mul(g, y)) \
    X(exp2, y, mul(g, mul(y, ln2))) \
    X(log, x, div(g, x)) \
    X(log2, x, div(g, mul(x, ln2))) \
    X(log10, x, div(g, mul(x, ln10))) \
    X(expm1, y, mul(g, add(y, 1.0))) \
    X(log1p, x, div(g, add(x, 1.0))) \
    X(sqrt, y, div(g, mul(y, 2.0))) \
    X(cbrt, y, div(g, mul(square(y), 3.0))) \
    X(rsqrt, y, mul(g, mul(mul(y, square(y)), -0.5))) \
    X(sin, x, mul(g, cos(x))) \
    X(cos, x, neg(mul(g, sin(x)))) \
    X(tan, y, mul(g, add(square(y), 1.0))) \
    X(asin, x, mul(g, rsqrt(sub(1.0, square(x))))) \
    X(acos, x, neg(mul(g, rsqrt(sub(1.0, square(x)))))) \
    X(atan, x, div(g, add(square(x), 1.0))) \
    X(sinh, x, mul(g, cosh(x))) \
    X(cosh, x, mul(g, sinh(x))) \
    X(tanh, y, mul(g, sub(1.0, square(y)))) \
    X(asinh, x, mul(g, rsqrt(add(square(x), 1.0)))) \
    X(acosh, x, mul(g, rsqrt(sub(square(x), 1.0)))) \
    X(atanh, x, div(g, sub(1.0, square(x)))) \
    X(erf, x, mul(g, mul(exp(neg(square(x))), two_over_sqrt_pi))) \
    X(erfc, x, neg(mul(g, mul(exp(neg(square(x))), two_over_sqrt_pi)))) \
    X(floor, none, zero) \
    X(ceil, none, zero) \
    X(round, none, zero) \
    X(logical_not, none, none) \
    X(bit_not, none, none) \
    X(isnan, none, none) \
    X(isinf, none, none) \
    X(isfinite, none, none) \
    X(signbit, none, none) \
    X(conj, none, conj(g)) \
    X(square, x, mul(g, mul(x, 2.0))) \
    X(reciprocal, y, neg(mul(g, square(y)))) \
    X(real, none, none) \
    X(imag, none, none)

/// The derivative of each binary op: X(name, saves, formula_a, formula_b).
#define ISTHMUS_BINARY_DERIVATIVES(X) \
    X(add, none, g, g) \
    X(sub, none, g, neg(g)) \
    X(mul, ab, mul(g, b), mul(g, a)) \
    X(div, ab, div(g, b), neg(mul(g, div(a, square(b))))) \
    X(floor_div, none, zero, zero) \
    X(mod, ab, g, neg(mul(g, floor_div(a, b)))) \
    X(pow, aby, mul(g, where(eq(b, 0.0), 0.0, mul(b, pow(a, sub(b, 1.0))))), mul(g, where(logical_and(eq(a, 0.0), ge(b, 0.0)), 0.0, mul(y, log(a))))) \
    X(maximum, ab, where(gt(a, b), g, where(eq(a, b), mul(g, 0.5), 0.0)), where(lt(a, b), g, where(eq(a, b), mul(g, 0.5), 0.0))) \
    X(minimum, ab, where(lt(a, b), g, where(eq(a, b), mul(g, 0.5), 0.0)), where(gt(a, b), g, where(eq(a, b), mul(g, 0.5), 0.0))) \
    X(atan2, ab, mul(g, div(b, add(square(a), square(b)))), neg(mul(g, div(a, add(square(a), square(b)))))) \
    X(eq, none, none, none) \
    X(ne, none, none, none) \
    X(lt, none, none, none) \
    X(le, none, none, none) \
    X(gt, none, none, none) \
    X(ge, none, none, none) \
    X(logical_and, none, none, none) \
    X(logical_or, none, none, none) \
    X(logical_xor, none, none, none) \
    X(bit_and, none, none, none) \
    X(bit_or, none, none, none) \
    X(bit_xor, none, none, none) \
    X(shift_left, none, none, none) \
    X(shift_right, none, none, none)
// clang-format on
