// Tests for values constructed from Quasar type names: tensors, fixed-length vectors, scalars,
// strings, cells, and the sizes construct rejects.
#include <doctest/doctest.h>

#include "isthmus/config.hpp"
#include "isthmus/types.hpp"

#include "error_text.hpp"

#include <string>
#include <string_view>

using namespace isthmus;

namespace {

// The message of the value_error construct throws, or "<no error>".
std::string construct_error(std::string_view name, const shape_t& sizes) {
    try {
        (void)parse_type(name).construct(sizes);
    } catch (const value_error& e) {
        return e.what();
    }
    return "<no error>";
}

bool all_zero(const tensor& t) {
    for (double x : t.to(dtype::float64).to_vector<double>())
        if (x != 0.0) return false;
    return true;
}

} // namespace

TEST_CASE("types: construct tensor types") {
    value v = parse_type("vec").construct({4});
    REQUIRE(v.is_tensor());
    CHECK(v.as_tensor().shape() == shape_t{4});
    CHECK(v.as_tensor().dtype() == scalar_dtype());
    CHECK(all_zero(v.as_tensor()));

    value m = parse_type("mat")(3, 4);
    CHECK(m.as_tensor().shape() == shape_t{3, 4});
    CHECK(all_zero(m.as_tensor()));

    value c = parse_type("cube")(2, 3, 4);
    CHECK(c.as_tensor().shape() == shape_t{2, 3, 4});

    value c5 = parse_type("cube{5}")(1, 2, 3, 4, 5);
    CHECK(c5.as_tensor().shape() == shape_t{1, 2, 3, 4, 5});

    value any3 = parse_type("cube{:}")(2, 2, 2);
    CHECK(any3.as_tensor().shape() == shape_t{2, 2, 2});
    value any0 = parse_type("cube{:}")();
    CHECK(any0.as_tensor().dim() == 0);
    CHECK(any0.as_tensor().numel() == 1);

    value cm = parse_type("cmat")(2, 2);
    CHECK(cm.as_tensor().dtype() == cscalar_dtype());
    CHECK(all_zero(cm.as_tensor()));

    value iv = parse_type("ivec")(5);
    CHECK(iv.as_tensor().dtype() == dtype::int32);
    CHECK(iv.as_tensor().to_vector<int32_t>() == std::vector<int32_t>(5, 0));

    value ic = parse_type("icube{4}")(1, 1, 2, 3);
    CHECK(ic.as_tensor().shape() == shape_t{1, 1, 2, 3});

    // Zero sizes are allowed; no sizes at all gives the empty default of the type's rank.
    CHECK(parse_type("mat")(0, 5).as_tensor().shape() == shape_t{0, 5});
    CHECK(parse_type("vec")().as_tensor().shape() == shape_t{0});
    CHECK(parse_type("mat").default_value().as_tensor().shape() == shape_t{0, 0});
    CHECK(parse_type("icube{4}")().as_tensor().shape() == shape_t{0, 0, 0, 0});

    // Modifiers do not change what is built.
    CHECK(parse_type("vec'clamped")(3).as_tensor().shape() == shape_t{3});
}

TEST_CASE("types: construct fixed-length vectors") {
    value v3 = parse_type("vec3")();
    CHECK(v3.as_tensor().shape() == shape_t{3});
    CHECK(v3.as_tensor().dtype() == scalar_dtype());
    CHECK(all_zero(v3.as_tensor()));
    CHECK(parse_type("vec3")(3).as_tensor().shape() == shape_t{3});
    CHECK(parse_type("ivec2")().as_tensor().dtype() == dtype::int32);
    CHECK(parse_type("cvec4")().as_tensor().shape() == shape_t{4});
    CHECK(parse_type("cvec4")().as_tensor().dtype() == cscalar_dtype());
}

TEST_CASE("types: construct scalar, string and any types") {
    value s = parse_type("scalar")();
    REQUIRE(s.is_scalar());
    CHECK(s.as_scalar().type() == scalar_dtype());
    CHECK(s.as_scalar().to<double>() == 0.0);

    CHECK(parse_type("cscalar")().as_scalar().type() == cscalar_dtype());
    CHECK(parse_type("int")().as_scalar().type() == dtype::int32);
    CHECK(parse_type("uint8")().as_scalar().type() == dtype::uint8);
    CHECK(parse_type("bool")().as_scalar().type() == dtype::bool_);
    CHECK(parse_type("int64")().as_scalar().to<int64_t>() == 0);

    value str = parse_type("string")();
    REQUIRE(str.is_string());
    CHECK(str.as_string().empty());

    CHECK(parse_type("??")().is_none());
}

TEST_CASE("types: construct cell types") {
    // Quasar's example: vec[mat](4) is a cell vector of four empty matrices.
    value w = parse_type("vec[mat]")(4);
    REQUIRE(w.is_cell());
    CHECK(w.as_cell().shape == shape_t{4});
    REQUIRE(w.as_cell().items.size() == 4);
    for (const value& item : w.as_cell().items) {
        REQUIRE(item.is_tensor());
        CHECK(item.as_tensor().shape() == shape_t{0, 0});
    }

    value grid = parse_type("mat[??]")(2, 3);
    CHECK(grid.as_cell().shape == shape_t{2, 3});
    CHECK(grid.as_cell().items.size() == 6);
    for (const value& item : grid.as_cell().items) CHECK(item.is_none());

    value nums = parse_type("vec[scalar]")(3);
    for (const value& item : nums.as_cell().items) {
        REQUIRE(item.is_scalar());
        CHECK(item.as_scalar().to<double>() == 0.0);
    }

    value nested = parse_type("vec[vec[mat]]")(2);
    REQUIRE(nested.as_cell().items.size() == 2);
    const value& inner = nested.as_cell().items[1];
    REQUIRE(inner.is_cell());
    CHECK(inner.as_cell().shape == shape_t{0});
    CHECK(inner.as_cell().items.empty());

    value fixed = parse_type("vec[vec3]")(2);
    CHECK(fixed.as_cell().items[0].as_tensor().shape() == shape_t{3});
    // Elements are distinct values, not one shared tensor.
    CHECK(fixed.as_cell().items[0].as_tensor().storage() !=
          fixed.as_cell().items[1].as_tensor().storage());

    CHECK(parse_type("cube{4}[int]")(1, 2, 1, 2).as_cell().items.size() == 4);
    CHECK(parse_type("vec[mat]")().as_cell().shape == shape_t{0});
    value any_cell = parse_type("cube{:}[string]")();
    CHECK(any_cell.as_cell().shape.empty());
    CHECK(any_cell.as_cell().items.size() == 1);

    // A constructed value is a value of its type.
    for (const char* name : {"vec[mat]", "mat[??]", "vec[vec[mat]]", "cube{4}[int]", "vec",
                             "cube{:}", "vec3", "cmat", "icube{4}", "scalar", "string", "??"}) {
        CAPTURE(name);
        type_desc t = parse_type(name);
        CHECK(t.matches(t.default_value()));
    }
    CHECK(parse_type("vec[mat]").matches(parse_type("vec[mat]")(4)));
    CHECK(parse_type("cube{5}").matches(parse_type("cube{5}")(1, 2, 3, 4, 5)));
}

TEST_CASE("types: construct rejects wrong sizes") {
    CHECK_THROWS_AS((void)parse_type("mat").construct({3}), value_error);
    CHECK(contains(construct_error("mat", {3}), "takes 2 sizes"));
    CHECK(contains(construct_error("vec", {2, 3}), "takes 1 size"));
    CHECK(contains(construct_error("cube{5}", {1, 2, 3}), "takes 5 sizes"));
    CHECK(contains(construct_error("vec", {-1}), "size -1 of dimension 0 is negative"));
    CHECK(contains(construct_error("mat", {3, -2}), "of dimension 1 is negative"));
    CHECK(contains(construct_error("vec[mat]", {-4}), "negative"));
    CHECK(contains(construct_error("vec[mat]", {4, 4}), "takes 1 size"));
    CHECK(contains(construct_error("vec3", {4}), "fixed shape (3,)"));
    CHECK(contains(construct_error("scalar", {1}), "take no sizes"));
    CHECK(contains(construct_error("string", {2}), "take no sizes"));
    CHECK(contains(construct_error("??", {2}), "take no sizes"));
    CHECK(contains(construct_error("cube{:}", shape_t(33, 1)), "at most 32"));
    CHECK(contains(construct_error("mat", {3}), "cannot construct 'mat' with sizes (3"));
}
