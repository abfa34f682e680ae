// Tests for to_string, which prints tensors like numpy's str().
#include "fake_resource.hpp"
#include "test_support.hpp"

#include <isthmus/error.hpp>
#include <isthmus/tensor.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

using namespace isthmus;
using namespace views_helpers;
using isthmus_test::registered_fake;

TEST_CASE("views: to_string prints like numpy's str()") {
    auto f64 = [](std::vector<double> v) { return tensor::from_vector(v); };
    auto f32 = [](std::vector<float> v) { return tensor::from_vector(v); };
    auto arange = [](int64_t n, dtype dt) {
        std::vector<int64_t> v(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
        return tensor::from_vector(v).to(dt);
    };
    struct row {
        const char* what;
        tensor t;
        const char* expect; // str(a) with NumPy 2.4.6
    };
    const row rows[] = {
        {"i32", tensor::from_vector<int32_t>({1, 2, 3}), "[1 2 3]"},
        {"i64", tensor::from_vector<int64_t>({1, -2, 30}), "[ 1 -2 30]"},
        {"u8", tensor::from_vector<uint8_t>({0, 255, 7}), "[  0 255   7]"},
        {"f64 mixed", f64({1, 2.5, 3}), "[1.  2.5 3. ]"},
        {"f64 signs", f64({1, -2.5, 10}), "[ 1.  -2.5 10. ]"},
        {"f64 fractions", f64({0.1, 0.25}), "[0.1  0.25]"},
        {"f64 1/3", f64({1.0 / 3, 2}), "[0.33333333 2.        ]"},
        {"f64 100, 0.5", f64({100, 0.5}), "[100.    0.5]"},
        {"f64 small", f64({1.5e-5, 1}), "[1.5e-05 1.0e+00]"},
        {"f64 small signed", f64({-1.5e-5, 1}), "[-1.5e-05  1.0e+00]"},
        {"f64 1e-5", f64({1e-5, 1}), "[1.e-05 1.e+00]"},
        {"f64 ratio > 1e3", f64({1, 10000}), "[1.e+00 1.e+04]"},
        {"f64 ratio 1e3", f64({1, 1000}), "[   1. 1000.]"},
        {"f64 1e8", f64({1e8, 1}), "[1.e+08 1.e+00]"},
        {"f64 3-digit exponent", f64({1e100, 1e-5}), "[1.e+100 1.e-005]"},
        {"f64 nan inf", f64({NAN, 1, INFINITY}), "[nan  1. inf]"},
        {"f64 -inf", f64({-INFINITY, 2.5}), "[-inf  2.5]"},
        {"f64 nan sci", f64({NAN, 1.5e-5}), "[    nan 1.5e-05]"},
        {"f64 -0", f64({-0.0, 1}), "[-0.  1.]"},
        {"f64 zeros", f64({0, 0}), "[0. 0.]"},
        {"f64 0.001", f64({0.001, 0.5}), "[0.001 0.5  ]"},
        {"f64 123456.789", f64({123456.789}), "[123456.789]"},
        {"f64 1e-4", f64({1e-4, 1}), "[1.e-04 1.e+00]"},
        {"f32 1.1", f32({1.1f}), "[1.1]"},
        {"f32 tenths", f32({0.1f, 0.2f, 0.3f}), "[0.1 0.2 0.3]"},
        {"f16", f32({0.1f, 1000}).to(dtype::float16), "[1.e-01 1.e+03]"},
        // Not in numpy: bfloat16 prints the fewest digits that read back as the same bfloat16.
        {"bf16", f32({0.1f, 1.5f, -3}).to(dtype::bfloat16), "[ 0.1  1.5 -3. ]"},
        {"c128", tensor::from_vector<complex128_t>({{1, 2}, {3, -4.5}}), "[1.+2.j  3.-4.5j]"},
        {"c128 2x2",
         tensor::from_vector<complex128_t>({{1, 2}, {-3.25, -4}, {0, 0}, {0, 1}}, {2, 2}),
         "[[ 1.  +2.j -3.25-4.j]\n [ 0.  +0.j  0.  +1.j]]"},
        {"c64", tensor::from_vector<complex64_t>({{0.1f, 0.2f}}), "[0.1+0.2j]"},
        {"bool", tensor::from_vector<bool>({true, false, true}), "[ True False  True]"},
        {"i32 2x2", tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2}), "[[1 2]\n [3 4]]"},
        {"i32 2x2 transposed", tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2}).t(),
         "[[1 3]\n [2 4]]"},
        {"f64 2x2", f64({1.5, 2, 3, 4}).reshape({2, 2}), "[[1.5 2. ]\n [3.  4. ]]"},
        {"i32 2x2x2", arange(8, dtype::int32).reshape({2, 2, 2}),
         "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"},
        {"f64 arange 1001", arange(1001, dtype::float64),
         "[   0.    1.    2. ...  998.  999. 1000.]"},
        {"i64 arange 2000", arange(2000, dtype::int64), "[   0    1    2 ... 1997 1998 1999]"},
        {"i32 100x100", arange(10000, dtype::int32).reshape({100, 100}),
         "[[   0    1    2 ...   97   98   99]\n [ 100  101  102 ...  197  198  199]\n [ 200  "
         "201  202 ...  297  298  299]\n ...\n [9700 9701 9702 ... 9797 9798 9799]\n [9800 9801 "
         "9802 ... 9897 9898 9899]\n [9900 9901 9902 ... 9997 9998 9999]]"},
        {"f64 0-d 2.5", tensor::scalar_tensor(2.5), "2.5"},
        {"f64 0-d 1.0", tensor::scalar_tensor(1.0), "1.0"},
        {"f64 0-d 1e20", tensor::scalar_tensor(1e20), "1e+20"},
        {"f64 0-d 1e-5", tensor::scalar_tensor(1e-5), "1e-05"},
        {"f32 0-d 0.1", tensor::scalar_tensor(0.1f), "0.1"},
        {"f64 0-d 1e16", tensor::scalar_tensor(1e16), "1e+16"},
        {"f64 0-d 9999999999999998", tensor::scalar_tensor(9999999999999998.0),
         "9999999999999998.0"},
        {"f64 0-d -0.0", tensor::scalar_tensor(-0.0), "-0.0"},
        {"f64 0-d 0.0001", tensor::scalar_tensor(0.0001), "0.0001"},
        {"f64 0-d nan", tensor::scalar_tensor(double(NAN)), "nan"},
        {"f64 0-d -inf", tensor::scalar_tensor(-double(INFINITY)), "-inf"},
        {"i32 0-d", tensor::scalar_tensor<int32_t>(5), "5"},
        {"bool 0-d", tensor::scalar_tensor(true), "True"},
        {"c128 0-d", tensor::scalar_tensor(complex128_t(1, 2)), "(1+2j)"},
        {"c128 0-d imaginary", tensor::scalar_tensor(complex128_t(0, 2)), "2j"},
        {"c128 0-d fractions", tensor::scalar_tensor(complex128_t(1.5, -0.5)), "(1.5-0.5j)"},
        {"c64 0-d", tensor::scalar_tensor(complex64_t(0.1f, 0.2f)), "(0.1+0.2j)"},
        {"f64 empty", f64({}), "[]"},
        {"f64 empty 0x3", tensor::empty({0, 3}, dtype::float64), "[]"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.what);
        CHECK(r.t.to_string() == r.expect);
    }
    // The 3-d summary puts a blank line around the "..." block, as numpy does.
    const std::string big = arange(3000, dtype::int32).reshape({10, 10, 30}).to_string();
    CHECK(big.substr(0, 38) == "[[[   0    1    2 ...   27   28   29]\n");
    CHECK(big.find("  ...\n  [ 210  211  212 ...  237  238  239]") != std::string::npos);
    CHECK(big.find("]]\n\n ...\n\n [[2100 2101 2102 ... 2127 2128 2129]") != std::string::npos);
    CHECK(big.substr(big.size() - 40) == "\n  [2970 2971 2972 ... 2997 2998 2999]]]");
    std::ostringstream os;
    os << tensor::from_vector<int32_t>({1, 2});
    CHECK(os.str() == "[1 2]");
}
