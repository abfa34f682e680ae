// Quasar type names: the type object, the name parser, value construction and type tests.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"
#include "isthmus/tensor.hpp"
#include "isthmus/value.hpp"

#include <concepts>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace isthmus {

/// What a type describes. The grammar and the rules are in docs/types.md.
enum class type_kind : uint8_t {
    any,    ///< `??`: any value, none included.
    scalar, ///< One number: `scalar`, `cscalar`, `int`, `int8`..`uint64`, `float32`, `bool`, ...
    string, ///< `string`.
    tensor, ///< An array of numbers: `vec`, `cmat`, `icube{4}`, `cube{:}`, `vec3`, ...
    cell,   ///< A container of values: `vec[T]`, `mat[T]`, `cube[T]`, `cube{N}[T]`, `cube{:}[T]`.
};

/// Which dtypes a scalar or tensor type stands for: the dtype it builds and those it accepts.
enum class dtype_family : uint8_t {
    real,    ///< `scalar`, `vec`, ...: builds scalar_dtype(); accepts any real floating dtype.
    complex, ///< `cscalar`, `cvec`, ...: builds cscalar_dtype(); accepts complex64, complex128.
    integer, ///< `int`, `ivec`, ...: builds int32; accepts any signed or unsigned integer dtype.
    exact,   ///< `int8`, `float64`, `bool`, ... (scalars only): builds and accepts one dtype.
};

/// Quasar's access modifiers: how a kernel reads a tensor outside its bounds. The type only
/// records the modifier; kernels act on it.
enum class access_modifier : uint8_t {
    none,      ///< No modifier: the kernel's default.
    clamped,   ///< `'clamped`: indices are clamped to the nearest edge.
    circular,  ///< `'circular`: indices wrap around (periodic extension).
    mirror,    ///< `'mirror`: indices reflect at the edges.
    checked,   ///< `'checked`: out-of-bounds access raises an error.
    unchecked, ///< `'unchecked`: no bounds checks (the caller guarantees in-bounds access).
};

/// The modifier's name as written after the quote ("clamped", ...); "" for none.
ISTHMUS_API std::string_view name(access_modifier m) noexcept;
/// "any", "scalar", "string", "tensor" or "cell".
ISTHMUS_API std::string_view name(type_kind k) noexcept;

/// A parsed Quasar type name (`vec`, `cube{:}`, `vec[mat]`, `cube'clamped`, `??`, ...).
///
/// An immutable value type: copies are cheap (a cell's element type is shared) and safe to use
/// from several threads. Make one with parse_type() or with the static factories; the
/// factories enforce the same rules as the parser, so every type_desc has a canonical name and
/// `parse_type(t.to_string()) == t`.
class ISTHMUS_API type_desc {
public:
    /// rank() of `cube{:}`, `cube{:}[T]` and `??`: any rank.
    static constexpr int any_rank = -1;

    /// The `??` type.
    type_desc() = default;

    // ---- factories ----
    /// `??`: any value.
    static type_desc any_type();
    /// `string`.
    static type_desc string_type();
    /// A scalar type: `scalar`, `cscalar`, `int`, or, for dtype_family::exact, the type named
    /// after `exact_dtype` (`int8`, `float64`, `bool`, ...). `exact_dtype` is ignored otherwise.
    static type_desc scalar_type(dtype_family family, isthmus::dtype exact_dtype = dtype::float32);
    /// A tensor type of `rank` (1..max_rank, or any_rank for `cube{:}`). The family may not be
    /// exact (there is no name for it); throws value_error otherwise.
    static type_desc tensor_type(dtype_family family, int rank,
                                 access_modifier modifier = access_modifier::none);
    /// A fixed-length vector type `vecL`, `ivecL` or `cvecL`, with L in 2..4.
    static type_desc fixed_vector_type(dtype_family family, int64_t length,
                                       access_modifier modifier = access_modifier::none);
    /// A cell type of `rank` (1..max_rank or any_rank) whose elements have type `element`.
    static type_desc cell_type(int rank, type_desc element);

    // ---- accessors ----
    type_kind kind() const noexcept { return kind_; }
    /// The dtype family of a scalar or tensor type; nullopt for `??`, `string` and cells.
    std::optional<dtype_family> family() const noexcept;
    /// The dtype construct() builds, resolved now (so `scalar` follows set_scalar_dtype());
    /// nullopt for `??`, `string` and cells.
    std::optional<isthmus::dtype> dtype() const noexcept;
    /// The rank: 0 for scalar and string types, N for tensor and cell types, any_rank for
    /// `cube{:}`, `cube{:}[T]` and `??`.
    int rank() const noexcept { return rank_; }
    /// True for `cube{:}`-style types and `??`.
    bool is_any_rank() const noexcept { return rank_ == any_rank; }
    /// The length of a fixed-length vector (`vec3` -> 3); nullopt for every other type.
    std::optional<int64_t> fixed_length() const noexcept;
    /// The element type of a cell type; throws type_error for other kinds.
    const type_desc& element() const;
    /// The access modifier (tensor types only; none for the others).
    access_modifier modifier() const noexcept { return modifier_; }

    /// The canonical name: no whitespace, `cube{1}` -> `vec`, `ccube{2}` -> `cmat`,
    /// `cube{3}` -> `cube`. parse_type(to_string()) gives back an equal type.
    std::string to_string() const;

    // ---- construction ----
    /// A new value of this type with the given sizes (see docs/types.md, "Construction"):
    /// a zero-filled CPU tensor for tensor types (exactly rank() sizes, any number up to
    /// max_rank for `cube{:}`, none or the length for `vecL`); a cell whose elements are the
    /// element type's default value; 0 of the type's dtype for scalar types; "" for string;
    /// none for `??`. No sizes at all gives default_value(). Throws value_error for a wrong
    /// number of sizes or a negative size.
    value construct(const shape_t& sizes = {}) const;
    /// construct() with the sizes as arguments: `parse_type("mat")(3, 4)`.
    template <std::integral... I>
    value operator()(I... sizes) const {
        return construct(shape_t{static_cast<int64_t>(sizes)...});
    }
    /// The value construct() builds without sizes: empty tensors and cells of the type's rank
    /// (`vec` -> shape (0), `mat` -> (0, 0)), zeros for `vecL`, a 0-d zero for `cube{:}`,
    /// 0 for scalars, "" for string, none for `??`.
    value default_value() const { return construct({}); }

    // ---- type tests ----
    /// True when `v` is a value of this type (Quasar's `type(v, name)`); the rules are in
    /// docs/types.md, "Matching". Never throws.
    bool matches(const value& v) const noexcept;

    /// Structural equality (equal types have equal canonical names).
    bool operator==(const type_desc& o) const noexcept;

private:
    type_kind kind_ = type_kind::any;
    dtype_family family_ = dtype_family::real;
    isthmus::dtype exact_ = isthmus::dtype::float32; // only for dtype_family::exact
    int rank_ = any_rank;
    int64_t length_ = 0; // fixed-length vectors only; 0 = not fixed
    access_modifier modifier_ = access_modifier::none;
    std::shared_ptr<const type_desc> element_; // cells only
};

/// Parses a Quasar type name (grammar in docs/types.md). Throws value_error for a malformed
/// name; the message quotes the name and gives the 0-based position and what was expected:
/// `malformed type name "vec[mat": expected ']' at position 7`.
ISTHMUS_API type_desc parse_type(std::string_view name);

/// parse_type(type_name).matches(v): Quasar's `type(v, "cube{:}")`. Throws value_error when the
/// name is malformed.
ISTHMUS_API bool matches_type(const value& v, std::string_view type_name);

/// Writes the canonical name.
ISTHMUS_API std::ostream& operator<<(std::ostream& os, const type_desc& t);

} // namespace isthmus
