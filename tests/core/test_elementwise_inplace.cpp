// Tests for in-place elementwise ops: casting rule, shapes, aliasing, views, operators, errors.
#include "test_elementwise_util.hpp"

using namespace isthmus;
using namespace ew_test;

TEST_CASE("elementwise: binary_inplace matches the out-of-place result") {
    for (dtype dt : {dtype::float32, dtype::float64, dtype::int16, dtype::complex64}) {
        CAPTURE(dt);
        for (const auto& l : layouts_2d(dt, 5, 6, 41)) {
            CAPTURE(l.name);
            const tensor other = random_tensor(dt, {6}, 42);
            for (binary_op op : {binary_op::add, binary_op::sub, binary_op::mul}) {
                CAPTURE(name(op));
                const tensor want = binary(op, l.t, other);
                const tensor before = l.t.clone();
                binary_inplace(op, l.t, other); // writes through the strided view
                CHECK(l.t.to_vector<cd>() == want.to_vector<cd>());
                tensor restore = l.t;
                restore.copy_from(before);
            }
        }
    }
}

TEST_CASE("elementwise: in-place casting follows NumPy's same_kind rule") {
    tensor f32 = tensor::from_vector(std::vector<float>{1, 2, 3});
    binary_inplace(binary_op::add, f32, tensor::from_vector(std::vector<double>{0.5, 0.5, 0.5}));
    CHECK(f32.to_vector<double>() == std::vector<double>{1.5, 2.5, 3.5});
    CHECK(f32.dtype() == dtype::float32);
    binary_inplace(binary_op::mul, f32, tensor::from_vector(std::vector<int64_t>{2, 2, 2}));
    CHECK(f32.to_vector<double>() == std::vector<double>{3, 5, 7});
    // int target with a float result: type_error, target unchanged.
    tensor i32 = tensor::from_vector(std::vector<int32_t>{1, 2, 3});
    const std::string msg = error_of<type_error>([&] { binary_inplace(binary_op::add, i32, 0.5); });
    CHECK(contains(msg, "float64"));
    CHECK(contains(msg, "int32"));
    CHECK(contains(msg, "same_kind"));
    CHECK_THROWS_AS(binary_inplace(binary_op::div, i32, 2), type_error); // true division
    CHECK_THROWS_AS(binary_inplace(binary_op::add, i32, f32), type_error);
    CHECK_THROWS_AS(i32 /= 2, type_error);
    CHECK(i32.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3});
    // Within a kind, narrowing is allowed (int8 target, int16 result).
    tensor i8 = tensor::from_vector(std::vector<int8_t>{100, -100});
    binary_inplace(binary_op::add, i8, tensor::from_vector(std::vector<int16_t>{100, -100}));
    CHECK(i8.to_vector<int64_t>() == std::vector<int64_t>{-56, 56});
    // unsigned target with a signed result: refused (NumPy: uint8 += int8 array raises).
    tensor u8 = tensor::from_vector(std::vector<uint8_t>{1, 2});
    CHECK_THROWS_AS(binary_inplace(binary_op::add, u8, i8), type_error);
    u8 += 3; // a weak scalar keeps uint8
    CHECK(u8.to_vector<int64_t>() == std::vector<int64_t>{4, 5});
    // Comparisons into a bool or numeric target.
    tensor bt = tensor::from_vector(std::vector<bool>{true, true});
    binary_inplace(binary_op::lt, bt, tensor::from_vector(std::vector<bool>{false, true}));
    CHECK(bt.to_vector<bool>() == std::vector<bool>{false, false});
    tensor ft = tensor::from_vector(std::vector<double>{1, 5});
    binary_inplace(binary_op::gt, ft, 2.0);
    CHECK(ft.to_vector<double>() == std::vector<double>{0, 1});
    // bool target: add is logical or; a numeric result does not fit.
    binary_inplace(binary_op::add, bt, tensor::from_vector(std::vector<bool>{true, false}));
    CHECK(bt.to_vector<bool>() == std::vector<bool>{true, false});
    CHECK_THROWS_AS(binary_inplace(binary_op::add, bt, 1), type_error);
    // complex into real is refused; real into complex is fine.
    tensor z = tensor::from_vector(std::vector<cd>{{1, 1}});
    z *= 2.0;
    CHECK(z.to_vector<cd>()[0] == cd(2, 2));
    CHECK_THROWS_AS(binary_inplace(binary_op::add, ft, z.expand({2})), type_error);
    // half targets compute in float32 and round back.
    tensor h = tensor::from_vector(std::vector<float>{1, 2}).to(dtype::float16);
    h += 0.5;
    CHECK(h.dtype() == dtype::float16);
    CHECK(h.to_vector<double>() == std::vector<double>{1.5, 2.5});
}

TEST_CASE("elementwise: in-place shapes and views") {
    tensor a = tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
    a += tensor::from_vector(std::vector<double>{10, 20, 30}); // broadcast other
    CHECK(a.to_vector<double>() == std::vector<double>{11, 22, 33, 14, 25, 36});
    // The target cannot grow.
    const tensor row = tensor::from_vector(std::vector<double>{1, 2, 3});
    const auto before = snapshot(row);
    const std::string msg = error_of<value_error>([&] { binary_inplace(binary_op::add, row, a); });
    CHECK(contains(msg, "(3,)"));
    CHECK(contains(msg, "(2, 3)"));
    CHECK(snapshot(row) == before);
    CHECK_THROWS_AS(
        binary_inplace(binary_op::add, a, tensor::from_vector(std::vector<double>{1, 2})),
        value_error);
    // Writes through slices and transposes update the base tensor.
    tensor b = tensor::from_vector(std::vector<int32_t>{0, 1, 2, 3, 4, 5}, {2, 3});
    b.slice(1, 0, 3, 2) += 100;
    CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{100, 1, 102, 103, 4, 105});
    b.t() *= 2;
    CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{200, 2, 204, 206, 8, 210});
    b.select(0, 1) -= b.select(0, 0);
    CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{200, 2, 204, 6, 6, 6});
    // Broadcast views cannot be written.
    const tensor e = row.expand({4, 3});
    CHECK(contains(error_of<value_error>([&] { binary_inplace(binary_op::add, e, 1.0); }),
                   "broadcast"));
    CHECK_THROWS_AS(unary_inplace(unary_op::neg, e), value_error);
    CHECK(snapshot(row) == before);
    // Empty and 0-d targets.
    tensor em = tensor::empty({0, 3}, dtype::float32);
    em += 1.0;
    CHECK(em.numel() == 0);
    tensor s = tensor::scalar_tensor(4.0);
    s *= s;
    CHECK(s.item<double>() == 16.0);
    // Undefined.
    CHECK_THROWS_AS(binary_inplace(binary_op::add, tensor(), 1), value_error);
    CHECK_THROWS_AS(binary_inplace(binary_op::add, a, tensor()), value_error);
}

TEST_CASE("elementwise: in-place ops with aliasing operands") {
    // a += a.t(): every element reads the original values.
    const tensor base = random_tensor(dtype::float64, {5, 5}, 3);
    tensor a = base.clone();
    a += a.t();
    check_binary_ref<double>(
        a, dtype::float64, base, base.t(), [](double x, double y) { return x + y; }, 0);
    // a += a (the same view) and a *= a.
    tensor b = base.clone();
    b += b;
    check_binary_ref<double>(
        b, dtype::float64, base, base, [](double x, double y) { return x + y; }, 0);
    // A shifted, overlapping window: x[1:] += x[:-1].
    tensor x = tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5});
    x.slice(0, 1, 5) += x.slice(0, 0, 4);
    CHECK(x.to_vector<int64_t>() == std::vector<int64_t>{1, 3, 5, 7, 9});
    // A row of the target broadcast over it: a -= a[0].
    tensor m = tensor::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
    m -= m.select(0, 0);
    CHECK(m.to_vector<double>() == std::vector<double>{0, 0, 0, 3, 3, 3});
    // Reversed view of itself.
    tensor r = tensor::from_vector(std::vector<int32_t>{1, 2, 3, 4});
    r += r.slice(0, 3, -5, -1);
    CHECK(r.to_vector<int64_t>() == std::vector<int64_t>{5, 5, 5, 5});
    // Large, transposed self-aliasing (multi-threaded path).
    const tensor big = random_tensor(dtype::float32, {300, 300}, 4);
    tensor c = big.clone();
    c += c.t();
    check_binary_ref<double>(
        c, dtype::float32, big, big.t(), [](double x2, double y) { return x2 + y; },
        tol_for(dtype::float32, 1));
    // An operand of another dtype converts through blocks.
    tensor d = tensor::from_vector(std::vector<double>{1.5, 2.5});
    binary_inplace(binary_op::add, d, d.to(dtype::float32));
    CHECK(d.to_vector<double>() == std::vector<double>{3, 5});
}

TEST_CASE("elementwise: unary_inplace") {
    tensor f = tensor::from_vector(std::vector<double>{-1, 4, 9}).slice(0, 0, 3, 1);
    unary_inplace(unary_op::abs, f);
    unary_inplace(unary_op::sqrt, f);
    CHECK(f.to_vector<double>() == std::vector<double>{1, 2, 3});
    unary_inplace(unary_op::isnan, f); // bool result into a float target: allowed
    CHECK(f.to_vector<double>() == std::vector<double>{0, 0, 0});
    // Integer target with a float result: refused, unchanged.
    tensor i = tensor::from_vector(std::vector<int32_t>{1, 4});
    const std::string msg = error_of<type_error>([&] { unary_inplace(unary_op::sqrt, i); });
    CHECK(contains(msg, "sqrt"));
    CHECK(contains(msg, "int32"));
    CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{1, 4});
    unary_inplace(unary_op::neg, i);
    unary_inplace(unary_op::floor, i); // the identity on integers
    CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{-1, -4});
    unary_inplace(unary_op::isfinite, i);
    CHECK(i.to_vector<int64_t>() == std::vector<int64_t>{1, 1});
    // Complex: real/imag in place keep the dtype.
    tensor z = tensor::from_vector(std::vector<cd>{{1, 2}, {3, 4}});
    unary_inplace(unary_op::imag, z);
    CHECK(z.to_vector<cd>() == std::vector<cd>{{2, 0}, {4, 0}});
    unary_inplace(unary_op::conj, z);
    CHECK(z.to_vector<cd>() == std::vector<cd>{{2, 0}, {4, 0}});
    tensor z2 = tensor::from_vector(std::vector<cd>{{3, 4}, {0, -1}});
    unary_inplace(unary_op::abs, z2); // a float64 result into a complex target: allowed
    CHECK(z2.to_vector<cd>() == std::vector<cd>{{5, 0}, {1, 0}});
    // Transposed float32 target, multi-threaded.
    const tensor big = random_tensor(dtype::float32, {300, 300}, 5);
    tensor t = big.clone().t();
    unary_inplace(unary_op::exp, t);
    check_unary_ref<double>(
        t, dtype::float32, big.t(), [](double x) { return std::exp(x); },
        tol_for(dtype::float32, 4));
}
