// Tests for matching values against Quasar type names (tensors by rank and dtype family, scalars,
// strings, ??, cells), and the scalar precision parsed types follow.
#include <doctest/doctest.h>

#include "isthmus/config.hpp"
#include "isthmus/types.hpp"

#include "scalar_dtype_guard.hpp"

#include <vector>

using namespace isthmus;

namespace {

value float_tensor(shape_t shape, dtype dt = dtype::float32) {
    tensor t = tensor::empty(shape, dt, MEMRESOURCE_CPU);
    t.fill(1.0);
    return value(t);
}

} // namespace

TEST_CASE("types: matching tensors by rank and dtype family") {
    value v = float_tensor({5});
    value m = float_tensor({3, 4});
    value c = float_tensor({2, 3, 4});
    value c4 = float_tensor({1, 2, 3, 4});
    value zero_d = float_tensor({});
    value v64 = float_tensor({5}, dtype::float64);
    value v16 = float_tensor({5}, dtype::float16);
    value vi = float_tensor({5}, dtype::int64);
    value vu = float_tensor({5}, dtype::uint8);
    value vb = float_tensor({5}, dtype::bool_);
    value vc = float_tensor({5}, dtype::complex128);

    // Rank: 1 <= r <= N.
    CHECK(matches_type(v, "vec"));
    CHECK(matches_type(v, "mat"));
    CHECK(matches_type(v, "cube"));
    CHECK_FALSE(matches_type(m, "vec"));
    CHECK(matches_type(m, "mat"));
    CHECK(matches_type(m, "cube"));
    CHECK_FALSE(matches_type(c, "mat"));
    CHECK(matches_type(c, "cube"));
    CHECK_FALSE(matches_type(c4, "cube"));
    CHECK(matches_type(c4, "cube{4}"));
    CHECK(matches_type(c, "cube{4}"));
    CHECK_FALSE(matches_type(zero_d, "vec"));
    CHECK_FALSE(matches_type(float_tensor({3, 4, 1}), "mat"));

    // cube{:}: any rank, 0 included.
    for (const value* x : {&v, &m, &c, &c4, &zero_d}) CHECK(matches_type(*x, "cube{:}"));

    // Families.
    CHECK(matches_type(v64, "vec"));
    CHECK(matches_type(v16, "vec"));
    CHECK_FALSE(matches_type(vi, "vec"));
    CHECK(matches_type(vi, "ivec"));
    CHECK(matches_type(vu, "ivec"));
    CHECK_FALSE(matches_type(v, "ivec"));
    CHECK_FALSE(matches_type(vb, "vec"));
    CHECK_FALSE(matches_type(vb, "ivec"));
    CHECK(matches_type(vc, "cvec"));
    CHECK(matches_type(float_tensor({2, 2}, dtype::complex64), "cmat"));
    CHECK_FALSE(matches_type(vc, "vec"));
    CHECK_FALSE(matches_type(v, "cvec"));
    CHECK(matches_type(vi, "icube{:}"));
    CHECK_FALSE(matches_type(vi, "cube{:}"));

    // Fixed-length vectors.
    CHECK(matches_type(float_tensor({3}), "vec3"));
    CHECK_FALSE(matches_type(float_tensor({4}), "vec3"));
    CHECK_FALSE(matches_type(float_tensor({1, 3}), "vec3"));
    CHECK(matches_type(float_tensor({2}, dtype::int32), "ivec2"));
    CHECK_FALSE(matches_type(float_tensor({2}), "ivec2"));
    CHECK(matches_type(float_tensor({4}, dtype::complex64), "cvec4"));

    // Modifiers do not affect matching.
    CHECK(matches_type(v, "vec'clamped"));

    // Non-tensors are not tensor types.
    CHECK_FALSE(matches_type(value(1.5), "vec"));
    CHECK_FALSE(matches_type(value(1.5), "cube{:}"));
    CHECK_FALSE(matches_type(value("text"), "vec"));
    CHECK_FALSE(matches_type(value(), "cube{:}"));
    CHECK_FALSE(matches_type(value(tensor()), "cube{:}"));
    CHECK_FALSE(matches_type(value::make_cell({3}), "vec"));
}

TEST_CASE("types: matching scalars, strings and ??") {
    CHECK(matches_type(value(1.5), "scalar"));
    CHECK(matches_type(value(1.5f), "scalar"));
    CHECK(matches_type(value(scalar::of(2, dtype::float16)), "scalar"));
    CHECK_FALSE(matches_type(value(2), "scalar"));
    CHECK(matches_type(value(2), "int"));
    CHECK(matches_type(value(int64_t{2}), "int"));
    CHECK(matches_type(value(scalar(uint64_t{2})), "int"));
    CHECK_FALSE(matches_type(value(1.5), "int"));
    CHECK_FALSE(matches_type(value(true), "int"));
    CHECK(matches_type(value(true), "bool"));
    CHECK(matches_type(value(scalar(complex128_t(1, 2))), "cscalar"));
    CHECK_FALSE(matches_type(value(1.5), "cscalar"));
    CHECK_FALSE(matches_type(value(scalar(complex128_t(1, 2))), "scalar"));

    // Exact names test one dtype.
    CHECK(matches_type(value(int64_t{2}), "int64"));
    CHECK_FALSE(matches_type(value(2), "int64"));
    CHECK(matches_type(value(2), "int32"));
    CHECK(matches_type(value(1.5), "float64"));
    CHECK_FALSE(matches_type(value(1.5), "float32"));

    // 0-d tensors are scalars; larger tensors are not.
    CHECK(matches_type(float_tensor({}), "scalar"));
    CHECK(matches_type(float_tensor({}, dtype::int16), "int"));
    CHECK(matches_type(float_tensor({}, dtype::int16), "int16"));
    CHECK_FALSE(matches_type(float_tensor({1}), "scalar"));
    CHECK_FALSE(matches_type(value("1.5"), "scalar"));

    CHECK(matches_type(value("hello"), "string"));
    CHECK_FALSE(matches_type(value(1.5), "string"));

    for (const value& x :
         {value(), value(1.5), value("s"), float_tensor({2, 2}), value::make_cell({2})})
        CHECK(matches_type(x, "??"));
}

TEST_CASE("types: matching cells") {
    value w = value::make_cell({3});
    for (value& item : w.as_cell().items) item = float_tensor({2, 2});
    CHECK(matches_type(w, "vec[mat]"));
    CHECK(matches_type(w, "vec[??]"));
    CHECK(matches_type(w, "mat[mat]"));      // rank rule applies to cells too
    CHECK(matches_type(w, "cube{:}[cube]")); // and element ranks
    CHECK_FALSE(matches_type(w, "vec[vec]"));
    CHECK_FALSE(matches_type(w, "vec"));
    CHECK_FALSE(matches_type(float_tensor({3}), "vec[??]"));

    w.as_cell().items[1] = value(1.5);
    CHECK_FALSE(matches_type(w, "vec[mat]"));
    CHECK(matches_type(w, "vec[??]"));

    value grid = value::make_cell({2, 2});
    CHECK(matches_type(grid, "mat[??]"));
    CHECK_FALSE(matches_type(grid, "vec[??]"));
    CHECK_FALSE(matches_type(grid, "mat[scalar]")); // elements are none

    value nested = parse_type("vec[vec[mat]]")(2);
    CHECK(matches_type(nested, "vec[vec[mat]]"));
    CHECK(matches_type(nested, "vec[vec[cube]]"));
    CHECK(matches_type(nested, "vec[vec[vec]]")); // the inner cells are empty
    CHECK_FALSE(matches_type(nested, "vec[mat]"));
    nested.as_cell().items[0].as_cell().items.push_back(float_tensor({2, 2}));
    nested.as_cell().items[0].as_cell().shape = {1};
    CHECK(matches_type(nested, "vec[vec[mat]]"));
    CHECK_FALSE(matches_type(nested, "vec[vec[vec]]"));

    // A cell that contains itself: matching follows the type's depth, so it ends.
    value self = value::make_cell({1});
    self.as_cell().items[0] = self;
    CHECK(matches_type(self, "vec[vec[??]]"));
    CHECK_FALSE(matches_type(self, "vec[vec[mat]]"));
    self.as_cell().items[0] = value(); // break the cycle so the cell is freed

    // An empty cell matches any element type.
    CHECK(matches_type(value::make_cell({0}), "vec[string]"));
}

TEST_CASE("types: scalar precision follows set_scalar_dtype") {
    scalar_dtype_guard guard;
    type_desc s = parse_type("scalar");
    type_desc v = parse_type("vec");
    type_desc cv = parse_type("cvec");

    set_scalar_dtype(dtype::float32);
    CHECK(s.dtype() == dtype::float32);
    CHECK(v(2).as_tensor().dtype() == dtype::float32);
    CHECK(cv(2).as_tensor().dtype() == dtype::complex64);
    CHECK(s().as_scalar().type() == dtype::float32);

    set_scalar_dtype(dtype::float64);
    // A type parsed earlier follows the new precision; its name does not change.
    CHECK(s.dtype() == dtype::float64);
    CHECK(s.to_string() == "scalar");
    CHECK(v(2).as_tensor().dtype() == dtype::float64);
    CHECK(parse_type("mat")(2, 2).as_tensor().dtype() == dtype::float64);
    CHECK(cv(2).as_tensor().dtype() == dtype::complex128);
    CHECK(parse_type("cscalar").dtype() == dtype::complex128);
    CHECK(s().as_scalar().type() == dtype::float64);
    CHECK(parse_type("vec[vec3]")(1).as_cell().items[0].as_tensor().dtype() == dtype::float64);
    // Matching accepts every real dtype under either precision.
    CHECK(v.matches(float_tensor({3}, dtype::float32)));
    CHECK(parse_type("int")().as_scalar().type() == dtype::int32);
}
