// libFuzzer target: value construction with fuzzed shapes, dtypes and arguments.
#include "fuzz_support.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/types.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace q = isthmus;
using q::fuzz::fail;

namespace {

// Above this many bytes a well-formed request is not run (it would really allocate); requests
// whose byte count overflows int64 always run and must raise.
constexpr long double k_max_bytes = 16.0L * 1024 * 1024;
// INT64_MAX, exactly (a long double holds 64-bit integers exactly on x86-64).
constexpr long double k_int64_max = 9223372036854775807.0L;

enum class verdict { run, skip, must_fail };

// What a correct library must do with `shape` of `itemsize`-byte elements.
verdict judge(const q::shape_t& shape, size_t itemsize) {
    if (shape.size() > static_cast<size_t>(q::max_rank)) return verdict::must_fail;
    long double bytes = static_cast<long double>(itemsize);
    bool negative = false;
    for (int64_t n : shape) {
        if (n < 0) negative = true;
        bytes *= static_cast<long double>(n);
    }
    if (negative) return verdict::must_fail;
    // NumPy checks the product over all dimensions, zero-size ones included ("array is too big").
    long double all = static_cast<long double>(itemsize);
    for (int64_t n : shape) all *= static_cast<long double>(n == 0 ? 1 : n);
    if (all > k_int64_max) return verdict::must_fail;
    return bytes <= k_max_bytes ? verdict::run : verdict::skip;
}

q::shape_t read_shape(q::fuzz::reader& r) {
    q::shape_t s(r.pick(36));
    for (auto& n : s) n = r.size_like();
    return s;
}

std::string str(const q::shape_t& s) {
    return q::shape_str(s);
}

void check_tensor(const q::tensor& t, const q::shape_t& shape, q::dtype dt, const char* what) {
    if (t.shape() != shape || t.dtype() != dt)
        fail(what, "got shape " + str(t.shape()) + " for " + str(shape));
    if (t.numel() != q::numel_of(shape)) fail(what, "numel mismatch for " + str(shape));
}

// Reads every byte of a contiguous tensor (ASan checks that the buffer is that big) and
// returns whether all are zero.
bool all_zero(const q::tensor& t) {
    if (t.numel() == 0) return true;
    const auto* p = static_cast<const unsigned char*>(t.lock(q::LOCK_READ, q::MEMRESOURCE_CPU));
    bool z = true;
    const int64_t n = t.numel() * static_cast<int64_t>(q::itemsize(t.dtype()));
    for (int64_t i = 0; i < n; ++i) z &= p[i] == 0;
    t.unlock(q::LOCK_READ, q::MEMRESOURCE_CPU);
    return z;
}

void shaped(q::fuzz::reader& r) {
    const q::dtype asked = static_cast<q::dtype>(r.pick(q::dtype_count));
    const q::shape_t shape = read_shape(r);
    const unsigned op = r.pick(6);
    // rand makes floating point only: it is asked for float32 instead of another dtype.
    const q::dtype dt = op == 5 && !q::is_floating(asked) ? q::dtype::float32 : asked;
    const verdict v = judge(shape, q::itemsize(dt));
    if (v == verdict::skip) return;
    q::tensor t;
    const bool ok = q::fuzz::user_errors_ok("creation", [&] {
        switch (op) {
        case 0:
            t = q::zeros(shape, dt);
            break;
        case 1:
            t = q::ones(shape, dt);
            break;
        case 2:
            t = q::full(shape, q::scalar(-3), dt);
            break;
        case 3:
            t = q::uninit(shape, dt);
            break;
        case 4:
            t = q::tensor::empty(shape, dt);
            break;
        default:
            t = q::rand(shape, dt);
            break;
        }
    });
    if (v == verdict::must_fail && ok)
        fail("creation accepted a bad shape", "op " + std::to_string(op) + " shape " + str(shape));
    if (v == verdict::run && !ok)
        fail("creation refused a good shape",
             "op " + std::to_string(op) + " shape " + str(shape) + ": " + q::fuzz::last_error());
    if (!ok) return;
    check_tensor(t, shape, dt, "creation");
    if (op == 0 && !all_zero(t)) fail("zeros is not zero", str(shape));
}

void typed(q::fuzz::reader& r) {
    // A tensor or cell type of some rank, constructed with fuzzed sizes.
    const int rank = static_cast<int>(r.pick(36)) - 1; // -1: any rank
    const bool cell = r.flag();
    const q::shape_t sizes = read_shape(r);
    q::type_desc t;
    if (!q::fuzz::user_errors_ok("type", [&] {
            t = cell ? q::type_desc::cell_type(rank, q::type_desc::any_type())
                     : q::type_desc::tensor_type(q::dtype_family::real, rank);
        }))
        return;
    // Cells: the element count must fit int64; whether the library also bounds their bytes
    // (count times its element size) is its business, so between the two nothing is asked.
    // More than 1e5 elements is not built here.
    verdict v = judge(sizes, cell ? 1 : q::itemsize(q::scalar_dtype()));
    if (cell && v != verdict::must_fail) {
        long double n = 1;
        for (int64_t d : sizes) n *= static_cast<long double>(d);
        if (n > 1e5L) return;
        if (judge(sizes, sizeof(q::value)) == verdict::must_fail) v = verdict::skip;
        if (v == verdict::skip) { // either outcome is right: only typed errors are checked
            q::fuzz::user_errors_ok("construct", [&] { (void)t.construct(sizes); });
            return;
        }
    }
    if (v == verdict::skip) return;
    if (!sizes.empty() && !t.is_any_rank() && static_cast<int>(sizes.size()) != t.rank())
        v = verdict::must_fail;
    q::value out;
    const bool ok = q::fuzz::user_errors_ok("construct", [&] { out = t.construct(sizes); });
    if (v == verdict::must_fail && ok)
        fail("construct accepted bad sizes", t.to_string() + " sizes " + str(sizes));
    if (v == verdict::run && !ok)
        fail("construct refused good sizes",
             t.to_string() + " sizes " + str(sizes) + ": " + q::fuzz::last_error());
    if (ok && !t.matches(out)) fail("constructed value does not match its type", t.to_string());
}

void ranges(q::fuzz::reader& r) {
    const unsigned op = r.pick(3);
    const q::dtype dt = static_cast<q::dtype>(r.pick(q::dtype_count));
    if (op == 0) { // arange with integer or real bounds
        const bool ints = r.flag();
        q::scalar a = ints ? q::scalar(r.size_like()) : q::scalar(r.get<double>());
        q::scalar b = ints ? q::scalar(r.size_like()) : q::scalar(r.get<double>());
        q::scalar s = ints ? q::scalar(r.size_like()) : q::scalar(r.get<double>());
        const long double n =
            (static_cast<long double>(b.to<double>()) - a.to<double>()) / s.to<double>();
        const bool with_dt = r.flag();
        // A huge but representable length would really allocate: skip it (NaN/inf/overflow run).
        if (std::isfinite(static_cast<double>(n)) && n > 1e6L && n < 1e18L) return;
        q::fuzz::user_errors_ok("arange", [&] {
            q::tensor t = with_dt ? q::arange(a, b, s, dt) : q::arange(a, b, s);
            if (t.dim() != 1) fail("arange", "not 1-d");
        });
    } else if (op == 1) {
        const double a = r.get<double>(), b = r.get<double>();
        const int64_t num = r.size_like();
        if (num > (1 << 20)) return;
        q::fuzz::user_errors_ok("linspace", [&] {
            q::tensor t = q::linspace(a, b, num, r.flag(), dt);
            if (t.numel() != num) fail("linspace", "length " + std::to_string(t.numel()));
        });
    } else {
        const int64_t n = r.size_like(), m = r.size_like(), k = r.size_like();
        const verdict v = judge({n, m}, q::itemsize(dt));
        if (v == verdict::skip) return;
        const bool ok = q::fuzz::user_errors_ok("eye", [&] { (void)q::eye(n, m, k, dt); });
        if (v == verdict::must_fail && ok) fail("eye accepted a bad shape", str({n, m}));
        if (v == verdict::run && !ok)
            fail("eye refused a good shape", str({n, m}) + ": " + q::fuzz::last_error());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    q::fuzz::reader r(data, size);
    switch (r.pick(3)) {
    case 0:
        shaped(r);
        break;
    case 1:
        typed(r);
        break;
    default:
        ranges(r);
        break;
    }
    return 0;
}
