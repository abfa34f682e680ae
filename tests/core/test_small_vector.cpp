// Tests of small_vector: inline storage, growth to the heap, copies and moves, element lifetimes.
#include <doctest/doctest.h>

#include "isthmus/small_vector.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using isthmus::small_vector;

namespace {

/// Counts live objects, so a test sees every constructed element destroyed exactly once.
struct counted {
    static inline int live = 0;
    std::string text; // not trivially copyable: moves and copies must run
    explicit counted(std::string t) : text(std::move(t)) { ++live; }
    counted(const counted& o) : text(o.text) { ++live; }
    counted(counted&& o) noexcept : text(std::move(o.text)) { ++live; }
    counted& operator=(const counted&) = default;
    ~counted() { --live; }
};

template <typename V>
std::vector<std::string> texts(const V& v) {
    std::vector<std::string> out;
    for (const counted& c : v) out.push_back(c.text);
    return out;
}

} // namespace

TEST_CASE("small_vector: inline up to N, then one heap block, elements kept in order") {
    small_vector<int64_t, 4> v;
    CHECK(v.empty());
    CHECK(v.capacity() == 4);
    const int64_t* inline_data = v.data();
    for (int64_t i = 0; i < 4; ++i) v.push_back(i * 10);
    CHECK(v.data() == inline_data); // still inline
    v.push_back(40);                // past N: moved to the heap
    CHECK(v.data() != inline_data);
    CHECK(v.capacity() >= 5);
    REQUIRE(v.size() == 5);
    for (int64_t i = 0; i < 5; ++i) CHECK(v[static_cast<size_t>(i)] == i * 10);
    CHECK(v.back() == 40);
    const std::vector<int64_t> shape{2, 3, 5, 7, 11, 13};
    const small_vector<int64_t, 4> from(shape.begin(), shape.end());
    CHECK(std::vector<int64_t>(from.begin(), from.end()) == shape);
    CHECK(small_vector<int64_t, 4>{1, 2} == small_vector<int64_t, 4>{1, 2});
    CHECK_FALSE(small_vector<int64_t, 4>{1, 2} == small_vector<int64_t, 4>{1, 2, 3});
}

TEST_CASE("small_vector: copies and moves, inline and on the heap, destroy every element once") {
    counted::live = 0;
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{9}}) {
        CAPTURE(n);
        {
            small_vector<counted, 2> a;
            for (size_t i = 0; i < n; ++i) a.emplace_back("e" + std::to_string(i));
            const auto want = texts(a);
            CHECK(counted::live == static_cast<int>(n));

            small_vector<counted, 2> copy(a);
            CHECK(texts(copy) == want);
            CHECK(texts(a) == want);

            small_vector<counted, 2> moved(std::move(a));
            CHECK(texts(moved) == want);
            CHECK(a.empty()); // NOLINT(bugprone-use-after-move): a moved-from vector is empty

            small_vector<counted, 2> assigned;
            assigned.emplace_back("old");
            assigned = copy;
            CHECK(texts(assigned) == want);
            small_vector<counted, 2> move_assigned;
            move_assigned.emplace_back("old");
            move_assigned = std::move(copy);
            CHECK(texts(move_assigned) == want);
            CHECK(counted::live == static_cast<int>(3 * n));

            moved.clear();
            CHECK(moved.empty());
            CHECK(counted::live == static_cast<int>(2 * n));
            moved.emplace_back("again"); // usable after clear
            CHECK(texts(moved) == std::vector<std::string>{"again"});
        }
        CHECK(counted::live == 0);
    }
}

TEST_CASE("small_vector: an element appended from the container itself survives the growth") {
    small_vector<std::string, 2> v;
    v.push_back("first, long enough to live on the heap of std::string");
    v.push_back("second");
    v.push_back(v[0]); // a reference into the storage that the growth moves away
    REQUIRE(v.size() == 3);
    CHECK(v[2] == v[0]);
    v.reserve(10);
    CHECK(v.capacity() >= 10);
    CHECK(v[1] == "second");
}

TEST_CASE("small_vector: holds move-only elements") {
    small_vector<std::unique_ptr<int>, 1> v;
    for (int i = 0; i < 5; ++i) v.push_back(std::make_unique<int>(i));
    small_vector<std::unique_ptr<int>, 1> w(std::move(v));
    REQUIRE(w.size() == 5);
    for (int i = 0; i < 5; ++i) CHECK(*w[static_cast<size_t>(i)] == i);
}
