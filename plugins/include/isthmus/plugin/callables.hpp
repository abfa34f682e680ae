// Introspection of a plugin's callables: parameter and result types, and the signature text and
// storage behind the descriptors (used by the function and kernel launchers).
#pragma once

#include "isthmus/plugin/values.hpp"

namespace isthmus::plugin {

namespace detail {

/// Owned strings and tables backing the descriptors.
struct storage {
    std::deque<std::string> strings;
    std::deque<std::vector<isthmus_param>> params;
    /// Keeps a copy of `s` as long as the module; returns its text.
    ISTHMUS_PLUGIN_SUPPORT const char* keep(std::string s);
};

/// "name(a: float32, x: tensor) -> float64": a function's signature text.
ISTHMUS_PLUGIN_SUPPORT std::string signature_of(const std::string& name,
                                                const std::vector<isthmus_param>& ps,
                                                const char* result, size_t skip_front = 0);

/// "(tensor, scalar)": the result spelling of a tuple of `n` results named `names`.
ISTHMUS_PLUGIN_SUPPORT std::string tuple_result_name(const char* const* names, size_t n);

template <typename R>
const char* result_name();

template <typename R, size_t... I>
const char* tuple_result_name(std::index_sequence<I...>) {
    static const char* const names[] = {
        result_name<std::remove_cvref_t<std::tuple_element_t<I, R>>>()..., ""};
    static const std::string s = tuple_result_name(names, sizeof...(I));
    return s.c_str();
}

/// The result kind in a signature: "tensor", "scalar", "string", "object", "" (none), or a
/// tuple of them, "(tensor, tensor)".
template <typename R>
const char* result_name() {
    if constexpr (std::is_void_v<R>)
        return "";
    else if constexpr (is_tuple_like<R>::value)
        return tuple_result_name<R>(std::make_index_sequence<std::tuple_size_v<R>>{});
    else if constexpr (is_tensor<R>::value || is_vec<R>::value || is_view<R>::value)
        return "tensor";
    else if constexpr (std::is_convertible_v<R, std::string_view>)
        return "string";
    else if constexpr (is_shared<R>::value)
        return "object";
    else if constexpr (std::is_same_v<R, isthmus_value>)
        return "any";
    else
        return "scalar";
}

} // namespace detail

} // namespace isthmus::plugin
