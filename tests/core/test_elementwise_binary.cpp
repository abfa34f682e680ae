// Tests for binary elementwise ops: references on random data, layouts, dtypes, scalars, errors.
#include "test_elementwise_util.hpp"

using namespace isthmus;
using namespace ew_test;

namespace {

// Python's floor division and modulo on doubles (NumPy's npy_divmod).
double py_floordiv(double a, double b) {
    if (b == 0) return a / b;
    double mod = std::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return std::copysign(0.0, a / b);
    double fl = std::floor(div);
    if (div - fl > 0.5) fl += 1.0;
    return fl;
}
double py_mod(double a, double b) {
    if (b == 0) return std::fmod(a, b);
    double mod = std::fmod(a, b);
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) mod += b;
    } else {
        mod = std::copysign(0.0, b);
    }
    return mod;
}
double nan_max(double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
double nan_min(double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

struct float_case {
    binary_op op;
    double (*ref)(double, double);
    double ulps;
};

const std::vector<float_case>& float_cases() {
    static const std::vector<float_case> cases = {
        {binary_op::add, [](double a, double b) { return a + b; }, 1},
        {binary_op::sub, [](double a, double b) { return a - b; }, 1},
        {binary_op::mul, [](double a, double b) { return a * b; }, 1},
        {binary_op::div, [](double a, double b) { return a / b; }, 1},
        {binary_op::maximum, nan_max, 0},
        {binary_op::minimum, nan_min, 0},
        {binary_op::atan2, [](double a, double b) { return std::atan2(a, b); }, 4},
        {binary_op::floor_div, py_floordiv, 0},
        {binary_op::mod, py_mod, 8},
    };
    return cases;
}

// A 1-d tensor of dtype dt holding `values` (wrapped into dt like a C cast).
tensor ints(dtype dt, const std::vector<int64_t>& values) {
    return tensor::from_vector(values).to(dt);
}

} // namespace

TEST_CASE("elementwise: float ops match float64 references in every layout") {
    for (dtype dt : {dtype::float32, dtype::float64}) {
        const auto as = layouts_2d(dt, 7, 5, 11);
        const auto bs = layouts_2d(dt, 7, 5, 211);
        for (const auto& c : float_cases()) {
            for (const auto& la : as) {
                for (const auto& lb : bs) {
                    CAPTURE(name(c.op));
                    CAPTURE(dt);
                    CAPTURE(la.name);
                    CAPTURE(lb.name);
                    check_binary_ref<double>(binary(c.op, la.t, lb.t), dt, la.t, lb.t, c.ref,
                                             tol_for(dt, c.ulps));
                }
            }
        }
    }
}

TEST_CASE("elementwise: pow on floats, including the inplace-style broadcast scalar path") {
    for (dtype dt : {dtype::float32, dtype::float64}) {
        const tensor a = random_tensor(dt, {6, 4}, 5, 0.1, 3.0);
        const tensor b = random_tensor(dt, {6, 4}, 6, -2.0, 2.0);
        auto ref = [](double x, double y) { return std::pow(x, y); };
        check_binary_ref<double>(binary(binary_op::pow, a, b), dt, a, b, ref, tol_for(dt, 8));
        check_binary_ref<double>(pow(a, b.t().t()), dt, a, b, ref, tol_for(dt, 8));
        const tensor e = tensor::scalar_tensor(2.0).to(dt);
        check_binary_ref<double>(pow(a, e), dt, a, e, ref, tol_for(dt, 8));
    }
}

TEST_CASE("elementwise: broadcasting shapes, 0-d and empty operands") {
    const dtype dt = dtype::float32;
    const tensor a = random_tensor(dt, {4, 3}, 1);
    auto add_ref = [](double x, double y) { return x + y; };
    struct bcase {
        const char* name;
        tensor a, b;
    };
    const std::vector<bcase> cases = {
        {"row", a, random_tensor(dt, {3}, 2)},
        {"column", a, random_tensor(dt, {4, 1}, 3)},
        {"0-d right", a, tensor::scalar_tensor(2.5f)},
        {"0-d left", tensor::scalar_tensor(-1.5f), a},
        {"0-d both", tensor::scalar_tensor(1.0f), tensor::scalar_tensor(2.0f)},
        {"outer", random_tensor(dt, {4, 1}, 4), random_tensor(dt, {1, 3}, 5)},
        {"rank 3", random_tensor(dt, {2, 1, 3}, 6), random_tensor(dt, {4, 1}, 7)},
        {"expanded view", a, random_tensor(dt, {3}, 8).expand({4, 3})},
        {"empty", random_tensor(dt, {0, 3}, 9), random_tensor(dt, {3}, 10)},
        {"empty broadcast", random_tensor(dt, {4, 0}, 9), random_tensor(dt, {4, 1}, 10)},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        check_binary_ref<double>(binary(binary_op::add, c.a, c.b), dt, c.a, c.b, add_ref, 1e-7);
        check_binary_ref<double>(
            binary(binary_op::sub, c.b, c.a), dt, c.b, c.a,
            [](double x, double y) { return x - y; }, 1e-7);
    }
    const tensor z = binary(binary_op::mul, tensor::scalar_tensor(3.0), tensor::scalar_tensor(4.0));
    CHECK(z.dim() == 0);
    CHECK(z.item<double>() == 12.0);
}

TEST_CASE("elementwise: integer add, sub and mul wrap around in every integer dtype") {
    const std::vector<dtype> dts = {dtype::int8,  dtype::int16,  dtype::int32, dtype::int64,
                                    dtype::uint8, dtype::uint16, dtype::uint32};
    for (dtype dt : dts) {
        CAPTURE(dt);
        const int bits = static_cast<int>(itemsize(dt)) * 8;
        const int64_t hi = is_signed_int(dt)
                               ? (bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1)
                               : (int64_t{1} << bits) - 1;
        const int64_t lo = is_signed_int(dt) ? -hi - 1 : 0;
        const tensor v = ints(dt, {lo, hi, -1, 0, 1, 2, 77, lo + 1, hi - 3});
        const tensor a = v.unsqueeze(1), b = v.unsqueeze(0);
        auto wrapped = [dt](uint64_t r) { return wrap_to(dt, static_cast<int64_t>(r)); };
        check_binary_ref<int64_t>(
            binary(binary_op::add, a, b), dt, a, b,
            [&](int64_t x, int64_t y) { return wrapped(uint64_t(x) + uint64_t(y)); }, 0);
        check_binary_ref<int64_t>(
            binary(binary_op::sub, a, b), dt, a, b,
            [&](int64_t x, int64_t y) { return wrapped(uint64_t(x) - uint64_t(y)); }, 0);
        check_binary_ref<int64_t>(
            binary(binary_op::mul, a, b), dt, a, b,
            [&](int64_t x, int64_t y) { return wrapped(uint64_t(x) * uint64_t(y)); }, 0);
    }
    // uint64 beyond int64.
    const tensor u = tensor::from_vector(std::vector<uint64_t>{UINT64_MAX, 1, 1ull << 63, 0});
    const tensor s = add(u, u);
    CHECK(s.dtype() == dtype::uint64);
    CHECK(s.to_vector<uint64_t>() == std::vector<uint64_t>{UINT64_MAX - 1, 2, 0, 0});
}

TEST_CASE("elementwise: integer floor_div and mod follow Python and never trap") {
    for (dtype dt : {dtype::int8, dtype::int16, dtype::int32, dtype::int64}) {
        CAPTURE(dt);
        const int bits = static_cast<int>(itemsize(dt)) * 8;
        const int64_t mn = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
        const tensor v = ints(dt, {mn, -7, -3, -1, 0, 1, 2, 3, 7, -(mn + 1)});
        const tensor a = v.unsqueeze(1), b = v.unsqueeze(0);
        auto fdiv = [dt](int64_t x, int64_t y) -> int64_t {
            if (y == 0) return 0;
            if (y == -1) return wrap_to(dt, static_cast<int64_t>(0 - uint64_t(x)));
            int64_t q = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
            return q;
        };
        auto fmod_ = [](int64_t x, int64_t y) -> int64_t {
            if (y == 0 || y == -1) return 0;
            int64_t r = x % y;
            if (r != 0 && ((r < 0) != (y < 0))) r += y;
            return r;
        };
        check_binary_ref<int64_t>(floor_div(a, b), dt, a, b, fdiv, 0);
        check_binary_ref<int64_t>(mod(a, b), dt, a, b, fmod_, 0);
    }
    for (dtype dt : {dtype::uint8, dtype::uint32, dtype::uint64}) {
        const tensor v = ints(dt, {0, 1, 2, 7, 200});
        const tensor a = v.unsqueeze(1), b = v.unsqueeze(0);
        check_binary_ref<uint64_t>(
            floor_div(a, b), dt, a, b, [](uint64_t x, uint64_t y) { return y ? x / y : 0; }, 0);
        check_binary_ref<uint64_t>(
            mod(a, b), dt, a, b, [](uint64_t x, uint64_t y) { return y ? x % y : 0; }, 0);
    }
    // Python examples.
    const tensor x = ints(dtype::int32, {7, -7, 7, -7});
    const tensor y = ints(dtype::int32, {2, 2, -2, -2});
    CHECK(floor_div(x, y).to_vector<int64_t>() == std::vector<int64_t>{3, -4, -4, 3});
    CHECK(mod(x, y).to_vector<int64_t>() == std::vector<int64_t>{1, 1, -1, -1});
    CHECK((x % y).to_vector<int64_t>() == std::vector<int64_t>{1, 1, -1, -1});
}

TEST_CASE("elementwise: float floor_div and mod special values") {
    const tensor a = tensor::from_vector(std::vector<double>{5.5, -5.5, 1.0, 1.0, INFINITY, 0.0});
    const tensor b = tensor::from_vector(std::vector<double>{2.0, 2.0, 0.0, -0.0, 2.0, -3.0});
    const auto q = floor_div(a, b).to_vector<double>();
    const auto r = mod(a, b).to_vector<double>();
    CHECK(q[0] == 2.0);
    CHECK(q[1] == -3.0);
    CHECK(q[2] == INFINITY);
    CHECK(q[3] == -INFINITY);
    CHECK(std::isnan(q[4]));
    CHECK(r[0] == 1.5);
    CHECK(r[1] == 0.5);
    CHECK(std::isnan(r[2]));
    CHECK(std::isnan(r[4]));
    CHECK(r[5] == 0.0);
    CHECK(std::signbit(r[5])); // the sign of the divisor
}

TEST_CASE("elementwise: integer pow wraps and refuses negative exponents") {
    for (dtype dt : {dtype::int8, dtype::int32, dtype::int64, dtype::uint8, dtype::uint64}) {
        CAPTURE(dt);
        const tensor a = is_signed_int(dt) ? ints(dt, {-3, -2, -1, 0, 1, 2, 3}).unsqueeze(1)
                                           : ints(dt, {0, 1, 2, 3, 5}).unsqueeze(1);
        const tensor b = ints(dt, {0, 1, 2, 3, 5, 7}).unsqueeze(0);
        auto ref = [dt](int64_t x, int64_t y) {
            uint64_t r = 1;
            for (int64_t i = 0; i < y; ++i) r *= uint64_t(x);
            return wrap_to(dt, static_cast<int64_t>(r));
        };
        if (dt == dtype::uint64)
            check_binary_ref<uint64_t>(
                pow(a, b), dt, a, b,
                [](uint64_t x, uint64_t y) {
                    uint64_t r = 1;
                    for (uint64_t i = 0; i < y; ++i) r *= x;
                    return r;
                },
                0);
        else
            check_binary_ref<int64_t>(pow(a, b), dt, a, b, ref, 0);
    }
    const tensor base = ints(dtype::int32, {2, 3});
    const tensor e = ints(dtype::int32, {1, -1});
    const auto before = snapshot(base);
    const std::string msg = error_of<value_error>([&] { (void)pow(base, e); });
    CHECK(contains(msg, "negative integer powers"));
    CHECK(error_of<value_error>([&] { (void)pow(base, -2); }) != "<no error>");
    CHECK(error_of<value_error>([&] { binary_inplace(binary_op::pow, base, e); }) != "<no error>");
    CHECK(snapshot(base) == before);
    // A float base or exponent is fine.
    CHECK(pow(base, -1.0).to_vector<double>() == std::vector<double>{0.5, 1.0 / 3.0});
    // bool ** bool computes in int8 like NumPy.
    const tensor t = tensor::from_vector(std::vector<bool>{true, false});
    CHECK(pow(t, t).dtype() == dtype::int8);
    CHECK(pow(t, t).to_vector<int64_t>() == std::vector<int64_t>{1, 1});
}

TEST_CASE("elementwise: every dtype pair promotes like NumPy and computes exactly") {
    const std::vector<dtype> all = {
        dtype::bool_,    dtype::int8,    dtype::int16,   dtype::int32,     dtype::int64,
        dtype::uint8,    dtype::uint16,  dtype::uint32,  dtype::uint64,    dtype::float16,
        dtype::bfloat16, dtype::float32, dtype::float64, dtype::complex64, dtype::complex128};
    uint32_t seed = 1;
    for (dtype da : all) {
        for (dtype db : all) {
            CAPTURE(da);
            CAPTURE(db);
            // Small integer values are exact in every dtype, so references are exact.
            const tensor a = random_tensor(da, {3, 4}, seed++, -4, 4, true);
            const tensor b = random_tensor(db, {4}, seed++, -4, 4, true);
            const dtype p = promote_types(da, db);
            const bool both_bool = is_bool(da) && is_bool(db);
            const tensor s = add(a, b);
            CHECK(s.dtype() == p);
            CHECK(result_type(binary_op::add, da, db) == p);
            if (is_complex(p)) {
                check_binary_ref<cd>(
                    s, p, a, b, [](cd x, cd y) { return x + y; }, 0);
                check_binary_ref<cd>(
                    mul(a, b), p, a, b, [](cd x, cd y) { return x * y; }, 0);
                check_binary_ref<cd>(
                    eq(a, b), dtype::bool_, a, b, [](cd x, cd y) { return cd(x == y ? 1 : 0); }, 0);
                continue;
            }
            auto sum = [&](double x, double y) { return both_bool ? double(x || y) : x + y; };
            auto prod = [&](double x, double y) { return both_bool ? double(x && y) : x * y; };
            check_binary_ref<double>(s, p, a, b, sum, 0);
            check_binary_ref<double>(mul(a, b), p, a, b, prod, 0);
            check_binary_ref<double>(
                maximum(a, b), p, a, b, [](double x, double y) { return std::max(x, y); }, 0);
            check_binary_ref<double>(
                lt(a, b), dtype::bool_, a, b, [](double x, double y) { return double(x < y); }, 0);
            check_binary_ref<double>(
                ne(a, b), dtype::bool_, a, b, [](double x, double y) { return double(x != y); }, 0);
            check_binary_ref<double>(
                logical_and(a, b), dtype::bool_, a, b,
                [](double x, double y) { return double(x != 0 && y != 0); }, 0);
            const dtype dq = is_inexact(p) ? p : dtype::float64;
            CHECK(div(a, b).dtype() == dq);
        }
    }
}

TEST_CASE("elementwise: half types compute in float and round once") {
    for (dtype dt : {dtype::float16, dtype::bfloat16}) {
        CAPTURE(dt);
        const tensor a = random_tensor(dt, {5, 7}, 3, -8, 8);
        const tensor b = random_tensor(dt, {5, 7}, 4, 0.5, 8);
        for (binary_op op : {binary_op::add, binary_op::mul, binary_op::div}) {
            const tensor out = binary(op, a, b);
            CHECK(out.dtype() == dt);
            // Reference: the float32 result rounded to dt.
            const tensor want = binary(op, a.to(dtype::float32), b.to(dtype::float32)).to(dt);
            CHECK(out.to_vector<double>() == want.to_vector<double>());
        }
        // A transposed half input through the conversion blocks.
        const tensor t = add(a.t(), b.t());
        CHECK(t.to_vector<double>() == add(a, b).t().to_vector<double>());
    }
    CHECK(add(random_tensor(dtype::float16, {2}, 1), random_tensor(dtype::bfloat16, {2}, 2))
              .dtype() == dtype::float32);
}

TEST_CASE("elementwise: weak scalars follow NEP 50") {
    const tensor f = random_tensor(dtype::float32, {3, 2}, 1);
    const tensor i8 = ints(dtype::int8, {1, -2, 100});
    const tensor u8 = ints(dtype::uint8, {1, 2, 250});
    const tensor bl = tensor::from_vector(std::vector<bool>{true, false});
    CHECK(add(f, 2.5).dtype() == dtype::float32);
    CHECK(add(f, 2).dtype() == dtype::float32);
    CHECK(add(i8, 1).dtype() == dtype::int8);
    CHECK(add(i8, 1.5).dtype() == dtype::float64);
    CHECK(add(i8, std::complex<double>(0, 1)).dtype() == dtype::complex128);
    CHECK(add(f, std::complex<float>(0, 1)).dtype() == dtype::complex64);
    CHECK(add(bl, 1).dtype() == dtype::int64);
    CHECK(add(bl, true).dtype() == dtype::bool_);
    CHECK(div(i8, 2).dtype() == dtype::float64);
    CHECK(add(i8, 100).to_vector<int64_t>() == std::vector<int64_t>{101, 98, -56}); // wraps
    CHECK(sub(10, i8).to_vector<int64_t>() == std::vector<int64_t>{9, 12, -90});
    CHECK(div(1.0, tensor::from_vector(std::vector<float>{2, 4})).to_vector<double>() ==
          std::vector<double>{0.5, 0.25});
    check_binary_ref<double>(
        mul(f, 3.0), dtype::float32, f, tensor::scalar_tensor(3.0),
        [](double x, double y) { return x * y; }, tol_for(dtype::float32, 1));
    check_binary_ref<double>(
        sub(1.5, f), dtype::float32, tensor::scalar_tensor(1.5), f,
        [](double x, double y) { return x - y; }, tol_for(dtype::float32, 1));
    CHECK(add(u8, uint64_t{5}).to_vector<int64_t>() == std::vector<int64_t>{6, 7, 255});
    CHECK(add(ints(dtype::uint64, {1}), uint64_t{1} << 63).to_vector<uint64_t>()[0] ==
          (uint64_t{1} << 63) + 1);
    // Out-of-range integer scalars raise instead of wrapping (NumPy: OverflowError).
    const auto before = snapshot(u8);
    const std::string msg = error_of<overflow_error>([&] { (void)add(u8, 300); });
    CHECK(contains(msg, "300"));
    CHECK(contains(msg, "uint8"));
    CHECK(error_of<overflow_error>([&] { (void)add(u8, -1); }) != "<no error>");
    CHECK(error_of<overflow_error>([&] { (void)mul(-129, i8); }) != "<no error>");
    CHECK(error_of<overflow_error>([&] { binary_inplace(binary_op::add, u8, 256); }) !=
          "<no error>");
    CHECK(snapshot(u8) == before);
    // A strong 0-d tensor promotes by dtype instead.
    CHECK(add(i8, scalar(1.5).to_tensor()).dtype() == dtype::float64);
    CHECK(add(i8, scalar(int64_t{300}).to_tensor()).dtype() == dtype::int64);
}

TEST_CASE("elementwise: comparisons, NaN and complex equality") {
    const tensor a = tensor::from_vector(std::vector<double>{1, NAN, 3, -0.0, INFINITY});
    const tensor b = tensor::from_vector(std::vector<double>{1, NAN, 2, 0.0, INFINITY});
    CHECK(eq(a, b).to_vector<bool>() == std::vector<bool>{true, false, false, true, true});
    CHECK(ne(a, b).to_vector<bool>() == std::vector<bool>{false, true, true, false, false});
    CHECK(lt(a, b).to_vector<bool>() == std::vector<bool>{false, false, false, false, false});
    CHECK(ge(a, b).to_vector<bool>() == std::vector<bool>{true, false, true, true, true});
    CHECK(gt(a, 2.0).to_vector<bool>() == std::vector<bool>{false, false, true, false, true});
    CHECK(le(2.0, a).to_vector<bool>() == std::vector<bool>{false, false, true, false, true});
    // NaN-propagating maximum / minimum.
    CHECK(std::isnan(maximum(a, 0.0).to_vector<double>()[1]));
    CHECK(std::isnan(minimum(0.0, a).to_vector<double>()[1]));
    const tensor z = tensor::from_vector(std::vector<cd>{{1, 2}, {1, -2}});
    const tensor w = tensor::from_vector(std::vector<cd>{{1, 2}, {1, 2}});
    CHECK(eq(z, w).to_vector<bool>() == std::vector<bool>{true, false});
    CHECK(ne(z, w).to_vector<bool>() == std::vector<bool>{false, true});
    for (binary_op op :
         {binary_op::lt, binary_op::le, binary_op::gt, binary_op::ge, binary_op::maximum,
          binary_op::minimum, binary_op::floor_div, binary_op::mod, binary_op::atan2}) {
        CAPTURE(name(op));
        const std::string msg = error_of<type_error>([&] { (void)binary(op, z, w); });
        CHECK(contains(msg, std::string(name(op))));
        CHECK(contains(msg, "complex128"));
    }
    // Comparisons in every layout against references.
    for (const auto& la : layouts_2d(dtype::int16, 6, 5, 8)) {
        const tensor b2 = random_tensor(dtype::int16, {5}, 9);
        check_binary_ref<double>(
            le(la.t, b2), dtype::bool_, la.t, b2, [](double x, double y) { return double(x <= y); },
            0);
        check_binary_ref<double>(
            eq(b2, la.t), dtype::bool_, b2, la.t, [](double x, double y) { return double(x == y); },
            0);
    }
}

TEST_CASE("elementwise: logical, bitwise and shift ops") {
    const tensor p = tensor::from_vector(std::vector<bool>{true, true, false, false});
    const tensor q = tensor::from_vector(std::vector<bool>{true, false, true, false});
    CHECK(logical_and(p, q).to_vector<bool>() == std::vector<bool>{true, false, false, false});
    CHECK(logical_or(p, q).to_vector<bool>() == std::vector<bool>{true, true, true, false});
    CHECK(logical_xor(p, q).to_vector<bool>() == std::vector<bool>{false, true, true, false});
    CHECK((p & q).dtype() == dtype::bool_);
    CHECK((p | q).to_vector<bool>() == std::vector<bool>{true, true, true, false});
    CHECK((p ^ q).to_vector<bool>() == std::vector<bool>{false, true, true, false});
    const tensor f = tensor::from_vector(std::vector<double>{0.0, -0.5, NAN, 2.0});
    CHECK(logical_or(f, 0).to_vector<bool>() == std::vector<bool>{false, true, true, true});
    const tensor c = tensor::from_vector(std::vector<cd>{{0, 0}, {0, 1}, {1, 0}, {0, 0}});
    CHECK(logical_and(c, f).to_vector<bool>() == std::vector<bool>{false, true, true, false});

    for (dtype dt : {dtype::int8, dtype::int16, dtype::int32, dtype::int64, dtype::uint8,
                     dtype::uint16, dtype::uint32}) {
        CAPTURE(dt);
        const tensor a = random_tensor(dt, {6, 1}, 3, -100, 100);
        const tensor b = random_tensor(dt, {1, 5}, 4, -100, 100);
        check_binary_ref<int64_t>(
            a & b, dt, a, b, [](int64_t x, int64_t y) { return x & y; }, 0);
        check_binary_ref<int64_t>(
            a | b, dt, a, b, [](int64_t x, int64_t y) { return x | y; }, 0);
        check_binary_ref<int64_t>(
            a ^ b, dt, a, b, [&](int64_t x, int64_t y) { return wrap_to(dt, x ^ y); }, 0);
        const int bits = static_cast<int>(itemsize(dt)) * 8;
        const tensor s = ints(dt, {0, 1, 3, bits - 1, bits, bits + 5}).unsqueeze(0);
        auto shl = [&](int64_t x, int64_t n) -> int64_t {
            return n >= bits ? 0 : wrap_to(dt, static_cast<int64_t>(uint64_t(x) << n));
        };
        auto shr = [&](int64_t x, int64_t n) -> int64_t {
            if (n >= bits) return x < 0 ? -1 : 0;
            return x >> n;
        };
        check_binary_ref<int64_t>(a << s, dt, a, s, shl, 0);
        check_binary_ref<int64_t>(a >> s, dt, a, s, shr, 0);
    }
    // Negative shift counts behave like huge ones (NumPy).
    const tensor v = ints(dtype::int32, {-8, 8});
    CHECK(shift_left(v, ints(dtype::int32, {-1, -1})).to_vector<int64_t>() ==
          std::vector<int64_t>{0, 0});
    CHECK(shift_right(v, ints(dtype::int32, {-1, -1})).to_vector<int64_t>() ==
          std::vector<int64_t>{-1, 0});
    // bool shifts compute in int8.
    CHECK(shift_left(p, q).dtype() == dtype::int8);
    CHECK(shift_left(p, q).to_vector<int64_t>() == std::vector<int64_t>{2, 1, 0, 0});
    // Floats and complex have no bits.
    for (binary_op op : {binary_op::bit_and, binary_op::bit_or, binary_op::bit_xor,
                         binary_op::shift_left, binary_op::shift_right}) {
        CAPTURE(name(op));
        CHECK(contains(error_of<type_error>([&] { (void)binary(op, f, f); }), "float64"));
        CHECK(error_of<type_error>([&] { (void)binary(op, v, 1.0); }) != "<no error>");
        CHECK(error_of<type_error>([&] { (void)binary(op, c, v); }) != "<no error>");
    }
    // int64 with uint64 promotes to float64 (NumPy), which has no bitwise ops.
    CHECK(error_of<type_error>([&] {
              (void)bit_and(ints(dtype::int64, {1}), ints(dtype::uint64, {1}));
          }) != "<no error>");
}

TEST_CASE("elementwise: complex arithmetic matches std::complex<double>") {
    for (dtype dt : {dtype::complex64, dtype::complex128}) {
        CAPTURE(dt);
        const double tol = tol_for(dt, 8);
        for (const auto& la : layouts_2d(dt, 4, 3, 21)) {
            const tensor b = random_tensor(dt, {3}, 23);
            CAPTURE(la.name);
            check_binary_ref<cd>(
                add(la.t, b), dt, la.t, b, [](cd x, cd y) { return x + y; }, tol);
            check_binary_ref<cd>(
                sub(la.t, b), dt, la.t, b, [](cd x, cd y) { return x - y; }, tol);
            check_binary_ref<cd>(
                mul(la.t, b), dt, la.t, b, [](cd x, cd y) { return x * y; }, tol);
            check_binary_ref<cd>(
                div(la.t, b), dt, la.t, b, [](cd x, cd y) { return x / y; }, tol);
            check_binary_ref<cd>(
                pow(la.t, b), dt, la.t, b, [](cd x, cd y) { return std::pow(x, y); }, tol * 64);
        }
        // Integral exponents multiply exactly.
        const tensor z = tensor::from_vector(std::vector<cd>{{1, 1}, {0, 0}, {2, -1}}).to(dt);
        const auto sq = pow(z, 2).to_vector<cd>();
        CHECK(sq[0] == cd(0, 2));
        CHECK(sq[1] == cd(0, 0));
        CHECK(sq[2] == cd(3, -4));
        CHECK(pow(z, 0).to_vector<cd>()[1] == cd(1, 0));
    }
    const tensor r = random_tensor(dtype::float32, {3}, 1);
    const tensor z = random_tensor(dtype::complex64, {3}, 2);
    check_binary_ref<cd>(
        add(r, z), dtype::complex64, r, z, [](cd x, cd y) { return x + y; }, 1e-6);
    CHECK(add(random_tensor(dtype::int32, {2}, 3), z.slice(0, 0, 2)).dtype() == dtype::complex128);
}

TEST_CASE("elementwise: large tensors run multi-threaded and match references") {
    // Above the parallel grain; odd sizes so chunks split rows.
    const tensor a = random_tensor(dtype::float32, {301, 403}, 1);
    const tensor b = random_tensor(dtype::float32, {403, 301}, 2).t();
    const tensor c = random_tensor(dtype::float64, {403}, 3);
    const tensor i = random_tensor(dtype::int32, {301, 403}, 4, -50, 50);
    auto add_ref = [](double x, double y) { return x + y; };
    check_binary_ref<double>(add(a, a), dtype::float32, a, a, add_ref, tol_for(dtype::float32, 1));
    check_binary_ref<double>(add(a, b), dtype::float32, a, b, add_ref, tol_for(dtype::float32, 1));
    check_binary_ref<double>(
        mul(a, 2.0f), dtype::float32, a, tensor::scalar_tensor(2.0),
        [](double x, double y) { return x * y; }, tol_for(dtype::float32, 1));
    // Conversion blocks (int32 + float64 -> float64), transposed, broadcast row.
    check_binary_ref<double>(add(i.t(), c.slice(0, 0, 301)), dtype::float64, i.t(),
                             c.slice(0, 0, 301), add_ref, 0);
    check_binary_ref<double>(add(i, c), dtype::float64, i, c, add_ref, 0);
    check_binary_ref<double>(
        atan2(a, b), dtype::float32, a, b, [](double x, double y) { return std::atan2(x, y); },
        tol_for(dtype::float32, 4));
    check_binary_ref<double>(
        gt(i, a), dtype::bool_, i, a, [](double x, double y) { return double(x > y); }, 0);
}

TEST_CASE("elementwise: bad operands raise typed errors and leave inputs unchanged") {
    const tensor a = random_tensor(dtype::float32, {2, 3}, 1);
    const tensor b = random_tensor(dtype::float32, {4}, 2);
    const auto sa = snapshot(a), sb = snapshot(b);
    const std::string msg = error_of<value_error>([&] { (void)add(a, b); });
    CHECK(contains(msg, "add"));
    CHECK(contains(msg, "(2, 3)"));
    CHECK(contains(msg, "(4,)"));
    CHECK_THROWS_AS((void)mul(a, b.unsqueeze(0)), value_error);
    CHECK_THROWS_AS((void)(a + b), value_error);
    CHECK(snapshot(a) == sa);
    CHECK(snapshot(b) == sb);
    // Undefined tensors.
    const tensor u;
    CHECK(contains(error_of<value_error>([&] { (void)add(u, a); }), "undefined"));
    CHECK_THROWS_AS((void)add(a, u), value_error);
    CHECK_THROWS_AS((void)add(u, 1), value_error);
    // Boolean subtract and negation are refused like NumPy.
    const tensor p = tensor::from_vector(std::vector<bool>{true, false});
    CHECK(contains(error_of<type_error>([&] { (void)sub(p, p); }), "boolean subtract"));
    CHECK_THROWS_AS((void)sub(p, true), type_error);
    CHECK(snapshot(p) == std::vector<double>{1, 0});
    // result_type reports the same errors without running anything.
    CHECK_THROWS_AS((void)result_type(binary_op::lt, dtype::complex64, dtype::float32), type_error);
    CHECK(result_type(binary_op::eq, dtype::complex64, dtype::float32) == dtype::bool_);
    CHECK(result_type(binary_op::div, dtype::int8, dtype::int8) == dtype::float64);
    CHECK(result_type(binary_op::atan2, dtype::int8, dtype::int8) == dtype::float16);
    CHECK(result_type(binary_op::add, dtype::bool_, dtype::bool_) == dtype::bool_);
    CHECK(result_type(binary_op::floor_div, dtype::bool_, dtype::bool_) == dtype::int8);
}

TEST_CASE("elementwise: C++ operators and named functions") {
    const tensor a = tensor::from_vector(std::vector<int32_t>{1, 2, 3, -4});
    const tensor b = tensor::from_vector(std::vector<int32_t>{2, 2, 2, 3});
    CHECK((a + b).to_vector<int64_t>() == std::vector<int64_t>{3, 4, 5, -1});
    CHECK((a - 1).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, -5});
    CHECK((2 * a).to_vector<int64_t>() == std::vector<int64_t>{2, 4, 6, -8});
    CHECK((a / b).dtype() == dtype::float64); // true division
    CHECK((a / b).to_vector<double>() == std::vector<double>{0.5, 1.0, 1.5, -4.0 / 3.0});
    CHECK((a % b).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 1, 2});
    CHECK((-a).to_vector<int64_t>() == std::vector<int64_t>{-1, -2, -3, 4});
    CHECK((~a).to_vector<int64_t>() == std::vector<int64_t>{-2, -3, -4, 3});
    CHECK((a << 2).to_vector<int64_t>() == std::vector<int64_t>{4, 8, 12, -16});
    CHECK((a >> 1).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1, -2});
    CHECK((a + 1u).dtype() == dtype::int32);
    CHECK((a * 1.5).dtype() == dtype::float64);
    CHECK(floor_div(a, 2).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1, -2});
    CHECK(minimum(a, b).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 2, -4});
    CHECK(maximum(0, a).to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 0});
    CHECK(binary(binary_op::sub, scalar(10), a).to_vector<int64_t>() ==
          std::vector<int64_t>{9, 8, 7, 14});
    CHECK(name(binary_op::floor_div) == "floor_div");
    CHECK(name(binary_op::shift_right) == "shift_right");
}

TEST_CASE("elementwise: results follow the layout of permuted inputs (NumPy order K)") {
    const tensor base = random_tensor(dtype::float32, {3, 4, 5}, 1);
    const tensor p = base.permute({2, 0, 1});
    const tensor r = add(p, 1.0);
    CHECK(r.shape() == shape_t{5, 3, 4});
    CHECK(r.strides() == shape_t{1, 20, 5}); // the input's order
    CHECK(!r.is_contiguous());
    check_binary_ref<double>(
        r, dtype::float32, p, tensor::scalar_tensor(1.0), [](double x, double y) { return x + y; },
        tol_for(dtype::float32, 1));
    CHECK(add(base.t(), base.t()).t().is_contiguous());
    CHECK(exp(base.t()).t().is_contiguous());
    CHECK(where(gt(base.t(), 0), base.t(), 0).t().is_contiguous());
    CHECK(clamp(base.t(), 0, 1).t().is_contiguous());
    // C order otherwise: contiguous, broadcast, or non-dense first inputs.
    CHECK(add(base, base.t().t()).is_contiguous());
    CHECK(add(base.slice(2, 0, 5, 2), 1).is_contiguous());
    CHECK(add(random_tensor(dtype::float32, {5}, 2), base).is_contiguous());
    // Reversed views give forward (positive-stride) results.
    const tensor rev = base.slice(0, 2, -4, -1);
    const tensor rr = neg(rev);
    CHECK(rr.is_contiguous());
    CHECK(rr.to_vector<double>() == neg(rev.contiguous()).to_vector<double>());
}
