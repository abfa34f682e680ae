// Tests for runtime values: scalars of every dtype, value kinds, accessors, cells, settings.
#include "fake_resource.hpp"
#include "scalar_dtype_guard.hpp"

#include <isthmus/config.hpp>
#include <isthmus/error.hpp>
#include <isthmus/value.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>

using namespace isthmus;

namespace {

struct widget : object {
    std::string kind() const override { return "widget"; }
};
struct named_widget : object {
    std::string kind() const override { return "kernel"; }
    std::string to_string() const override { return "<kernel add>"; }
};

} // namespace

TEST_CASE("values: scalar constructors pick the dtype of the C++ type") {
    CHECK(scalar().type() == dtype::float64);
    CHECK(scalar().to<double>() == 0);
    CHECK(scalar(true).type() == dtype::bool_);
    CHECK(scalar(7).type() == dtype::int32);
    CHECK(scalar(int64_t{7}).type() == dtype::int64);
    CHECK(scalar(uint64_t{7}).type() == dtype::uint64);
    CHECK(scalar(1.5f).type() == dtype::float32);
    CHECK(scalar(1.5).type() == dtype::float64);
    CHECK(scalar(complex64_t(1, 2)).type() == dtype::complex64);
    CHECK(scalar(complex128_t(1, 2)).type() == dtype::complex128);
    // Held exactly: 64-bit integers keep every bit.
    CHECK(scalar(std::numeric_limits<int64_t>::min()).to<int64_t>() ==
          std::numeric_limits<int64_t>::min());
    CHECK(scalar(std::numeric_limits<uint64_t>::max()).to<uint64_t>() ==
          std::numeric_limits<uint64_t>::max());
    CHECK(scalar(0.1f).to<float>() == 0.1f);
}

TEST_CASE("values: scalar::of rounds or wraps into every dtype") {
    struct row {
        double in;
        dtype dt;
        double expect; // the stored value read back as double
    };
    const row rows[] = {
        {2.5, dtype::bool_, 1},
        {0.0, dtype::bool_, 0},
        {-0.0, dtype::bool_, 0},
        {2.7, dtype::int8, 2},
        {-2.7, dtype::int8, -2},
        {300, dtype::int8, 44}, // wraps like numpy on x86
        {-129, dtype::int8, 127},
        {40000, dtype::int16, -25536},
        {1e10, dtype::int32, 1410065408},
        {-3.9, dtype::int64, -3},
        {-1, dtype::uint8, 255},
        {255.9, dtype::uint8, 255},
        {70000, dtype::uint16, 4464},
        {-1, dtype::uint32, 4294967295.0},
        {1e19, dtype::uint64, 1e19},
        {0.1, dtype::float16, 0.0999755859375}, // nearest half
        {65520, dtype::float16, INFINITY},      // overflows half
        {1e-8, dtype::float16, 0},              // underflows half
        {0.1, dtype::bfloat16, 0.10009765625},
        {0.1, dtype::float32, static_cast<double>(0.1f)},
        {0.1, dtype::float64, 0.1},
        {2.5, dtype::complex64, 2.5},
        {0.1, dtype::complex64, static_cast<double>(0.1f)},
        {0.1, dtype::complex128, 0.1},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        CAPTURE(r.dt);
        const scalar s = scalar::of(r.in, r.dt);
        CHECK(s.type() == r.dt);
        CHECK(s.to<double>() == r.expect);
        // As a 0-d tensor of the same dtype, the value is the same.
        const tensor t = s.to_tensor();
        CHECK(t.dim() == 0);
        CHECK(t.dtype() == r.dt);
        CHECK(t.item<double>() == r.expect);
    }
    CHECK(scalar::of(2.5, dtype::complex128).to<complex128_t>() == complex128_t(2.5, 0));
    CHECK(std::isnan(scalar::of(NAN, dtype::float16).to<double>()));
    CHECK(scalar::of(NAN, dtype::bool_).to<bool>()); // NaN != 0
    CHECK(scalar::of(1, dtype::int32) == scalar(1));
    CHECK_FALSE(scalar::of(1, dtype::int64) == scalar(1)); // same number, other dtype
    CHECK_FALSE(scalar(1) == scalar(2));
}

TEST_CASE("values: scalar::to converts like static_cast") {
    CHECK(scalar(2.9).to<int>() == 2);
    CHECK(scalar(-2.9).to<int64_t>() == -2);
    CHECK(scalar(int64_t{-1}).to<uint8_t>() == 255);
    CHECK(scalar(int64_t{300}).to<int8_t>() == 44);
    CHECK(scalar(true).to<double>() == 1);
    CHECK(scalar(false).to<int>() == 0);
    CHECK(scalar(2.5).to<bool>());
    CHECK_FALSE(scalar(0.0).to<bool>());
    CHECK(scalar(complex128_t(1.5, 2)).to<double>() == 1.5); // the real part
    CHECK(scalar(complex128_t(1.5, 2)).to<int>() == 1);
    CHECK(scalar(complex128_t(0, 2)).to<bool>());
    CHECK_FALSE(scalar(complex128_t(0, 0)).to<bool>());
    CHECK(scalar(complex64_t(1, 2)).to<complex64_t>() == complex64_t(1, 2));
    CHECK(scalar(3).to<complex128_t>() == complex128_t(3, 0));
    CHECK(scalar(0.1).to<float16_t>().bits == 0x2e66);
    CHECK(scalar(1.0).to<bfloat16_t>().bits == 0x3f80);
    CHECK(scalar(uint64_t{1} << 63).to<double>() == 9223372036854775808.0);
}

TEST_CASE("values: scalar printing") {
    CHECK(scalar(2.5).to_string() == "2.5");
    CHECK(scalar(1.0).to_string() == "1.0");
    CHECK(scalar(1e20).to_string() == "1e+20");
    CHECK(scalar(0.1f).to_string() == "0.1"); // shortest float32 text, not 0.100000001
    CHECK(scalar::of(0.1, dtype::float16).to_string() == "0.1");
    CHECK(scalar(3).to_string() == "3");
    CHECK(scalar(int64_t{-42}).to_string() == "-42");
    CHECK(scalar(std::numeric_limits<uint64_t>::max()).to_string() == "18446744073709551615");
    CHECK(scalar(true).to_string() == "True");
    CHECK(scalar(false).to_string() == "False");
    CHECK(scalar(complex128_t(1, 2)).to_string() == "(1+2j)");
    CHECK(scalar(complex128_t(0, -1.5)).to_string() == "-1.5j");
    CHECK(scalar(std::nan("")).to_string() == "nan");
    CHECK(scalar(-HUGE_VAL).to_string() == "-inf");
}

TEST_CASE("values: kinds and kind names") {
    const tensor t = tensor::from_vector<int32_t>({1, 2});
    const auto c = std::make_shared<cell>();
    const auto o = std::make_shared<widget>();
    struct row {
        const char* what;
        value v;
        value_kind kind;
        const char* kind_name;
    };
    const row rows[] = {
        {"none", value(), value_kind::none, "none"},
        {"scalar", value(scalar(1.5)), value_kind::scalar, "scalar"},
        {"bool", value(true), value_kind::scalar, "scalar"},
        {"int", value(3), value_kind::scalar, "scalar"},
        {"int64", value(int64_t{3}), value_kind::scalar, "scalar"},
        {"double", value(2.5), value_kind::scalar, "scalar"},
        {"float", value(2.5f), value_kind::scalar, "scalar"},
        {"string literal", value("abc"), value_kind::string, "string"},
        {"std::string", value(std::string("abc")), value_kind::string, "string"},
        {"tensor", value(t), value_kind::tensor, "tensor"},
        {"cell", value(c), value_kind::cell, "cell"},
        {"object", value(std::shared_ptr<object>(o)), value_kind::object, "widget"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.what);
        CHECK(r.v.kind() == r.kind);
        CHECK(r.v.kind_name() == r.kind_name);
        CHECK(r.v.is_none() == (r.kind == value_kind::none));
        CHECK(r.v.is_scalar() == (r.kind == value_kind::scalar));
        CHECK(r.v.is_string() == (r.kind == value_kind::string));
        CHECK(r.v.is_tensor() == (r.kind == value_kind::tensor));
        CHECK(r.v.is_cell() == (r.kind == value_kind::cell));
        CHECK(r.v.is_object() == (r.kind == value_kind::object));
    }
    CHECK(value(true).as_scalar().type() == dtype::bool_);
    CHECK(value(3).as_scalar().type() == dtype::int32);
    CHECK(value(int64_t{3}).as_scalar().type() == dtype::int64);
    CHECK(value(2.5).as_scalar().type() == dtype::float64);
    CHECK(value(2.5f).as_scalar().type() == dtype::float32);
    CHECK(value("abc").as_string() == "abc");
    CHECK(value(t).as_tensor().storage() == t.storage()); // shares, never copies
    CHECK(value(c).cell_ptr() == c);
    CHECK(value(std::shared_ptr<object>(o)).as_object() == o);
}

TEST_CASE("values: accessors raise type_error naming the actual kind") {
    const value s("text");
    const value n;
    const value x(2);
    const value w(std::shared_ptr<object>(std::make_shared<widget>()));
    const value t(tensor::from_vector<float>({1}));
    CHECK_ERROR(s.as_scalar(), type_error, "expected a scalar value, got string");
    CHECK_ERROR(n.as_tensor(), type_error, "expected a tensor value, got none");
    CHECK_ERROR(x.as_string(), type_error, "expected a string value, got scalar");
    CHECK_ERROR(w.as_cell(), type_error, "expected a cell value, got widget");
    CHECK_ERROR(w.cell_ptr(), type_error, "got widget");
    CHECK_ERROR(t.as_object(), type_error, "expected a object value, got tensor");
    CHECK_ERROR(x.as_tensor(), type_error, "got scalar");
    // Nothing changed.
    CHECK(s.as_string() == "text");
    CHECK(n.is_none());
    CHECK(x.as_scalar() == scalar(2));
    CHECK(w.kind_name() == "widget");
    CHECK(t.as_tensor().item<float>() == 1);
}

TEST_CASE("values: cells") {
    value v = value::make_cell({2, 3});
    REQUIRE(v.is_cell());
    cell& c = v.as_cell();
    CHECK(c.shape == shape_t{2, 3});
    CHECK(c.items.size() == 6);
    for (const auto& item : c.items) CHECK(item.is_none());
    // Reference semantics: copies of the value share the cell.
    value alias = v;
    c.items[1] = value(5);
    c.items[2] = value("s");
    CHECK(alias.as_cell().items[1].as_scalar() == scalar(5));
    CHECK(alias.cell_ptr() == v.cell_ptr());
    CHECK(value::make_cell({}).as_cell().items.size() == 1);
    CHECK(value::make_cell({0}).as_cell().items.empty());
    CHECK(value::make_cell({4, 0}).as_cell().shape == shape_t{4, 0});
    CHECK_ERROR(value::make_cell({2, -1}), value_error,
                "cell: negative dimension in shape (2, -1)");
    // Cells hold any value, cells included.
    value outer = value::make_cell({2});
    outer.as_cell().items[0] = v;
    outer.as_cell().items[1] = value(tensor::from_vector<int32_t>({1, 2}));
    CHECK(outer.as_cell().items[0].as_cell().items[2].as_string() == "s");
    CHECK(outer.to_string() == "{{none, 5, s, none, none, none}, [1 2]}");
}

TEST_CASE("values: printing") {
    CHECK(value().to_string() == "none");
    CHECK(value("hi").to_string() == "hi");
    CHECK(value(2.5).to_string() == "2.5");
    CHECK(value(7).to_string() == "7");
    CHECK(value(true).to_string() == "True");
    CHECK(value(tensor::from_vector<double>({1, 2.5, 3})).to_string() == "[1.  2.5 3. ]");
    CHECK(value(std::shared_ptr<object>(std::make_shared<widget>())).to_string() == "<widget>");
    CHECK(value(std::shared_ptr<object>(std::make_shared<named_widget>())).to_string() ==
          "<kernel add>");
    CHECK(value::make_cell({0}).to_string() == "{}");
    std::ostringstream os;
    os << value(1.5f) << " " << value("x");
    CHECK(os.str() == "1.5 x");
}

TEST_CASE("values: scalar_dtype and cscalar_dtype settings") {
    scalar_dtype_guard guard;
    set_scalar_dtype(dtype::float32);
    CHECK(scalar_dtype() == dtype::float32);
    CHECK(cscalar_dtype() == dtype::complex64);
    set_scalar_dtype(dtype::float64);
    CHECK(scalar_dtype() == dtype::float64);
    CHECK(cscalar_dtype() == dtype::complex128);
    for (dtype bad :
         {dtype::int32, dtype::float16, dtype::bfloat16, dtype::complex64, dtype::bool_}) {
        CAPTURE(bad);
        const std::string given = std::string("got ") + std::string(name(bad));
        CHECK_ERROR(set_scalar_dtype(bad), value_error,
                    "the scalar precision must be float32 or float64", given);
        CHECK(scalar_dtype() == dtype::float64); // unchanged
        CHECK(cscalar_dtype() == dtype::complex128);
    }
    set_scalar_dtype(dtype::float32);
    CHECK(scalar_dtype() == dtype::float32);
}
