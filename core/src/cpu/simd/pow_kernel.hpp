// Internal: pow on vectors of doubles (float64 in double-double), written once for every set.
//
// Included by simd/vector_math_loops.hpp; instantiated there with the including file's
// `lanes<double>`, which has the operations below (see Note [isa translation units]: everything
// here has internal linkage). The file is compiled with
// -ffp-contract=off (core/CMakeLists.txt): the error-free sums below must round exactly as
// written, so every fused multiply-add is spelled out.
#pragma once

#include "cpu/simd/pow_tables.hpp"

#include <cstdint>

namespace isthmus::cpu::vmath {
namespace {

// Note [float64 pow in double-double]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// SLEEF's 1-ulp pow takes 5.5-5.9 ns per element in the cache on an AVX-512 Xeon, twice NumPy's
// (SVML's); this kernel computes pow(x, y) = exp(y log x) for a positive normal x, a finite y and a
// normal result in about half of that, lane by lane, and leaves every other lane (x <= 0, denormal,
// inf or NaN; y inf or NaN; a result beyond e^+-708) to SLEEF's pow, blended in, so C99's special
// cases stay SLEEF's.
//
// log x: x = 2^k z with z in [0.703125, 1.40625), split into 16 cells by the top four mantissa
// bits of x's bits minus pow_tables::log_offset; per cell a table gives 1/c (c the midpoint; 1
// exactly for the cell of 1.0, so that log x near 1 keeps its relative precision) and -log(1/c)
// as a head on the 2^-42 grid plus a tail. r = z/c - 1 comes out as a double-double (the
// product z * (1/c) split exactly by an FMA; |r| <= 1/32) and
//   log x = (k ln2_hi + head) + r - r^2/2 + r^3/3 + [tails + r^4 (-1/4 + r/5 - ... + r^9/13)],
// the bracketed part in double (Estrin's scheme), the rest by error-free sums: k ln2_hi + head
// is exact (both on the 2^-42 grid, below 2^10), and r^3/3 is a double-double too (its rounding
// alone, times a y that makes y log x ~700, cost 0.4 ulp near x = 1). So log x is a
// double-double with a relative error near 2^-70.
// y log x: the head's product split exactly by an FMA, plus y times the tail (t, t_lo).
// exp(t): t = m ln2/16 + r' with m = round(16 t / ln2); t - m (ln2/16) is exact in one FMA (the
// difference is a multiple of t's and ln2/16's spacing, below 2^-5.5: within 53 bits), then
// minus m times the constant's tail plus t_lo gives (r', r'_lo), |r'| <= 0.0217;
// exp(r') - 1 is its Taylor series through r'^8 (next term < 2^-68), and
//   2^(m/16) = 2^(m>>4) 2^(j/16), j = m & 15, from a table of 2^(j/16) as head plus tail:
// the result is head + (head q + tail (1 + q)), one rounding of a value carried to ~2^-57,
// with the power of two added to the exponent field. Error: about 0.05 ulp before the last
// rounding, 0.55 ulp measured after it (SLEEF's bound: 1 ulp), and a result that is a double
// (2^10, 10^2, 4^0.5, 9^1.5) comes out exactly (and 3^-1 as 1/3 does).
// tests/core/test_vector_math.cpp measures it against long double.

/// pow on vectors of doubles: `f64` in double-double for float64 data, `f32` in double for
/// float32 data widened to double (Note [float32 pow through double]).
template <class L>
struct pow_kernel {
    using V = typename L::V;
    using I = typename L::I;
    using M = typename L::M;

    static V fma(V a, V b, V c) { return L::fma(a, b, c); } // a * b + c, one rounding
    static V set(double x) { return L::set(x); }

    /// c[0] + c[1] x + ... + c[N-1] x^(N-1) by Estrin's scheme (x2 = x * x): pairs first, then
    /// pairs of pairs with x^2, x^4, ..., so the chain of dependent FMAs is log2(N) long, not N.
    template <int N>
    static V estrin(V x, V x2, const double (&c)[N]) {
        V level[(N + 1) / 2];
        for (int i = 0; i < N / 2; ++i) level[i] = fma(set(c[2 * i + 1]), x, set(c[2 * i]));
        if (N % 2) level[N / 2] = set(c[N - 1]);
        V p = x2;
        for (int n = (N + 1) / 2; n > 1; n = (n + 1) / 2) {
            for (int i = 0; i < n / 2; ++i) level[i] = fma(level[2 * i + 1], p, level[2 * i]);
            if (n % 2) level[n / 2] = level[n - 1];
            if (n > 2) p = L::mul(p, p);
        }
        return level[0];
    }
    // log1p(r) = r - r^2/2 + r^3/3 + r^4 (these, in r); exp(e) - 1 = e + e^2 (these, in e)
    static constexpr double log_f64[] = {-1.0 / 4, 1.0 / 5,   -1.0 / 6, 1.0 / 7,   -1.0 / 8,
                                         1.0 / 9,  -1.0 / 10, 1.0 / 11, -1.0 / 12, 1.0 / 13};
    static constexpr double third_hi = 1.0 / 3, third_lo = 0x1.5555555555555p-56; // 1/3 - hi
    static constexpr double exp_f64[] = {1.0 / 2,   1.0 / 6,    1.0 / 24,   1.0 / 120,
                                         1.0 / 720, 1.0 / 5040, 1.0 / 40320};
    // log1p(r) = r + r^2 (these); exp(e) - 1 = e + e^2 (these)
    static constexpr double log_f32[] = {-1.0 / 2, 1.0 / 3, -1.0 / 4, 1.0 / 5,
                                         -1.0 / 6, 1.0 / 7, -1.0 / 8, 1.0 / 9};
    static constexpr double exp_f32[] = {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720};

    // x = 2^k z (x positive and normal), z in [0.703125, 1.40625), and z's cell
    struct reduced {
        V k, z;
        I cell;
    };
    static reduced reduce(V x) {
        const I ix = L::bits(x);
        const I tmp = L::isub(ix, L::iset(pow_tables::log_offset));
        const I k_field = L::iand(tmp, L::iset(0xFFF0000000000000ull)); // k << 52
        const I cell = L::iand(L::template srl<48>(tmp), L::iset(15));
        // k + 2048 in the low bits, then as a double through 2^52's spacing of 1
        const I kb = L::template srl<52>(L::iadd(tmp, L::iset(0x8000000000000000ull)));
        const V k =
            L::sub(L::from_bits(L::ior(kb, L::iset(0x4330000000000000ull))), set(0x1p52 + 2048.0));
        return {k, L::from_bits(L::isub(ix, k_field)), cell};
    }

    // 16 t / ln2 rounded to an integer m, as an integer and as a double
    static void exp_split(V t, I& m, V& md) {
        const V shift = set(0x1.8p52);
        const V ms = fma(t, set(pow_tables::inv_ln2_16), shift);
        m = L::isub(L::bits(ms), L::bits(shift));
        md = L::sub(ms, shift);
    }

    // res * 2^(m >> 4) by the exponent field, without an arithmetic shift (m - j is a multiple
    // of 16); res * 2^(m >> 4) must be normal
    static V exp_scale(V res, I m, I j) {
        return L::from_bits(L::iadd(L::bits(res), L::template sll<48>(L::isub(m, j))));
    }

    // Note [pow by small exponents]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // x ** 2, x ** 0.5, x ** -1 and x ** 3 are everyday code, and a product, a square root or a
    // quotient gives them in one correctly rounded step where exp(y log x) takes a hundred (torch
    // and NumPy take such shortcuts too). The lanes whose exponent is 2, 3, -1 or 0.5 (float32 also
    // -2 and -0.5) get x * x, x^3, 1 / x and sqrt(x), with pow's own values where the shortcut's
    // differ (pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf, where sqrt gives -0 and NaN). Lane by
    // lane, whatever the other lanes hold, so an element's result still depends on its own inputs
    // only (Note [vector math]); a vector whose lanes all take a shortcut skips the kernel, and a
    // scalar exponent runs its shortcut's own loop (binary_loop's splat_loop). float64: x * x, 1 /
    // x and sqrt are correctly rounded, x^3 is (x * x as a double-double) * x with one rounding.
    // float32 data computes in double and rounds once to float: x * x, x^3 = (x * x) * x and 1 /
    // (x * x) act on the exact square, and one operation of double rounded to float is correctly
    // rounded (53 >= 2 * 24 + 2), so all but -0.5 (two roundings in double, then one to float) are
    // correctly rounded.

    // The shortcuts, one per exponent (float32 data takes them in double: `F32`).
    static V square(V x) { return L::mul(x, x); }
    static V recip(V x) { return L::div(set(1.0), x); }
    // pow(x, 0.5): sqrt with pow's -0 -> +0 and -inf -> +inf
    static V half(V x) {
        const V s = L::add(L::sqrt(x), set(0.0));
        return L::blend(L::eq(x, set(-__builtin_inf())), s, set(__builtin_inf()));
    }
    static V inv_square(V x) { return L::div(set(1.0), L::mul(x, x)); }
    static V inv_half(V x) { return L::div(set(1.0), half(x)); }
    // x^3: for float32 data (x * x exact in double) * x; for float64 (h + l) * x with h + l =
    // x * x exactly, one rounding, and where that is not finite (overflow, inf, NaN) the plain
    // product, which has pow's values there
    template <bool F32>
    static V cube(V x) {
        const V h = L::mul(x, x);
        if constexpr (F32) {
            return L::mul(h, x);
        } else {
            const V l = fma(x, x, L::neg(h));
            const V c = fma(h, x, L::mul(l, x));
            return L::blend(L::lt(L::abs(c), set(__builtin_inf())), L::mul(h, x), c);
        }
    }

    /// The exponents with a shortcut, in the order of `shortcut`'s k - 1: float64 takes the
    /// first four, float32 all six.
    static constexpr double shortcut_exponent[] = {2.0, 3.0, -1.0, 0.5, -2.0, -0.5};
    template <bool F32>
    static constexpr int shortcut_count = F32 ? 6 : 4;

    /// Which shortcut the exponent `b` has (1 + its index in shortcut_exponent), or 0.
    template <bool F32>
    static int shortcut_of(double b) {
        for (int k = 0; k < shortcut_count<F32>; ++k)
            if (b == shortcut_exponent[k]) return k + 1;
        return 0;
    }
    /// Shortcut `k` (shortcut_of) of x.
    template <bool F32>
    static V shortcut(int k, V x) {
        switch (k) {
        case 1:
            return square(x);
        case 2:
            return cube<F32>(x);
        case 3:
            return recip(x);
        case 4:
            return half(x);
        case 5:
            return inv_square(x);
        default:
            return inv_half(x);
        }
    }

    /// The lanes of b that have a shortcut.
    template <bool F32>
    static M shortcut_lanes(V b) {
        M fast = L::eq(b, set(shortcut_exponent[0]));
        for (int k = 1; k < shortcut_count<F32>; ++k)
            fast = L::mask_or(fast, L::eq(b, set(shortcut_exponent[k])));
        return fast;
    }
    /// pow's result in the lanes of b that have a shortcut (other lanes: x). Lane by lane: each
    /// lane's result is the shortcut's of its own exponent. Out of line: rare in general data,
    /// and its masks would crowd the registers of the kernel beside it.
    template <bool F32>
    [[gnu::noinline]] static V shortcuts(V x, V b) {
        V r = x;
        for (int k = 0; k < shortcut_count<F32>; ++k) {
            const M is = L::eq(b, set(shortcut_exponent[k]));
            if (L::any(is)) r = L::blend(is, r, shortcut<F32>(k + 1, x));
        }
        return r;
    }

    /// float64 pow; `slow` is set to the lanes the caller must take from SLEEF.
    static V f64(V x, V y, M& slow) {
        namespace t = pow_tables;
        // log x as (lg, lg_lo)
        const reduced xr = reduce(x);
        const V k = xr.k, z = xr.z;
        const I cell = xr.cell;
        const V inv_c = L::lookup16(t::inv_c, cell);
        const V p = L::mul(z, inv_c);
        const V p_lo = fma(z, inv_c, L::neg(p));
        const V pm1 = L::sub(p, set(1.0)); // exact: p is within 1/16 of 1
        const V r = L::add(pm1, p_lo);
        const V r_lo = L::add(L::sub(pm1, r), p_lo);
        const V head = fma(k, set(t::ln2_hi), L::lookup16(t::log_c_hi, cell)); // exact
        const V s1 = L::add(head, r);
        const V e1 = L::add(L::sub(head, s1), r); // |head| >= |r| or head == 0
        const V r2 = L::mul(r, r);
        const V r2_lo = fma(r, r, L::neg(r2));
        const V half_r2 = L::mul(set(-0.5), r2); // exact
        const V s2 = L::add(s1, half_r2);
        const V e2 = L::add(L::sub(s1, s2), half_r2); // |s1| >= r^2 / 2
        // r^3 / 3 as a double-double too (its rounding, times a large y, would cost ~0.4 ulp)
        const V r3 = L::mul(r2, r);
        const V r3_lo = L::add(fma(r2, r, L::neg(r3)), fma(r2_lo, r, L::mul(r2, r_lo)));
        const V c3 = L::mul(r3, set(third_hi));
        const V c3_lo = L::add(fma(r3, set(third_hi), L::neg(c3)),
                               fma(r3_lo, set(third_hi), L::mul(r3, set(third_lo))));
        const V s3 = L::add(s2, c3);
        const V e3 = L::add(L::sub(s2, s3), c3);
        // tails: k ln2_lo + the cell's, r_lo / (1 + r), -r2_lo / 2, the sums' errors, then
        // r^4 (-1/4 + r/5 - ...)
        V lo = fma(k, set(t::ln2_lo), L::lookup16(t::log_c_lo, cell));
        lo = fma(r_lo, L::add(L::sub(set(1.0), r), r2), lo);
        lo = fma(r2_lo, set(-0.5), lo);
        lo = L::add(lo, L::add(L::add(e1, e2), L::add(e3, c3_lo)));
        lo = fma(L::mul(r2, r2), estrin(r, r2, log_f64), lo);
        const V lg = L::add(s3, lo);
        const V lg_lo = L::add(L::sub(s3, lg), lo);
        // y log x as (th, tl)
        const V th = L::mul(y, lg);
        const V tl = fma(y, lg_lo, fma(y, lg, L::neg(th)));
        // exp(th + tl)
        I m;
        V md;
        exp_split(th, m, md);
        const V r1 = fma(L::neg(md), set(t::ln2_16), th); // exact
        const V corr = fma(L::neg(md), set(t::ln2_16_lo), tl);
        const V e = L::add(r1, corr);
        const V e_lo = L::add(L::sub(r1, e), corr);
        const V ee = L::mul(e, e);
        const V q = L::add(fma(ee, estrin(e, ee, exp_f64), e), e_lo); // exp(e + e_lo) - 1
        const I j = L::iand(m, L::iset(15));
        const V t_hi = L::lookup16(t::exp_hi, j);
        const V t_lo = L::lookup16(t::exp_lo, j);
        const V res = L::add(t_hi, fma(t_hi, q, fma(t_lo, q, t_lo)));
        // the lanes this kernel answers: 0x1p-1022 <= x < inf, |y| < inf, -708 < t < 709
        const V inf = set(__builtin_inf());
        const M ok =
            L::mask_and(L::mask_and(L::ge(x, set(0x1p-1022)), L::lt(x, inf)),
                        L::mask_and(L::lt(L::abs(y), inf),
                                    L::mask_and(L::gt(th, set(-708.0)), L::lt(th, set(709.0)))));
        slow = L::mask_not(ok);
        return exp_scale(res, m, j);
    }

    /// float32 pow of widened floats, x > 0 and finite, y finite: the same steps in plain
    /// double (Note [float32 pow through double]); t is clamped to +-708, where the result is
    /// still a normal double and already beyond float's range.
    static V f32(V x, V y) {
        namespace t = pow_tables;
        const reduced xr = reduce(x);
        const V r = fma(xr.z, L::lookup16(t::inv_c, xr.cell), set(-1.0));
        const V r2 = L::mul(r, r);
        const V poly = estrin(r, r2, log_f32); // log1p(r) = r + r^2 poly
        const V head = fma(xr.k, set(t::ln2_hi), L::lookup16(t::log_c_hi, xr.cell));
        const V lo = fma(xr.k, set(t::ln2_lo), L::lookup16(t::log_c_lo, xr.cell));
        const V lg = L::add(head, L::add(fma(r2, poly, r), lo));
        const V th = L::min(L::max(L::mul(y, lg), set(-708.0)), set(708.0));
        I m;
        V md;
        exp_split(th, m, md);
        const V e = fma(L::neg(md), set(t::ln2_16), th);
        const V ee = L::mul(e, e);
        const V q = fma(ee, estrin(e, ee, exp_f32), e); // exp(e) - 1
        const I j = L::iand(m, L::iset(15));
        const V t_hi = L::lookup16(t::exp_hi, j);
        return exp_scale(fma(t_hi, q, t_hi), m, j);
    }
};

} // namespace
} // namespace isthmus::cpu::vmath
