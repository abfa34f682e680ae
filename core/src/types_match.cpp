// Type tests: does a runtime value have a Quasar type (`type(A, "cube{:}")`)?
#include "isthmus/types.hpp"

namespace isthmus {
namespace {

// Note [dtype families]
// ~~~~~~~~~~~~~~~~~~~~~
// A type tests the kind of number, not its width. `vec` accepts every real floating dtype (float16,
// bfloat16, float32, float64) whatever the scalar precision, so a float64 NumPy array is a `vec`
// also under float32 precision; `cvec` accepts complex64 and complex128; `ivec` and `int` accept
// every signed and unsigned integer dtype (a Python int arrives as int64). bool is none of these:
// only `bool` and `??` accept it. Only the exact scalar names (`int8`, `float64`, ...) test one
// dtype. Matching never converts: an integer is not a `scalar`, a real number is not a `cscalar`.
bool family_accepts(dtype_family family, std::optional<dtype> exact, dtype dt) {
    switch (family) {
    case dtype_family::real:
        return is_floating(dt);
    case dtype_family::complex:
        return is_complex(dt);
    case dtype_family::integer:
        return is_integer(dt);
    case dtype_family::exact:
        return exact && *exact == dt;
    }
    return false;
}

// Note [rank matching]
// ~~~~~~~~~~~~~~~~~~~~
// Quasar treats a vec as a 1 x N mat and a mat as an M x N x 1 cube, so a lower rank is a special
// case of a higher one: a value of rank r matches a type of rank N when 1 <= r <= N (a vector is a
// `mat` and a `cube`, a matrix is not a `vec`). Rank 0 is a scalar, not a vector: 0-d tensors match
// scalar types, not `vec`. `cube{:}` and `cube{:}[T]` stand for "any array" and accept every rank,
// 0 included. Trailing size-1 dimensions are not dropped: a (3, 4, 1) tensor is a `cube`, not a
// `mat`, as NumPy would see it.
bool rank_fits(int type_rank, size_t value_rank) {
    if (type_rank == type_desc::any_rank) return true;
    return value_rank >= 1 && value_rank <= static_cast<size_t>(type_rank);
}

} // namespace

bool type_desc::matches(const value& v) const noexcept {
    switch (kind_) {
    case type_kind::any:
        return true;
    case type_kind::string:
        return v.is_string();
    case type_kind::scalar: {
        std::optional<isthmus::dtype> exact;
        if (family_ == dtype_family::exact) exact = exact_;
        if (v.is_scalar()) return family_accepts(family_, exact, v.as_scalar().type());
        if (!v.is_tensor()) return false;
        const tensor& t = v.as_tensor();
        return t.defined() && t.dim() == 0 && family_accepts(family_, exact, t.dtype());
    }
    case type_kind::tensor: {
        if (!v.is_tensor()) return false;
        const tensor& t = v.as_tensor();
        if (!t.defined() || !family_accepts(family_, std::nullopt, t.dtype())) return false;
        if (length_ != 0) return t.dim() == 1 && t.shape()[0] == length_;
        return rank_fits(rank_, static_cast<size_t>(t.dim()));
    }
    case type_kind::cell: {
        if (!v.is_cell() || !v.cell_ptr()) return false;
        const cell& c = *v.cell_ptr();
        if (!rank_fits(rank_, c.shape.size())) return false;
        // Recursion depth is bounded by the type's nesting, not the value's, so a cell that
        // contains itself cannot loop: each level descends one element type.
        for (const value& item : c.items)
            if (!element_->matches(item)) return false;
        return true;
    }
    }
    return false;
}

} // namespace isthmus
