// Scalars, cells and the value variant: construction, accessors, printing.
#include "isthmus/value.hpp"
#include "cpu/convert.hpp"

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
    for (int64_t s : shape)
        ISTHMUS_CHECK(s >= 0, value_error, "cell: negative dimension in shape ", shape_str(shape));
    c->items.resize(static_cast<size_t>(numel_of(shape)));
    c->shape = std::move(shape);
    return value(std::move(c));
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
        const cell& c = as_cell();
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

} // namespace isthmus
