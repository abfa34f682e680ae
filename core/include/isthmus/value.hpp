// Runtime values: tensors, scalars, strings, cells (containers of values) and objects.
#pragma once

#include "isthmus/dtype.hpp"
#include "isthmus/export.hpp"
#include "isthmus/tensor.hpp"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace isthmus {

/// A single number with a dtype, held exactly (ints as 64-bit, reals as double).
class ISTHMUS_API scalar {
public:
    scalar() : dtype_(dtype::float64), v_(0.0) {}
    scalar(bool v) : dtype_(dtype::bool_), v_(v) {}
    scalar(int v) : dtype_(dtype::int32), v_(static_cast<int64_t>(v)) {}
    scalar(int64_t v) : dtype_(dtype::int64), v_(v) {}
    scalar(uint64_t v) : dtype_(dtype::uint64), v_(v) {}
    scalar(float v) : dtype_(dtype::float32), v_(static_cast<double>(v)) {}
    scalar(double v) : dtype_(dtype::float64), v_(v) {}
    scalar(complex64_t v) : dtype_(dtype::complex64), v_(complex128_t(v)) {}
    scalar(complex128_t v) : dtype_(dtype::complex128), v_(v) {}
    /// `v` converted to dtype `dt` (rounded or wrapped as a cast would).
    static scalar of(double v, dtype dt);
    /// This number cast to `dt` as a tensor cast (NumPy's astype) casts it: integers wrap,
    /// floats truncate, anything -> bool is `!= 0`, complex -> real keeps the real part.
    scalar cast(dtype dt) const;
    /// True when this integer (or bool) value lies in the range of integer dtype `dt`.
    bool fits_integer(dtype dt) const noexcept;
    /// This number converted to `dt` the way NumPy 2 converts a number written in code (a
    /// Python int, float or complex): an integer outside an integer dtype's range throws
    /// overflow_error ("Python integer 300 out of bounds for int8"), NaN into an integer dtype
    /// value_error, an infinity overflow_error, a float is truncated toward zero and then
    /// range-checked, a complex number into a real dtype throws type_error. Casts of tensors and
    /// of typed scalars keep `of`'s wrapping. See Note [exact number conversion].
    scalar to_checked(dtype dt) const;

    dtype type() const noexcept { return dtype_; }
    /// The value converted to T (as static_cast would; complex -> real takes the real part).
    template <typename T>
    T to() const {
        return std::visit(
            [](auto x) -> T {
                using X = decltype(x);
                if constexpr (std::is_same_v<X, complex128_t>) {
                    if constexpr (std::is_same_v<T, complex64_t> || std::is_same_v<T, complex128_t>)
                        return T(x);
                    else if constexpr (std::is_same_v<T, bool>)
                        return x != complex128_t(0);
                    else
                        return static_cast<T>(x.real());
                } else if constexpr (std::is_same_v<T, float16_t> ||
                                     std::is_same_v<T, bfloat16_t>) {
                    return T(static_cast<float>(x));
                } else {
                    return static_cast<T>(x);
                }
            },
            v_);
    }
    /// The value as a 0-d tensor of its dtype.
    tensor to_tensor() const;
    std::string to_string() const;
    bool operator==(const scalar& o) const { return dtype_ == o.dtype_ && v_ == o.v_; }

private:
    dtype dtype_;
    std::variant<bool, int64_t, uint64_t, double, complex128_t> v_;
};

class value;

/// A container of values with a shape (Quasar's vec[T], mat[T], cube[T]); elements stored in
/// C order. Shared by reference like tensors.
///
/// Cells never contain themselves: `set` refuses a value that is this cell or holds it, so the
/// reference counts always free them (Note [cell cycles]). Code that writes `items` directly
/// takes that duty on itself; printing stays finite either way.
struct ISTHMUS_API cell {
    shape_t shape;
    std::vector<value> items;

    cell() = default;
    cell(const cell&) = default;
    cell& operator=(const cell&) = default;
    /// Frees nested cells without recursion, however deep they nest (Note [cell teardown]).
    ~cell();
    /// Stores `v` at flat (C-order) position `i`; throws index_error when `i` is out of range
    /// and value_error when `v` is this cell or contains it at any depth.
    void set(size_t i, value v);
    /// True when `v` is this cell or holds it at any depth.
    bool reachable_from(const value& v) const;
};

/// Base of opaque values that plugins and the bridges add (functions, kernels, objects,
/// Python objects). `kind()` names the concrete kind for messages and type tests.
class ISTHMUS_API object {
public:
    virtual ~object();
    virtual std::string kind() const = 0;
    virtual std::string to_string() const { return "<" + kind() + ">"; }
};

/// What a value holds.
enum class value_kind : uint8_t { none, scalar, string, tensor, cell, object };

/// A runtime value: none, a scalar, a string, a tensor, a cell or an object. Copies share the
/// underlying tensor storage, cell and object (reference semantics, like Python).
class ISTHMUS_API value {
public:
    value() = default;
    value(scalar s) : v_(std::move(s)) {}
    value(bool v) : v_(scalar(v)) {}
    value(int v) : v_(scalar(v)) {}
    value(int64_t v) : v_(scalar(v)) {}
    value(double v) : v_(scalar(v)) {}
    value(float v) : v_(scalar(v)) {}
    value(std::string s) : v_(std::move(s)) {}
    value(const char* s) : v_(std::string(s)) {}
    value(tensor t) : v_(std::move(t)) {}
    value(std::shared_ptr<cell> c) : v_(std::move(c)) {}
    value(std::shared_ptr<object> o) : v_(std::move(o)) {}
    /// A cell of `shape` with every element none.
    static value make_cell(shape_t shape);

    value_kind kind() const noexcept { return static_cast<value_kind>(v_.index()); }
    bool is_none() const noexcept { return kind() == value_kind::none; }
    bool is_scalar() const noexcept { return kind() == value_kind::scalar; }
    bool is_string() const noexcept { return kind() == value_kind::string; }
    bool is_tensor() const noexcept { return kind() == value_kind::tensor; }
    bool is_cell() const noexcept { return kind() == value_kind::cell; }
    bool is_object() const noexcept { return kind() == value_kind::object; }

    /// Accessors; each throws type_error naming the actual kind when the value is another kind.
    const scalar& as_scalar() const;
    const std::string& as_string() const;
    const tensor& as_tensor() const;
    cell& as_cell() const;
    const std::shared_ptr<cell>& cell_ptr() const;
    const std::shared_ptr<object>& as_object() const;

    /// "none", "scalar", "string", "tensor", "cell" or the object's kind().
    std::string kind_name() const;
    std::string to_string() const;

private:
    std::variant<std::monostate, scalar, std::string, tensor, std::shared_ptr<cell>,
                 std::shared_ptr<object>>
        v_;
};

ISTHMUS_API std::ostream& operator<<(std::ostream& os, const value& v);

} // namespace isthmus
