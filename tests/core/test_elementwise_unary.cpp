// Tests for unary elementwise ops: math references, dtype rules, special values, complex, errors.
#include "test_elementwise_util.hpp"

using namespace isthmus;
using namespace ew_test;

namespace {

struct math_case {
    unary_op op;
    double (*ref)(double);
    double lo, hi; // input range where the op is defined
};

const std::vector<math_case>& math_cases() {
    static const std::vector<math_case> cases = {
        {unary_op::exp, [](double x) { return std::exp(x); }, -5, 5},
        {unary_op::log, [](double x) { return std::log(x); }, 0.01, 10},
        {unary_op::log2, [](double x) { return std::log2(x); }, 0.01, 10},
        {unary_op::log10, [](double x) { return std::log10(x); }, 0.01, 10},
        {unary_op::expm1, [](double x) { return std::expm1(x); }, -1e-3, 1e-3},
        {unary_op::log1p, [](double x) { return std::log1p(x); }, -1e-3, 1e-3},
        {unary_op::sqrt, [](double x) { return std::sqrt(x); }, 0, 10},
        {unary_op::rsqrt, [](double x) { return 1 / std::sqrt(x); }, 0.01, 10},
        {unary_op::sin, [](double x) { return std::sin(x); }, -3, 3},
        {unary_op::cos, [](double x) { return std::cos(x); }, -3, 3},
        {unary_op::tan, [](double x) { return std::tan(x); }, -1.2, 1.2},
        {unary_op::asin, [](double x) { return std::asin(x); }, -1, 1},
        {unary_op::acos, [](double x) { return std::acos(x); }, -1, 1},
        {unary_op::atan, [](double x) { return std::atan(x); }, -5, 5},
        {unary_op::sinh, [](double x) { return std::sinh(x); }, -3, 3},
        {unary_op::cosh, [](double x) { return std::cosh(x); }, -3, 3},
        {unary_op::tanh, [](double x) { return std::tanh(x); }, -3, 3},
        {unary_op::neg, [](double x) { return -x; }, -5, 5},
        {unary_op::abs, [](double x) { return std::fabs(x); }, -5, 5},
        {unary_op::square, [](double x) { return x * x; }, -5, 5},
        {unary_op::reciprocal, [](double x) { return 1 / x; }, 0.1, 5},
        {unary_op::floor, [](double x) { return std::floor(x); }, -5, 5},
        {unary_op::ceil, [](double x) { return std::ceil(x); }, -5, 5},
        {unary_op::round, [](double x) { return std::nearbyint(x); }, -5, 5},
        {unary_op::sign, [](double x) { return double((x > 0) - (x < 0)); }, -5, 5},
    };
    return cases;
}

// Complex references (std::complex<double>) for the ops defined on complex numbers.
struct complex_case {
    unary_op op;
    cd (*ref)(cd);
};

const std::vector<complex_case>& complex_cases() {
    static const std::vector<complex_case> cases = {
        {unary_op::neg, [](cd z) { return -z; }},
        {unary_op::exp, [](cd z) { return std::exp(z); }},
        {unary_op::log, [](cd z) { return std::log(z); }},
        {unary_op::log2, [](cd z) { return std::log(z) / std::log(2.0); }},
        {unary_op::log10, [](cd z) { return std::log10(z); }},
        {unary_op::expm1, [](cd z) { return std::exp(z) - 1.0; }},
        {unary_op::log1p, [](cd z) { return std::log(1.0 + z); }},
        {unary_op::sqrt, [](cd z) { return std::sqrt(z); }},
        {unary_op::rsqrt, [](cd z) { return 1.0 / std::sqrt(z); }},
        {unary_op::sin, [](cd z) { return std::sin(z); }},
        {unary_op::cos, [](cd z) { return std::cos(z); }},
        {unary_op::tan, [](cd z) { return std::tan(z); }},
        {unary_op::asin, [](cd z) { return std::asin(z); }},
        {unary_op::acos, [](cd z) { return std::acos(z); }},
        {unary_op::atan, [](cd z) { return std::atan(z); }},
        {unary_op::sinh, [](cd z) { return std::sinh(z); }},
        {unary_op::cosh, [](cd z) { return std::cosh(z); }},
        {unary_op::tanh, [](cd z) { return std::tanh(z); }},
        {unary_op::square, [](cd z) { return z * z; }},
        {unary_op::reciprocal, [](cd z) { return 1.0 / z; }},
        {unary_op::conj, [](cd z) { return std::conj(z); }},
        {unary_op::sign, [](cd z) { return z / std::abs(z); }},
        {unary_op::round,
         [](cd z) { return cd(std::nearbyint(z.real()), std::nearbyint(z.imag())); }},
    };
    return cases;
}

} // namespace

TEST_CASE("elementwise: unary float ops match float64 references in every layout") {
    for (dtype dt : {dtype::float32, dtype::float64}) {
        for (const auto& c : math_cases()) {
            CAPTURE(name(c.op));
            CAPTURE(dt);
            uint32_t seed = 7;
            for (auto layout : layouts_2d(dt, 6, 5, seed)) {
                // Rescale the random data in [-4, 4) to the op's domain.
                const tensor x = add(mul(layout.t, (c.hi - c.lo) / 8.0), (c.hi + c.lo) / 2.0);
                CAPTURE(layout.name);
                check_unary_ref<double>(unary(c.op, x), dt, x, c.ref, tol_for(dt, 4));
            }
        }
    }
}

TEST_CASE("elementwise: unary ops on integers and bool follow the dtype rules") {
    // Math on integers computes in promote_types(dtype, float16), like NumPy.
    CHECK(result_type(unary_op::exp, dtype::int8) == dtype::float16);
    CHECK(result_type(unary_op::exp, dtype::uint8) == dtype::float16);
    CHECK(result_type(unary_op::exp, dtype::bool_) == dtype::float16);
    CHECK(result_type(unary_op::sqrt, dtype::int16) == dtype::float32);
    CHECK(result_type(unary_op::sin, dtype::int32) == dtype::float64);
    CHECK(result_type(unary_op::sin, dtype::uint64) == dtype::float64);
    CHECK(result_type(unary_op::log, dtype::bfloat16) == dtype::bfloat16);
    CHECK(result_type(unary_op::abs, dtype::complex64) == dtype::float32);
    CHECK(result_type(unary_op::isnan, dtype::int32) == dtype::bool_);
    CHECK(result_type(unary_op::floor, dtype::int32) == dtype::int32);
    CHECK(result_type(unary_op::reciprocal, dtype::int32) == dtype::float64);
    CHECK(result_type(unary_op::imag, dtype::int16) == dtype::int16);
    CHECK(result_type(unary_op::real, dtype::complex128) == dtype::float64);

    const tensor i = tensor::from_vector(std::vector<int32_t>{1, 4, 9, 16}).t();
    check_unary_ref<double>(
        sqrt(i), dtype::float64, i, [](double x) { return std::sqrt(x); }, 0);
    const tensor i16 = tensor::from_vector(std::vector<int16_t>{0, 1, 2, 3});
    check_unary_ref<double>(
        exp(i16), dtype::float32, i16, [](double x) { return std::exp(x); },
        tol_for(dtype::float32, 2));
    const tensor i8 = tensor::from_vector(std::vector<int8_t>{-128, -1, 0, 5, 127});
    CHECK(exp(i8).dtype() == dtype::float16);
    // Integer-preserving ops.
    CHECK(neg(i8).to_vector<int64_t>() == std::vector<int64_t>{-128, 1, 0, -5, -127});
    CHECK(abs(i8).to_vector<int64_t>() == std::vector<int64_t>{-128, 1, 0, 5, 127});
    CHECK(sign(i8).to_vector<int64_t>() == std::vector<int64_t>{-1, -1, 0, 1, 1});
    CHECK(square(i8).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 0, 25, 1});
    CHECK(floor(i8).to_vector<int64_t>() == i8.to_vector<int64_t>());
    CHECK(round(i8).dtype() == dtype::int8);
    CHECK(bit_not(i8).to_vector<int64_t>() == std::vector<int64_t>{127, 0, -1, -6, -128});
    CHECK(reciprocal(tensor::from_vector(std::vector<int32_t>{2, -4})).to_vector<double>() ==
          std::vector<double>{0.5, -0.25});
    const tensor u = tensor::from_vector(std::vector<uint16_t>{0, 3, 65535});
    CHECK(abs(u).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 65535});
    CHECK(sign(u).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1});
    CHECK(neg(u).to_vector<int64_t>() == std::vector<int64_t>{0, 65533, 1});
    CHECK(isnan(i8).to_vector<bool>() == std::vector<bool>(5, false));
    CHECK(isinf(u).to_vector<bool>() == std::vector<bool>(3, false));
    CHECK(isfinite(i8).to_vector<bool>() == std::vector<bool>(5, true));
    const tensor b = tensor::from_vector(std::vector<bool>{true, false});
    CHECK(logical_not(b).to_vector<bool>() == std::vector<bool>{false, true});
    CHECK(bit_not(b).to_vector<bool>() == std::vector<bool>{false, true});
    CHECK(bit_not(b).dtype() == dtype::bool_);
    CHECK(abs(b).dtype() == dtype::bool_);
    CHECK(logical_not(i8).to_vector<bool>() == std::vector<bool>{false, false, true, false, false});
}

TEST_CASE("elementwise: special values, rounding and sign") {
    const tensor x = tensor::from_vector(
        std::vector<double>{0.5, 1.5, 2.5, -0.5, -2.5, NAN, INFINITY, -INFINITY, -0.0, 3.7});
    const auto r = round(x).to_vector<double>();
    CHECK(r[0] == 0.0);
    CHECK(r[1] == 2.0);
    CHECK(r[2] == 2.0); // half to even
    CHECK(r[3] == 0.0);
    CHECK(std::signbit(r[3]));
    CHECK(r[4] == -2.0);
    CHECK(std::isnan(r[5]));
    CHECK(r[6] == INFINITY);
    CHECK(r[9] == 4.0);
    const auto s = sign(x).to_vector<double>();
    CHECK(s[0] == 1.0);
    CHECK(s[3] == -1.0);
    CHECK(std::isnan(s[5]));
    CHECK(s[7] == -1.0);
    CHECK(s[8] == 0.0);
    CHECK(isnan(x).to_vector<bool>() ==
          std::vector<bool>{false, false, false, false, false, true, false, false, false, false});
    CHECK(isinf(x).to_vector<bool>() ==
          std::vector<bool>{false, false, false, false, false, false, true, true, false, false});
    CHECK(isfinite(x).to_vector<bool>() ==
          std::vector<bool>{true, true, true, true, true, false, false, false, true, true});
    const auto f32 = x.to(dtype::float32);
    CHECK(round(f32).to_vector<double>()[2] == 2.0);
    CHECK(isnan(f32.to(dtype::float16)).to_vector<bool>()[5]);
    CHECK(isinf(f32.to(dtype::bfloat16)).to_vector<bool>()[7]);
    CHECK(std::isnan(sqrt(tensor::from_vector(std::vector<double>{-1.0})).item<double>()));
    CHECK(log(tensor::from_vector(std::vector<double>{0.0})).item<double>() == -INFINITY);
    CHECK(abs(x).to_vector<double>()[8] == 0.0);
    CHECK(!std::signbit(abs(x).to_vector<double>()[8]));
    // Complex NaN/inf tests look at both parts.
    const tensor z = tensor::from_vector(std::vector<cd>{{1, NAN}, {INFINITY, 0}, {1, 2}});
    CHECK(isnan(z).to_vector<bool>() == std::vector<bool>{true, false, false});
    CHECK(isinf(z).to_vector<bool>() == std::vector<bool>{false, true, false});
    CHECK(isfinite(z).to_vector<bool>() == std::vector<bool>{false, false, true});
}

TEST_CASE("elementwise: signbit reads the sign bit, NaN's too") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> v{1.5, -1.5, 0.0, -0.0, INFINITY, -INFINITY, nan, -nan, -5e-324};
    const std::vector<bool> want{false, true, false, true, false, true, false, true, true};
    for (dtype dt : {dtype::float64, dtype::float32, dtype::float16, dtype::bfloat16}) {
        INFO(std::string(name(dt)));
        const tensor x = tensor::from_vector(v).to(dt);
        const tensor r = signbit(x);
        CHECK(r.dtype() == dtype::bool_);
        CHECK(r.to_vector<bool>() == want); // (-5e-324 narrows to -0.0: still negative)
    }
    // strided and broadcast layouts
    const tensor m = tensor::from_vector(std::vector<double>{-1, 2, -0.0, 4, nan, -nan}, {3, 2});
    CHECK(signbit(m.transpose(0, 1)).to_vector<bool>() ==
          std::vector<bool>{true, true, false, false, false, true});
    // signed integers: x < 0; unsigned and bool: false
    CHECK(signbit(tensor::from_vector(std::vector<int8_t>{-128, -1, 0, 127})).to_vector<bool>() ==
          std::vector<bool>{true, true, false, false});
    CHECK(signbit(tensor::from_vector(std::vector<int64_t>{INT64_MIN, 5})).to_vector<bool>() ==
          std::vector<bool>{true, false});
    CHECK(signbit(tensor::from_vector(std::vector<uint8_t>{0, 255})).to_vector<bool>() ==
          std::vector<bool>{false, false});
    CHECK(signbit(tensor::from_vector(std::vector<bool>{true, false})).to_vector<bool>() ==
          std::vector<bool>{false, false});
    // complex numbers have no sign bit
    const tensor z = tensor::from_vector(std::vector<cd>{{-1, 0}});
    CHECK_THROWS_AS(signbit(z), type_error);
}

TEST_CASE("elementwise: half types compute unary math in float") {
    for (dtype dt : {dtype::float16, dtype::bfloat16}) {
        CAPTURE(dt);
        const tensor x = random_tensor(dt, {4, 6}, 3, 0.1, 4);
        for (unary_op op : {unary_op::exp, unary_op::sqrt, unary_op::sin, unary_op::neg,
                            unary_op::abs, unary_op::floor, unary_op::square}) {
            CAPTURE(name(op));
            const tensor out = unary(op, x.t());
            CHECK(out.dtype() == dt);
            const tensor want = unary(op, x.t().to(dtype::float32)).to(dt);
            CHECK(out.to_vector<double>() == want.to_vector<double>());
        }
    }
}

TEST_CASE("elementwise: complex unary ops match std::complex<double>") {
    for (dtype dt : {dtype::complex64, dtype::complex128}) {
        CAPTURE(dt);
        for (const auto& c : complex_cases()) {
            CAPTURE(name(c.op));
            for (const auto& l : layouts_2d(dt, 3, 4, 31)) {
                const tensor z = mul(l.t, 0.5); // keep exp/sinh moderate
                CAPTURE(l.name);
                check_unary_ref<cd>(unary(c.op, z), dt, z, c.ref, tol_for(dt, 16));
            }
        }
        const tensor z = random_tensor(dt, {3, 2}, 5);
        CHECK(abs(z).dtype() == real_dtype(dt));
        CHECK(abs(z).shape() == z.shape());
        const auto zs = z.to_vector<cd>();
        const auto as = abs(z).to_vector<double>();
        for (size_t i = 0; i < zs.size(); ++i) CHECK(close(as[i], std::abs(zs[i]), tol_for(dt, 4)));
        CHECK(sign(tensor::from_vector(std::vector<cd>{{0, 0}}).to(dt)).to_vector<cd>()[0] ==
              cd(0, 0));
        // expm1 stays accurate near 0.
        const tensor tiny = tensor::from_vector(std::vector<cd>{{1e-10, 1e-10}}).to(dt);
        const cd e = expm1(tiny).to_vector<cd>()[0];
        CHECK(std::abs(e - cd(1e-10, 1e-10)) < 1e-15);
    }
    const tensor z = random_tensor(dtype::complex64, {2, 2}, 1);
    for (unary_op op : {unary_op::floor, unary_op::ceil, unary_op::bit_not}) {
        CAPTURE(name(op));
        const std::string msg = error_of<type_error>([&] { (void)unary(op, z); });
        CHECK(contains(msg, std::string(name(op))));
        CHECK(contains(msg, "complex64"));
    }
}

TEST_CASE("elementwise: real, imag and conj") {
    const tensor z = tensor::from_vector(std::vector<cd>{{1, 2}, {3, -4}, {-5, 6}, {7, 8}}, {2, 2});
    const tensor re = real(z), im = imag(z);
    CHECK(re.dtype() == dtype::float64);
    CHECK(re.to_vector<double>() == std::vector<double>{1, 3, -5, 7});
    CHECK(im.to_vector<double>() == std::vector<double>{2, -4, 6, 8});
    CHECK(real(z.t()).to_vector<double>() == std::vector<double>{1, -5, 3, 7});
    CHECK(imag(z.select(0, 1)).to_vector<double>() == std::vector<double>{6, 8});
    // The parts are views: writes go through (NumPy's z.imag[...] = ...).
    tensor im_view = im;
    im_view.fill(0.0);
    CHECK(z.to_vector<cd>() == std::vector<cd>{{1, 0}, {3, 0}, {-5, 0}, {7, 0}});
    // unary(real/imag) copies.
    const tensor z2 = tensor::from_vector(std::vector<cd>{{1, 2}}).to(dtype::complex64);
    tensor c = unary(unary_op::imag, z2);
    c.fill(9.0);
    CHECK(z2.to_vector<cd>()[0] == cd(1, 2));
    CHECK(unary(unary_op::real, z2).dtype() == dtype::float32);
    CHECK(conj(z2).to_vector<cd>()[0] == cd(1, -2));
    // Real dtypes: real is the tensor itself, imag zeros, conj a copy.
    const tensor r = tensor::from_vector(std::vector<float>{1, -2});
    CHECK(real(r).storage() == r.storage());
    CHECK(imag(r).to_vector<double>() == std::vector<double>{0, 0});
    CHECK(imag(r).dtype() == dtype::float32);
    CHECK(conj(r).to_vector<double>() == std::vector<double>{1, -2});
    CHECK(conj(r).storage() != r.storage());
    CHECK_THROWS_AS((void)real(tensor()), value_error);
}

TEST_CASE("elementwise: unary ops on empty, 0-d and large tensors") {
    const tensor e = random_tensor(dtype::float32, {3, 0}, 1);
    CHECK(exp(e).shape() == shape_t{3, 0});
    CHECK(isnan(e).shape() == shape_t{3, 0});
    CHECK(imag(e).shape() == shape_t{3, 0});
    const tensor s = tensor::scalar_tensor(2.0f);
    CHECK(sqrt(s).dim() == 0);
    CHECK(std::fabs(sqrt(s).item<double>() - std::sqrt(2.0)) < 1e-6);
    // Above the parallel grain, strided.
    const tensor big = random_tensor(dtype::float64, {500, 300}, 2).t();
    check_unary_ref<double>(
        sin(big), dtype::float64, big, [](double x) { return std::sin(x); },
        tol_for(dtype::float64, 2));
    check_unary_ref<double>(
        neg(big), dtype::float64, big, [](double x) { return -x; }, 0);
    const tensor bigi = random_tensor(dtype::int32, {300, 500}, 3, -100, 100);
    check_unary_ref<double>(
        exp(bigi.slice(1, 0, 500, 3)), dtype::float64, bigi.slice(1, 0, 500, 3),
        [](double x) { return std::exp(x); }, tol_for(dtype::float64, 2));
}

TEST_CASE("elementwise: unary bad inputs raise and leave inputs unchanged") {
    const tensor b = tensor::from_vector(std::vector<bool>{true, false});
    const std::string msg = error_of<type_error>([&] { (void)neg(b); });
    CHECK(contains(msg, "neg"));
    CHECK(contains(msg, "bool"));
    CHECK_THROWS_AS((void)(-b), type_error);
    CHECK_THROWS_AS(unary_inplace(unary_op::neg, b), type_error);
    CHECK(b.to_vector<bool>() == std::vector<bool>{true, false});
    const tensor f = tensor::from_vector(std::vector<float>{1.5f});
    CHECK(contains(error_of<type_error>([&] { (void)bit_not(f); }), "float32"));
    CHECK_THROWS_AS((void)(~f), type_error);
    CHECK(f.item<float>() == 1.5f);
    CHECK(contains(error_of<value_error>([&] { (void)exp(tensor()); }), "undefined"));
    CHECK(name(unary_op::logical_not) == "logical_not");
    CHECK(name(unary_op::rsqrt) == "rsqrt");
}
