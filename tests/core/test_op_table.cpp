// Tests derived from the op table: every row's enum, name and dtype rule against its kernels.
#include "test_elementwise_util.hpp"

#include "isthmus/ops/op_table.hpp"

#include <string_view>

using namespace isthmus;
using namespace ew_test;

namespace {

struct row {
    std::string_view name;
    std::string_view python;
};

#define ISTHMUS_ROW(n, r, ...) {#n, ISTHMUS_ROW_PY(__VA_ARGS__)},
#define ISTHMUS_ROW_PY(py, ...) py
const row unary_rows[] = {ISTHMUS_UNARY_OPS(ISTHMUS_ROW) ISTHMUS_UNARY_PART_OPS(ISTHMUS_ROW)};
#undef ISTHMUS_ROW
#undef ISTHMUS_ROW_PY
#define ISTHMUS_ROW(n, r, b, py, doc) {#n, py},
const row binary_rows[] = {ISTHMUS_BINARY_OPS(ISTHMUS_ROW)};
#undef ISTHMUS_ROW

dtype dtype_at(int i) {
    return static_cast<dtype>(i);
}

} // namespace

TEST_CASE("op table: the enums are the rows, in order, with their names") {
    REQUIRE(std::size(unary_rows) == static_cast<size_t>(unary_op_count));
    REQUIRE(std::size(binary_rows) == static_cast<size_t>(binary_op_count));
    for (int i = 0; i < unary_op_count; ++i) {
        CHECK(name(static_cast<unary_op>(i)) == unary_rows[i].name);
        CHECK(!unary_rows[i].python.empty());
    }
    for (int i = 0; i < binary_op_count; ++i) {
        CHECK(name(static_cast<binary_op>(i)) == binary_rows[i].name);
        CHECK(!binary_rows[i].python.empty());
    }
}

TEST_CASE("op table: every unary row on every dtype runs on the CPU exactly when its rule "
          "accepts the dtype, and returns the rule's dtype") {
    for (int o = 0; o < unary_op_count; ++o) {
        const auto op = static_cast<unary_op>(o);
        for (int d = 0; d < dtype_count; ++d) {
            const dtype dt = dtype_at(d);
            INFO(name(op), " on ", name(dt));
            const tensor a = random_tensor(dt, {2, 3}, 7u + static_cast<uint32_t>(d), 0.5, 3.5);
            dtype want{};
            try {
                want = result_type(op, dt);
            } catch (const type_error&) {
                CHECK_THROWS_AS((void)unary(op, a), type_error);
                continue;
            }
            const tensor r = unary(op, a);
            CHECK(r.dtype() == want);
            CHECK(r.shape() == a.shape());
            // gives_bool rules return bool whatever the input
            if (gives_bool(rule(op))) CHECK(want == dtype::bool_);
            // math rules never return an integer
            if (rule(op) == unary_rule::math) CHECK((is_floating(want) || is_complex(want)));
            if (rule(op) == unary_rule::math_real) {
                CHECK(is_floating(want));
                CHECK(!is_complex(dt));
            }
        }
    }
}

TEST_CASE("op table: every binary row on every pair of dtypes runs on the CPU exactly when its "
          "rule accepts them, and returns the rule's dtype") {
    for (int o = 0; o < binary_op_count; ++o) {
        const auto op = static_cast<binary_op>(o);
        for (int d1 = 0; d1 < dtype_count; ++d1) {
            for (int d2 = 0; d2 < dtype_count; ++d2) {
                const dtype x = dtype_at(d1), y = dtype_at(d2);
                INFO(name(op), " on ", name(x), ", ", name(y));
                const tensor a = random_tensor(x, {3}, 11u + static_cast<uint32_t>(d1), 1, 3);
                const tensor b = random_tensor(y, {2, 1}, 13u + static_cast<uint32_t>(d2), 1, 3);
                dtype want{};
                try {
                    want = result_type(op, x, y);
                } catch (const type_error&) {
                    CHECK_THROWS_AS((void)binary(op, a, b), type_error);
                    continue;
                }
                const tensor r = binary(op, a, b);
                CHECK(r.dtype() == want);
                CHECK(r.shape() == shape_t{2, 3});
                if (gives_bool(rule(op))) CHECK(want == dtype::bool_);
            }
        }
    }
}
