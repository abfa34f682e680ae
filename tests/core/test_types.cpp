// Tests for Quasar type names: parsing, canonical names, errors, construction and matching.
#include <doctest/doctest.h>

#include "isthmus/config.hpp"
#include "isthmus/types.hpp"

#include "error_text.hpp"
#include "scalar_dtype_guard.hpp"

#include <string>
#include <string_view>
#include <vector>

using namespace isthmus;

namespace {

// The message of the value_error parse_type throws, or "<no error>".
std::string parse_error(std::string_view name) {
    try {
        (void)parse_type(name);
    } catch (const value_error& e) {
        return e.what();
    }
    return "<no error>";
}

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

value float_tensor(shape_t shape, dtype dt = dtype::float32) {
    tensor t = tensor::empty(shape, dt, MEMRESOURCE_CPU);
    t.fill(1.0);
    return value(t);
}

} // namespace

TEST_CASE("types: every name parses and round-trips to its canonical name") {
    struct row {
        const char* input;
        const char* canonical;
    };
    const std::vector<row> rows = {
        {"scalar", "scalar"},
        {"cscalar", "cscalar"},
        {"int", "int"},
        {"int8", "int8"},
        {"int16", "int16"},
        {"int32", "int32"},
        {"int64", "int64"},
        {"uint8", "uint8"},
        {"uint16", "uint16"},
        {"uint32", "uint32"},
        {"uint64", "uint64"},
        {"float16", "float16"},
        {"bfloat16", "bfloat16"},
        {"float32", "float32"},
        {"float64", "float64"},
        {"complex64", "complex64"},
        {"complex128", "complex128"},
        {"bool", "bool"},
        {"string", "string"},
        {"??", "??"},
        {"vec", "vec"},
        {"mat", "mat"},
        {"cube", "cube"},
        {"cube{4}", "cube{4}"},
        {"cube{32}", "cube{32}"},
        {"cube{:}", "cube{:}"},
        {"cube{1}", "vec"},
        {"cube{2}", "mat"},
        {"cube{3}", "cube"},
        {"cvec", "cvec"},
        {"cmat", "cmat"},
        {"ccube", "ccube"},
        {"ccube{4}", "ccube{4}"},
        {"ccube{:}", "ccube{:}"},
        {"ccube{2}", "cmat"},
        {"ivec", "ivec"},
        {"imat", "imat"},
        {"icube", "icube"},
        {"icube{:}", "icube{:}"},
        {"icube{7}", "icube{7}"},
        {"vec2", "vec2"},
        {"vec3", "vec3"},
        {"vec4", "vec4"},
        {"ivec2", "ivec2"},
        {"ivec3", "ivec3"},
        {"ivec4", "ivec4"},
        {"cvec2", "cvec2"},
        {"cvec3", "cvec3"},
        {"cvec4", "cvec4"},
        {"vec[mat]", "vec[mat]"},
        {"mat[??]", "mat[??]"},
        {"cube[scalar]", "cube[scalar]"},
        {"cube{5}[int]", "cube{5}[int]"},
        {"cube{:}[string]", "cube{:}[string]"},
        {"cube{1}[vec]", "vec[vec]"},
        {"vec'clamped", "vec'clamped"},
        {"cube'mirror", "cube'mirror"},
    };
    for (const row& r : rows) {
        CAPTURE(r.input);
        type_desc t = parse_type(r.input);
        CHECK(t.to_string() == r.canonical);
        CHECK(parse_type(t.to_string()) == t);
        CHECK(parse_type(r.canonical) == t);
    }
}

TEST_CASE("types: accessors describe each kind") {
    type_desc any = parse_type("??");
    CHECK(any.kind() == type_kind::any);
    CHECK(any.is_any_rank());
    CHECK_FALSE(any.dtype().has_value());
    CHECK_FALSE(any.family().has_value());
    CHECK(any == type_desc());

    type_desc s = parse_type("scalar");
    CHECK(s.kind() == type_kind::scalar);
    CHECK(s.rank() == 0);
    CHECK(s.family() == dtype_family::real);
    CHECK(s.dtype() == scalar_dtype());

    CHECK(parse_type("cscalar").dtype() == cscalar_dtype());
    CHECK(parse_type("int").dtype() == dtype::int32);
    CHECK(parse_type("int").family() == dtype_family::integer);
    CHECK(parse_type("uint16").dtype() == dtype::uint16);
    CHECK(parse_type("uint16").family() == dtype_family::exact);
    CHECK(parse_type("bool").dtype() == dtype::bool_);
    CHECK(parse_type("float64").dtype() == dtype::float64);
    CHECK(parse_type("int") != parse_type("int32"));
    CHECK(parse_type("scalar") != parse_type("float32"));

    type_desc str = parse_type("string");
    CHECK(str.kind() == type_kind::string);
    CHECK_FALSE(str.dtype().has_value());

    type_desc v = parse_type("vec");
    CHECK(v.kind() == type_kind::tensor);
    CHECK(v.rank() == 1);
    CHECK_FALSE(v.fixed_length().has_value());
    CHECK(v.modifier() == access_modifier::none);
    CHECK(parse_type("mat").rank() == 2);
    CHECK(parse_type("cube").rank() == 3);
    CHECK(parse_type("cube{6}").rank() == 6);
    CHECK(parse_type("cube{:}").rank() == type_desc::any_rank);
    CHECK(parse_type("cube{:}").is_any_rank());
    CHECK(parse_type("cmat").family() == dtype_family::complex);
    CHECK(parse_type("cmat").dtype() == cscalar_dtype());
    CHECK(parse_type("icube{4}").family() == dtype_family::integer);
    CHECK(parse_type("icube{4}").dtype() == dtype::int32);
    CHECK(parse_type("icube{4}").rank() == 4);

    type_desc v3 = parse_type("vec3");
    CHECK(v3.kind() == type_kind::tensor);
    CHECK(v3.rank() == 1);
    CHECK(v3.fixed_length() == 3);
    CHECK(parse_type("cvec2").fixed_length() == 2);
    CHECK(parse_type("cvec2").family() == dtype_family::complex);
    CHECK(parse_type("ivec4").fixed_length() == 4);
    CHECK(v3 != v);

    type_desc c = parse_type("mat[vec]");
    CHECK(c.kind() == type_kind::cell);
    CHECK(c.rank() == 2);
    CHECK(c.element() == parse_type("vec"));
    CHECK_FALSE(c.dtype().has_value());
    CHECK_THROWS_AS((void)v.element(), type_error);
}

TEST_CASE("types: nested cells") {
    type_desc t = parse_type("vec[vec[mat]]");
    CHECK(t.to_string() == "vec[vec[mat]]");
    CHECK(t.kind() == type_kind::cell);
    CHECK(t.element().kind() == type_kind::cell);
    CHECK(t.element().rank() == 1);
    CHECK(t.element().element() == parse_type("mat"));

    type_desc deep = parse_type("cube{:}[mat[cube{4}[vec[??]]]]");
    CHECK(deep.to_string() == "cube{:}[mat[cube{4}[vec[??]]]]");
    CHECK(deep.element().element().rank() == 4);
    CHECK(deep.element().element().element().element().kind() == type_kind::any);

    // Element types may carry their own modifiers.
    type_desc m = parse_type("vec[cube'circular]");
    CHECK(m.element().modifier() == access_modifier::circular);
    CHECK(m.to_string() == "vec[cube'circular]");

    CHECK(parse_type("vec[mat]") != parse_type("vec[vec]"));
    CHECK(parse_type("vec[mat]") != parse_type("mat[mat]"));
}

TEST_CASE("types: access modifiers are recorded") {
    struct row {
        const char* input;
        access_modifier modifier;
    };
    for (const row& r : {row{"vec'clamped", access_modifier::clamped},
                         row{"mat'circular", access_modifier::circular},
                         row{"cube'mirror", access_modifier::mirror},
                         row{"cube{4}'checked", access_modifier::checked},
                         row{"cube{:}'unchecked", access_modifier::unchecked},
                         row{"cmat'clamped", access_modifier::clamped},
                         row{"icube{5}'mirror", access_modifier::mirror},
                         row{"vec3'circular", access_modifier::circular}}) {
        CAPTURE(r.input);
        type_desc t = parse_type(r.input);
        CHECK(t.modifier() == r.modifier);
        CHECK(t.to_string() == r.input);
        CHECK(parse_type(t.to_string()) == t);
    }
    CHECK(parse_type("vec'clamped") != parse_type("vec"));
    CHECK(parse_type("vec'clamped") != parse_type("vec'mirror"));
    CHECK(name(access_modifier::unchecked) == "unchecked");
    CHECK(name(access_modifier::none).empty());
}

TEST_CASE("types: whitespace around tokens is ignored") {
    CHECK(parse_type("  vec  ") == parse_type("vec"));
    CHECK(parse_type("\tvec [ mat ]\n") == parse_type("vec[mat]"));
    CHECK(parse_type("cube { 4 }") == parse_type("cube{4}"));
    CHECK(parse_type("cube{ : } [ ?? ]") == parse_type("cube{:}[??]"));
    CHECK(parse_type("vec ' clamped") == parse_type("vec'clamped"));
    CHECK(parse_type(" ?? ") == parse_type("??"));
    CHECK(parse_type(" vec [ vec [ mat ] ] ").to_string() == "vec[vec[mat]]");
}

TEST_CASE("types: malformed names throw value_error naming the position") {
    struct row {
        const char* input;
        int position;
        const char* detail; // a part of the message
    };
    const std::vector<row> rows = {
        {"", 0, "expected a type name"},
        {"   ", 3, "expected a type name"},
        {"vec[mat", 7, "expected ']'"},
        {"vec[", 4, "expected a type name"},
        {"vec[]", 4, "expected a type name but found ']'"},
        {"foo", 0, "unknown type 'foo'"},
        {"vec[mta]", 4, "unknown type 'mta'"},
        {"vec5", 0, "unknown type 'vec5'"},
        {"cube{0}", 5, "rank from 1 to 32"},
        {"cube{33}", 5, "found '33'"},
        {"cube{99999999999999999999}", 5, "rank from 1 to 32"},
        {"cube{x}", 5, "found 'x'"},
        {"cube{}", 5, "rank from 1 to 32 or ':'"},
        {"cube{-1}", 5, "found '-'"},
        {"cube{3", 6, "expected '}'"},
        {"cube{3]", 6, "expected '}' but found ']'"},
        {"vec{2}", 3, "only follows cube"},
        {"vec'bogus", 4, "expected an access modifier"},
        {"vec'", 4, "expected an access modifier"},
        {"vec'clamped'mirror", 11, "expected end of type name"},
        {"scalar'clamped", 6, "access modifiers only follow tensor types"},
        {"vec[mat]'clamped", 8, "access modifiers only follow tensor types"},
        {"int[vec]", 3, "element type [T] only follows"},
        {"ivec[mat]", 4, "element type [T] only follows"},
        {"vec3[mat]", 4, "element type [T] only follows"},
        {"vec mat", 4, "expected end of type name but found 'mat'"},
        {"vec]", 3, "expected end of type name but found ']'"},
        {"vec[mat]]", 8, "expected end of type name"},
        {"?", 0, "expected '?"},
        {"? ?", 0, "expected '?"},
        {"ve c", 0, "unknown type 've'"},
        {"vec c", 4, "expected end of type name but found 'c'"},
        {"3vec", 0, "expected a type name but found '3vec'"},
        {"vec[mat}", 7, "expected ']' but found '}'"},
        {"float", 0, "unknown type 'float'"},
    };
    for (const row& r : rows) {
        CAPTURE(r.input);
        CHECK_THROWS_AS((void)parse_type(r.input), value_error);
        std::string msg = parse_error(r.input);
        CAPTURE(msg);
        CHECK(contains(msg, "malformed type name \""));
        CHECK(contains(msg, "position " + std::to_string(r.position)));
        CHECK(contains(msg, r.detail));
    }
    // The exact format, as documented.
    CHECK(parse_error("vec[mat") == "malformed type name \"vec[mat\": expected ']' at position 7");
}

TEST_CASE("types: malformed-name messages stay on one line and bound the nesting") {
    std::string msg = parse_error("vec\n[");
    CHECK(contains(msg, "\"vec\\n[\""));
    CHECK(msg.find('\n') == std::string::npos);

    std::string deep;
    for (int i = 0; i < 100; ++i) deep += "vec[";
    deep += "mat";
    for (int i = 0; i < 100; ++i) deep += "]";
    std::string deep_msg = parse_error(deep);
    CHECK(contains(deep_msg, "nested deeper than"));
    CHECK(contains(deep_msg, "position 259"));
}

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

TEST_CASE("types: factories validate like the parser") {
    CHECK(type_desc::tensor_type(dtype_family::real, 2) == parse_type("mat"));
    CHECK(type_desc::tensor_type(dtype_family::complex, type_desc::any_rank,
                                 access_modifier::mirror) == parse_type("ccube{:}'mirror"));
    CHECK(type_desc::fixed_vector_type(dtype_family::integer, 3) == parse_type("ivec3"));
    CHECK(type_desc::cell_type(1, type_desc::scalar_type(dtype_family::exact, dtype::uint8)) ==
          parse_type("vec[uint8]"));
    CHECK(type_desc::string_type() == parse_type("string"));
    CHECK(type_desc::any_type() == parse_type("??"));
    // Non-exact families ignore the dtype argument.
    CHECK(type_desc::scalar_type(dtype_family::real, dtype::int8) == parse_type("scalar"));

    CHECK_THROWS_AS((void)type_desc::tensor_type(dtype_family::real, 0), value_error);
    CHECK_THROWS_AS((void)type_desc::tensor_type(dtype_family::real, max_rank + 1), value_error);
    CHECK_THROWS_AS((void)type_desc::tensor_type(dtype_family::exact, 1), value_error);
    CHECK_THROWS_AS((void)type_desc::fixed_vector_type(dtype_family::real, 5), value_error);
    CHECK_THROWS_AS((void)type_desc::cell_type(-2, type_desc()), value_error);
}
