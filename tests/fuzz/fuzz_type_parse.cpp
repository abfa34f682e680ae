// libFuzzer target: the Quasar type-name parser, canonical names, construction and matching.
#include "fuzz_support.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/types.hpp"

#include <algorithm>
#include <vector>

namespace q = isthmus;
using q::fuzz::fail;

namespace {

// Values of every kind the matcher distinguishes, made once.
const std::vector<q::value>& probes() {
    static const std::vector<q::value> v = [] {
        std::vector<q::value> out = {q::value(), q::value(1.5), q::value(2), q::value(true),
                                     q::value("text")};
        for (q::dtype dt : {q::dtype::float32, q::dtype::float64, q::dtype::int64, q::dtype::uint8,
                            q::dtype::complex64, q::dtype::bool_, q::dtype::float16})
            for (const q::shape_t& s :
                 {q::shape_t{}, q::shape_t{3}, q::shape_t{0}, q::shape_t{2, 3}, q::shape_t{2, 1, 1},
                  q::shape_t{1, 1, 1, 1}})
                out.emplace_back(q::zeros(s, dt));
        q::value c = q::value::make_cell({2});
        c.as_cell().items[0] = q::value(q::zeros({2, 2}));
        c.as_cell().items[1] = q::value::make_cell({0});
        out.push_back(c);
        out.push_back(q::value::make_cell({0, 3}));
        return out;
    }();
    return v;
}

// Construction and matching of a parsed type; the rules are in docs/types.md.
void exercise(const q::type_desc& t, const std::string& name) {
    const std::string canon = t.to_string();
    for (char c : canon)
        if (c == ' ' || c == '\t' || c == '\n') fail("canonical name has whitespace", canon);
    q::type_desc back;
    if (!q::fuzz::user_errors_ok("parse canonical", [&] { back = q::parse_type(canon); }))
        fail("canonical name does not parse", name + " -> " + canon);
    if (!(back == t) || back.to_string() != canon)
        fail("canonical round trip", name + " -> " + canon + " -> " + back.to_string());

    q::value d;
    if (!q::fuzz::user_errors_ok("default_value", [&] { d = t.default_value(); }))
        fail("default_value threw", canon);
    if (!t.matches(d)) fail("a type does not match its default value", canon);

    // Sizes of 2 in every dimension (4 at most), and for vecL its length.
    q::shape_t sizes;
    if (auto len = t.fixed_length())
        sizes = {*len};
    else if (t.kind() == q::type_kind::tensor || t.kind() == q::type_kind::cell)
        sizes.assign(static_cast<size_t>(t.is_any_rank() ? 2 : std::min(t.rank(), 4)), 2);
    if (!sizes.empty() && (t.is_any_rank() || t.rank() <= 4)) {
        q::value v;
        if (!q::fuzz::user_errors_ok("construct", [&] { v = t.construct(sizes); }))
            fail("construct with matching sizes threw", canon);
        if (!t.matches(v)) fail("a type does not match the value it constructed", canon);
    }
    // Wrong sizes must be a value_error, never anything else.
    q::fuzz::user_errors_ok("construct(-1)", [&] { (void)t.construct({-1}); });
    q::fuzz::user_errors_ok("construct(33 sizes)", [&] { (void)t.construct(q::shape_t(33, 1)); });

    for (const q::value& v : probes()) (void)t.matches(v);

    // A cell that contains itself: matching must end (docs/types.md, "Cells").
    q::value self = q::value::make_cell({1});
    self.as_cell().items[0] = self;
    (void)t.matches(self);
    self.as_cell().items[0] = q::value(); // break the cycle (LeakSanitizer)
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string name(reinterpret_cast<const char*>(data), size);
    q::type_desc t;
    try {
        t = q::parse_type(name);
    } catch (const q::value_error& e) {
        const std::string msg = e.what();
        if (msg.find('\n') != std::string::npos || msg.find('\r') != std::string::npos)
            fail("parse error message is not one line", msg);
        if (msg.rfind("malformed type name \"", 0) != 0)
            fail("parse error message does not quote the name", msg);
        return 0;
    } catch (const std::exception& e) {
        fail("parse_type threw something other than value_error", e.what());
    }
    exercise(t, name);
    return 0;
}
