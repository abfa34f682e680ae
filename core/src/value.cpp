// Scalars, cells and the value variant: construction, accessors, printing, element stores.
#include "isthmus/value.hpp"
#include "cpu/convert.hpp"
#include "scalar_store.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <new>
#include <ostream>
#include <sstream>

namespace isthmus {

object::~object() = default;

namespace {
// Widens one element to the scalar's exact storage (bool, int64, uint64, double, complex128).
template <typename T>
std::variant<bool, int64_t, uint64_t, double, complex128_t> widen(T x) {
    if constexpr (std::is_same_v<T, bool>)
        return x;
    else if constexpr (cpu::is_complex_v<T>)
        return complex128_t(x);
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        return int64_t(x);
    else if constexpr (std::is_integral_v<T>)
        return uint64_t(x);
    else
        return static_cast<double>(x);
}
} // namespace

scalar scalar::of(double v, dtype dt) {
    scalar s;
    s.dtype_ = dt;
    ISTHMUS_DISPATCH(dt, T, { s.v_ = widen<T>(cpu::convert<T>(v)); });
    return s;
}

scalar scalar::cast(dtype dt) const {
    if (dt == dtype_) return *this;
    scalar s;
    s.dtype_ = dt;
    // From the held value, not through double: int64 -> int8 must wrap all 64 bits.
    std::visit([&](auto x) { ISTHMUS_DISPATCH(dt, T, { s.v_ = widen<T>(cpu::convert<T>(x)); }); },
               v_);
    return s;
}

bool scalar::fits_integer(dtype dt) const noexcept {
    if (!is_integer(dt) && !is_bool(dt)) return false;
    if (is_bool(dt)) return true;
    const int bits = static_cast<int>(8 * isthmus::itemsize(dt));
    if (std::holds_alternative<uint64_t>(v_)) {
        const uint64_t v = std::get<uint64_t>(v_);
        const uint64_t hi = is_signed_int(dt) ? (uint64_t{1} << (bits - 1)) - 1
                            : bits == 64      ? std::numeric_limits<uint64_t>::max()
                                              : (uint64_t{1} << bits) - 1;
        return v <= hi;
    }
    const int64_t v = to<int64_t>();
    if (is_signed_int(dt)) {
        const int64_t hi =
            bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
        return v >= -hi - 1 && v <= hi;
    }
    return v >= 0 && (bits == 64 || v < (int64_t{1} << bits));
}

// Note [exact number conversion]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A number written in code and given a dtype (q.value(300, dtype="int8"), q.full(..., 300,
// dtype=...), A[0] = 300 on an int8 A, an int plugin parameter) is converted by value, as
// NumPy 2 does, never by C's wrapping cast: what does not fit raises. Floats going to an
// integer dtype are truncated toward zero first (2.7 -> 2, as int() does), then range-checked
// like integers; NaN and infinities have no integer value. A complex number converts only to
// complex and to bool (its truth: nonzero, NaN included), as in NumPy. Values that already have a
// dtype (tensors, NumPy scalars, typed qvalue scalars) are *cast* instead, with `of`'s wrapping, as
// NumPy's astype casts.
scalar scalar::to_checked(dtype dt) const {
    if (dt == dtype_) return *this;
    const std::string dt_name{name(dt)};
    if (is_complex(dtype_) && !is_complex(dt) && !is_bool(dt))
        ISTHMUS_THROW(type_error, "cannot convert the complex number ", to_string(), " to ",
                      dt_name);
    if (is_integer(dt)) {
        scalar whole = *this;
        if (!is_integer(dtype_) && !is_bool(dtype_)) {
            const double d = to<double>();
            ISTHMUS_CHECK(!std::isnan(d), value_error, "cannot convert float NaN to integer (",
                          dt_name, ")");
            ISTHMUS_CHECK(!std::isinf(d), overflow_error,
                          "cannot convert float infinity to integer (", dt_name, ")");
            const double t = std::trunc(d);
            if (t >= 0x1p64 || t < -0x1p63)
                ISTHMUS_THROW(overflow_error, "Python integer ", std::fixed, std::setprecision(0),
                              t, " out of bounds for ", dt_name);
            whole =
                t >= 0x1p63 ? scalar(static_cast<uint64_t>(t)) : scalar(static_cast<int64_t>(t));
        }
        if (!whole.fits_integer(dt)) {
            const std::string text = std::holds_alternative<uint64_t>(whole.v_)
                                         ? std::to_string(std::get<uint64_t>(whole.v_))
                                         : std::to_string(whole.to<int64_t>());
            ISTHMUS_THROW(overflow_error, "Python integer ", text, " out of bounds for ", dt_name);
        }
        if (dt == dtype::uint64) return scalar(whole.to<uint64_t>());
        if (dt == dtype::int64) return scalar(whole.to<int64_t>());
        return scalar::of(static_cast<double>(whole.to<int64_t>()), dt);
    }
    if (is_complex(dt)) {
        const auto c = to<complex128_t>();
        return dt == dtype::complex64 ? scalar(complex64_t(c)) : scalar(c);
    }
    if (is_bool(dt)) return scalar(to<complex128_t>() != complex128_t(0));
    return scalar::of(to<double>(), dt);
}

tensor scalar::to_tensor() const {
    tensor t;
    ISTHMUS_DISPATCH(dtype_, T, { t = tensor::scalar_tensor<T>(to<T>()); });
    return t;
}

std::string scalar::to_string() const {
    return to_tensor().to_string();
}

value value::make_cell(shape_t shape) {
    auto c = std::make_shared<cell>();
    // Note [checked sizes] applies to cells too: sizeof(value) bytes per element.
    const int64_t n = checked_numel(shape, sizeof(value), "cell");
    try {
        c->items.resize(static_cast<size_t>(n));
    } catch (const std::bad_alloc&) {
        ISTHMUS_THROW(memory_error, "cell: unable to allocate ", n, " elements for shape ",
                      shape_str(shape));
    }
    c->shape = std::move(shape);
    return value(std::move(c));
}

// Note [cell cycles]
// ~~~~~~~~~~~~~~~~~~
// Cells hold their elements through shared_ptr, so a cell that contained itself (c[0] = c)
// would never be freed and would print forever. Rather than a cycle collector, cell::set
// refuses such an assignment (value_error, the cell unchanged): the element to store is walked
// once, each cell visited at most once, and the assignment is refused when the walk meets the
// target. Python's own lists allow cycles because Python has a collector; a runtime value does
// not. Cells made by conversions are new, so they cannot close a cycle; a Python list that
// contains itself is refused by the conversion's recursion check. Printing (value::to_string)
// still guards against a cycle built by C++ code writing `items` directly: it prints `{...}`
// for a cell already being printed, as Python prints `[...]`.
bool cell::reachable_from(const value& v) const {
    if (!v.is_cell()) return false;
    std::vector<const cell*> todo{v.cell_ptr().get()}, seen;
    while (!todo.empty()) {
        const cell* c = todo.back();
        todo.pop_back();
        if (c == this) return true;
        if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
        seen.push_back(c);
        for (const value& e : c->items)
            if (e.is_cell()) todo.push_back(e.cell_ptr().get());
    }
    return false;
}

void cell::set(size_t i, value v) {
    ISTHMUS_CHECK(i < items.size(), index_error, "cell index ", i,
                  " is out of bounds for a cell of ", items.size(), " elements");
    ISTHMUS_CHECK(!reachable_from(v), value_error,
                  "a cell cannot contain itself (the value assigned is this cell or holds it)");
    items[i] = std::move(v);
}

// Note [cell teardown]
// ~~~~~~~~~~~~~~~~~~~~
// Destroying a chain of nested cells through their destructors recurses once per level, and a
// deep enough chain (built one level at a time) overflows the stack. The destructor instead
// moves every nested cell it is the last owner of into a work list and empties it there, so
// each nested destructor runs on an empty cell and the depth of the recursion stays at two.
cell::~cell() {
    std::vector<std::shared_ptr<cell>> pending;
    auto detach = [&pending](std::vector<value>& elems) {
        for (value& e : elems) {
            if (!e.is_cell()) continue;
            std::shared_ptr<cell> p = e.cell_ptr();
            e = value();
            if (p.use_count() == 1) pending.push_back(std::move(p));
        }
        elems.clear();
    };
    detach(items);
    while (!pending.empty()) {
        std::shared_ptr<cell> p = std::move(pending.back());
        pending.pop_back();
        detach(p->items);
    }
}

namespace {
const char* kind_names[] = {"none", "scalar", "string", "tensor", "cell", "object"};
}

std::string value::kind_name() const {
    if (is_object()) return std::get<std::shared_ptr<object>>(v_)->kind();
    return kind_names[static_cast<size_t>(kind())];
}

#define ISTHMUS_VALUE_GET(KIND, TYPE)                                                              \
    ISTHMUS_CHECK(kind() == value_kind::KIND, type_error, "expected a " #KIND " value, got ",      \
                  kind_name());                                                                    \
    return std::get<TYPE>(v_)

const scalar& value::as_scalar() const {
    ISTHMUS_VALUE_GET(scalar, scalar);
}
const std::string& value::as_string() const {
    ISTHMUS_VALUE_GET(string, std::string);
}
const tensor& value::as_tensor() const {
    ISTHMUS_VALUE_GET(tensor, tensor);
}
const std::shared_ptr<cell>& value::cell_ptr() const {
    ISTHMUS_VALUE_GET(cell, std::shared_ptr<cell>);
}
cell& value::as_cell() const {
    return *cell_ptr();
}
const std::shared_ptr<object>& value::as_object() const {
    ISTHMUS_VALUE_GET(object, std::shared_ptr<object>);
}
#undef ISTHMUS_VALUE_GET

std::string value::to_string() const {
    switch (kind()) {
    case value_kind::none:
        return "none";
    case value_kind::scalar:
        return as_scalar().to_string();
    case value_kind::string:
        return as_string();
    case value_kind::tensor:
        return as_tensor().to_string();
    case value_kind::object:
        return as_object()->to_string();
    case value_kind::cell: {
        // See Note [cell cycles]: a cell already being printed on this thread prints as {...},
        // and so does nesting beyond max_print_depth (the output would be unreadable anyway).
        constexpr size_t max_print_depth = 64;
        thread_local std::vector<const cell*> printing;
        const cell& c = as_cell();
        if (printing.size() >= max_print_depth ||
            std::find(printing.begin(), printing.end(), &c) != printing.end())
            return "{...}";
        printing.push_back(&c);
        struct pop_guard {
            ~pop_guard() { printing.pop_back(); }
        } guard;
        std::ostringstream os;
        os << "{";
        for (size_t i = 0; i < c.items.size(); ++i) os << (i ? ", " : "") << c.items[i].to_string();
        os << "}";
        return os.str();
    }
    }
    return "?";
}

std::ostream& operator<<(std::ostream& os, const value& v) {
    return os << v.to_string();
}

namespace {
// Converts through the scalar's own kind so that every value rounds once (cpu::convert).
template <typename T>
T scalar_as(const scalar& s) {
    const dtype k = s.type();
    if (is_bool(k)) return cpu::convert<T>(s.to<bool>());
    if (is_signed_int(k)) return cpu::convert<T>(s.to<int64_t>());
    if (is_unsigned_int(k)) return cpu::convert<T>(s.to<uint64_t>());
    if (is_complex(k)) return cpu::convert<T>(s.to<complex128_t>());
    return cpu::convert<T>(s.to<double>());
}
} // namespace

void store_scalar(const scalar& s, dtype dt, void* buf) {
    ISTHMUS_DISPATCH(dt, T, { *static_cast<T*>(buf) = scalar_as<T>(s); });
}

} // namespace isthmus
