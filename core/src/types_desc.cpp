// The Quasar type object: factories, accessors, canonical names and equality.
#include "isthmus/types.hpp"

#include "isthmus/config.hpp"
#include "isthmus/error.hpp"

#include <ostream>

namespace isthmus {

std::string_view name(access_modifier m) noexcept {
    switch (m) {
    case access_modifier::none:
        return "";
    case access_modifier::clamped:
        return "clamped";
    case access_modifier::circular:
        return "circular";
    case access_modifier::mirror:
        return "mirror";
    case access_modifier::checked:
        return "checked";
    case access_modifier::unchecked:
        return "unchecked";
    }
    return "";
}

std::string_view name(type_kind k) noexcept {
    switch (k) {
    case type_kind::any:
        return "any";
    case type_kind::scalar:
        return "scalar";
    case type_kind::string:
        return "string";
    case type_kind::tensor:
        return "tensor";
    case type_kind::cell:
        return "cell";
    }
    return "";
}

namespace {

// Note [one rank range]
// ~~~~~~~~~~~~~~~~~~~~~
// Tensor and cell types accept the same ranks, 1..max_rank or any_rank; rank 0 is spelled as a
// scalar type, never as `cube{0}`.
void check_rank(int rank, std::string_view what) {
    ISTHMUS_CHECK(rank == type_desc::any_rank || (rank >= 1 && rank <= max_rank), value_error, what,
                  " rank must be 1 to ", max_rank, " or any_rank, got ", rank);
}

// Note [no exact-dtype tensors]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `int8`, `float64`, ... name scalar types only. A tensor type stands for a dtype family
// (vec/cvec/ivec), because the grammar has no spelling for "a vec of uint8" (`vec[uint8]` is a cell
// of uint8 scalars, as in Quasar), and a type without a name could not round-trip through
// to_string().
void check_tensor_family(dtype_family family, std::string_view what) {
    ISTHMUS_CHECK(family != dtype_family::exact, value_error, what,
                  ": tensor types are real, complex or integer (vec, cvec, ivec), not exact");
}

// "vec", "mat", "cube", "cube{N}" or "cube{:}": the container part of tensor and cell names.
std::string container_name(int rank) {
    switch (rank) {
    case 1:
        return "vec";
    case 2:
        return "mat";
    case 3:
        return "cube";
    case type_desc::any_rank:
        return "cube{:}";
    default:
        return detail::concat("cube{", rank, "}");
    }
}

std::string_view family_prefix(dtype_family family) {
    switch (family) {
    case dtype_family::complex:
        return "c";
    case dtype_family::integer:
        return "i";
    default:
        return "";
    }
}

} // namespace

type_desc type_desc::any_type() {
    return type_desc();
}

type_desc type_desc::string_type() {
    type_desc t;
    t.kind_ = type_kind::string;
    t.rank_ = 0;
    return t;
}

type_desc type_desc::scalar_type(dtype_family family, isthmus::dtype exact_dtype) {
    type_desc t;
    t.kind_ = type_kind::scalar;
    t.family_ = family;
    // Canonical: exact_ only carries information for the exact family (see operator==).
    t.exact_ = family == dtype_family::exact ? exact_dtype : isthmus::dtype::float32;
    t.rank_ = 0;
    return t;
}

type_desc type_desc::tensor_type(dtype_family family, int rank, access_modifier modifier) {
    check_tensor_family(family, "tensor_type");
    check_rank(rank, "tensor_type:");
    type_desc t;
    t.kind_ = type_kind::tensor;
    t.family_ = family;
    t.rank_ = rank;
    t.modifier_ = modifier;
    return t;
}

type_desc type_desc::fixed_vector_type(dtype_family family, int64_t length,
                                       access_modifier modifier) {
    check_tensor_family(family, "fixed_vector_type");
    ISTHMUS_CHECK(length >= 2 && length <= 4, value_error,
                  "fixed_vector_type: the length must be 2, 3 or 4 (vec2..vec4), got ", length);
    type_desc t = tensor_type(family, 1, modifier);
    t.length_ = length;
    return t;
}

type_desc type_desc::cell_type(int rank, type_desc element) {
    check_rank(rank, "cell_type:");
    type_desc t;
    t.kind_ = type_kind::cell;
    t.rank_ = rank;
    t.element_ = std::make_shared<const type_desc>(std::move(element));
    return t;
}

std::optional<dtype_family> type_desc::family() const noexcept {
    if (kind_ == type_kind::scalar || kind_ == type_kind::tensor) return family_;
    return std::nullopt;
}

// Note [late-bound scalar]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// `scalar`, `vec`, ... store the family, not a dtype, and resolve it on every call. A type parsed
// before set_scalar_dtype(float64) (a cached kernel signature, a Python-side `q.typename("vec")`)
// then builds float64 values afterwards, as Quasar's precision switch promises, and its canonical
// name stays "vec".
std::optional<isthmus::dtype> type_desc::dtype() const noexcept {
    if (kind_ != type_kind::scalar && kind_ != type_kind::tensor) return std::nullopt;
    switch (family_) {
    case dtype_family::real:
        return scalar_dtype();
    case dtype_family::complex:
        return cscalar_dtype();
    case dtype_family::integer:
        return isthmus::dtype::int32;
    case dtype_family::exact:
        return exact_;
    }
    return std::nullopt;
}

std::optional<int64_t> type_desc::fixed_length() const noexcept {
    if (length_ == 0) return std::nullopt;
    return length_;
}

const type_desc& type_desc::element() const {
    ISTHMUS_CHECK(kind_ == type_kind::cell, type_error, "type '", to_string(),
                  "' is not a cell type and has no element type");
    return *element_;
}

std::string type_desc::to_string() const {
    switch (kind_) {
    case type_kind::any:
        return "??";
    case type_kind::string:
        return "string";
    case type_kind::scalar:
        switch (family_) {
        case dtype_family::real:
            return "scalar";
        case dtype_family::complex:
            return "cscalar";
        case dtype_family::integer:
            return "int";
        case dtype_family::exact:
            return std::string(name(exact_));
        }
        break;
    case type_kind::tensor: {
        std::string s(family_prefix(family_));
        s += length_ != 0 ? detail::concat("vec", length_) : container_name(rank_);
        if (modifier_ != access_modifier::none) {
            s += '\'';
            s += name(modifier_);
        }
        return s;
    }
    case type_kind::cell:
        return container_name(rank_) + "[" + element_->to_string() + "]";
    }
    return "??";
}

bool type_desc::operator==(const type_desc& o) const noexcept {
    if (kind_ != o.kind_ || rank_ != o.rank_ || length_ != o.length_ || modifier_ != o.modifier_)
        return false;
    if (kind_ == type_kind::scalar || kind_ == type_kind::tensor) {
        if (family_ != o.family_) return false;
        if (family_ == dtype_family::exact && exact_ != o.exact_) return false;
    }
    if (kind_ == type_kind::cell) return *element_ == *o.element_;
    return true;
}

bool matches_type(const value& v, std::string_view type_name) {
    return parse_type(type_name).matches(v);
}

std::ostream& operator<<(std::ostream& os, const type_desc& t) {
    return os << t.to_string();
}

} // namespace isthmus
