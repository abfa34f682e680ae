// Tests for Quasar type names: parsing, canonical names, accessors, access modifiers, malformed
// names and their messages, and the factories that build what the parser builds.
#include <doctest/doctest.h>

#include "isthmus/config.hpp"
#include "isthmus/types.hpp"

#include "error_text.hpp"

#include <string>
#include <string_view>

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
