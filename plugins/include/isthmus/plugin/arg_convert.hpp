// Arguments of the types every plugin callable takes (numbers, views, vec, ABI tensors and
// values): their conversion and their parameter descriptions, for kernels and functions alike.
#pragma once

#include "isthmus/plugin/base.hpp"

namespace isthmus::plugin {

namespace detail {

template <typename F>
struct fn_traits : fn_traits<decltype(&F::operator())> {};
template <typename R, typename... A>
struct fn_traits<R (*)(A...)> {
    using result = R;
    using args = std::tuple<A...>;
};
template <typename R, typename... A>
struct fn_traits<R(A...)> : fn_traits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct fn_traits<R (C::*)(A...) const> : fn_traits<R (*)(A...)> {};
template <typename C, typename R, typename... A>
struct fn_traits<R (C::*)(A...)> : fn_traits<R (*)(A...)> {};

template <typename T>
struct is_vec : std::false_type {};
template <typename T, int N>
struct is_vec<vec<T, N>> : std::true_type {};
template <typename T>
struct is_view : std::false_type {};
template <typename T, int N, access A>
struct is_view<view<T, N, A>> : std::true_type {};

/// Whether T (without reference and const) is a basic argument type: a number, a view, a vec,
/// an isthmus_tensor or an isthmus_value. Other types (complex numbers, strings, callbacks,
/// objects) are the full layer's (values.hpp), through full_arg and full_param.
template <typename T>
inline constexpr bool is_basic_arg =
    std::is_arithmetic_v<T> || is_view<T>::value || is_vec<T>::value ||
    std::is_same_v<T, isthmus_tensor> || std::is_same_v<T, isthmus_value>;

/// The full layer's conversion of argument `i` to T (values.hpp); an incomplete type in a
/// kernel-only compile, so a parameter type it lacks fails to compile there (Note [kernel-only
/// plugins]).
template <typename T>
struct full_arg;
/// The full layer's parameter description of T (values.hpp), likewise.
template <typename T>
struct full_param;

// Each conversion of a basic argument: `arg` is its position, named in the error (-1: a value
// that is no argument, a callback's result, a field). Out of line: the messages and checks are
// compiled once, in the support object.
ISTHMUS_PLUGIN_SUPPORT_CALL bool arg_bool(const isthmus_value& v, int64_t arg);
/// An integer for dtype code `dtype`: overflow_error when it does not fit (Note [integer
/// parameters]); a uint64 comes back as its bits.
ISTHMUS_PLUGIN_SUPPORT_CALL int64_t arg_integer(const isthmus_value& v, int32_t dtype, int64_t arg);
ISTHMUS_PLUGIN_SUPPORT_CALL double arg_number(const isthmus_value& v, int64_t arg);
/// A tensor argument of any dtype and rank.
ISTHMUS_PLUGIN_SUPPORT_CALL const isthmus_tensor& arg_tensor(const isthmus_value& v, int64_t arg);
/// A tensor argument of dtype code `dtype` and `rank` dimensions, for a view.
ISTHMUS_PLUGIN_SUPPORT_CALL const isthmus_tensor& arg_view(const isthmus_value& v, int32_t dtype,
                                                           int rank, int64_t arg);
/// The `n` elements of a vector argument (a tensor of n elements, at most one dimension).
ISTHMUS_PLUGIN_SUPPORT_CALL void arg_vec(const isthmus_value& v, int n, double* out, int64_t arg);

/// Converts `v` to the basic type T (by value; views alias the tensor).
template <typename T>
T basic_arg(const isthmus_value& v, int64_t arg) {
    if constexpr (std::is_same_v<T, bool>) {
        return arg_bool(v, arg);
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(arg_integer(v, dtype_code<T>::value, arg));
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(arg_number(v, arg));
    } else if constexpr (is_view<T>::value) {
        return view_binding::adopt<T>(
            arg_view(v, dtype_code<typename T::value_type>::value, T::rank, arg));
    } else if constexpr (is_vec<T>::value) {
        constexpr int n = T::size();
        double e[n];
        arg_vec(v, n, e, arg);
        T r{};
        for (int i = 0; i < n; ++i) r[i] = static_cast<typename T::value_type>(e[i]);
        return r;
    } else if constexpr (std::is_same_v<T, isthmus_tensor>) {
        return arg_tensor(v, arg);
    } else {
        static_assert(std::is_same_v<T, isthmus_value>);
        return v;
    }
}

/// Converts argument `i` to parameter type P; a conversion error names the argument.
template <typename P>
std::remove_cvref_t<P> get_arg(const isthmus_value* args, size_t i) {
    using T = std::remove_cvref_t<P>;
    if constexpr (is_basic_arg<T>)
        return basic_arg<T>(args[i], static_cast<int64_t>(i));
    else
        return full_arg<T>::get(args, i);
}

// Note [converted arguments without std::tuple]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A call's converted arguments were a std::make_tuple: instantiating std::tuple over a kernel's
// views (its constructors' constraints: _TupleConstraints, __and_ of is_constructible and
// is_convertible per element) was 26 of the 86 ms that Clang's front end spent on a saxpy kernel
// (-ftime-trace), GCC's alike. They are an aggregate of one slot per argument instead, built from a
// braced list, so the conversions also run left to right (make_tuple's arguments had no order).

template <size_t I, typename T>
struct arg_slot {
    T value;
};
template <typename Seq, typename... T>
struct converted_args;
template <size_t... I, typename... T>
struct converted_args<std::index_sequence<I...>, T...> : arg_slot<I, T>... {};

/// Argument I of a convert_args result.
template <size_t I, typename T>
T& arg_at(arg_slot<I, T>& s) {
    return s.value;
}
template <size_t I, typename T>
const T& arg_at(const arg_slot<I, T>& s) {
    return s.value;
}

// Note [launch checks]
// ~~~~~~~~~~~~~~~~~~~~
// A kernel functor may declare `check_launch(args...) const`, taking the body's parameters less
// the position: the CPU loop calls it for each range it runs and the CUDA launcher before it
// launches, on the converted arguments, before any position runs. What holds for a whole launch
// is checked there rather than at every position: the derived kernels' gradient and tangent
// shapes and their outputs aliasing differentiable inputs (Note [derived kernels] in
// isthmus/plugin/active_view.hpp), which per position cost a derived blur a tenth of its time.
// What it throws is the launch's error, raised before anything is written.

/// Calls f.check_launch(a...) where F declares it (See Note [launch checks]).
template <typename F, typename... A>
void check_launch(const F& f, const A&... a) {
    if constexpr (requires { f.check_launch(a...); }) f.check_launch(a...);
}

/// Converts the arguments to the parameter types of `Tuple` (a type list), left to right.
template <typename Tuple, size_t... I>
auto convert_args(const isthmus_value* args, std::index_sequence<I...>) {
    return converted_args<std::index_sequence<I...>,
                          std::remove_cvref_t<std::tuple_element_t<I, Tuple>>...>{
        {get_arg<std::tuple_element_t<I, Tuple>>(args, I)}...};
}

/// The type names of views by rank and of vec by length, for describe_param.
inline constexpr const char* k_view_type_names[] = {"scalar", "vec", "mat", "cube", "cube{4}"};
inline constexpr const char* k_vec_type_names[] = {"vec0", "vec1", "vec2", "vec3", "vec4"};

/// Describes a parameter type for the host's checks and listings (a constant expression for the
/// basic argument types: See Note [constant parameter tables]).
template <typename P>
constexpr isthmus_param describe_param(const char* name) {
    using T = std::remove_cvref_t<P>;
    isthmus_param p{name, ISTHMUS_PARAM_ANY, ISTHMUS_DT_ANY, -1, 0, 0, "any", nullptr};
    if constexpr (std::is_same_v<T, bool>) {
        p.kind = ISTHMUS_PARAM_BOOL, p.dtype = ISTHMUS_DT_BOOL, p.type_name = "bool";
    } else if constexpr (std::is_integral_v<T>) {
        p.kind = ISTHMUS_PARAM_INT, p.dtype = dtype_code<T>::value, p.type_name = "int";
    } else if constexpr (std::is_floating_point_v<T>) {
        p.kind = ISTHMUS_PARAM_FLOAT, p.dtype = dtype_code<T>::value;
        p.type_name = std::is_same_v<T, float> ? "scalar" : "float64";
    } else if constexpr (is_view<T>::value) {
        using E = typename T::element_type;
        p.kind = ISTHMUS_PARAM_TENSOR;
        p.dtype = dtype_code<std::remove_const_t<E>>::value;
        p.ndim = T::rank;
        p.flags =
            std::is_const_v<E> ? ISTHMUS_PARAM_READ : (ISTHMUS_PARAM_READ | ISTHMUS_PARAM_WRITE);
        p.type_name = T::rank <= 4 ? k_view_type_names[T::rank] : "cube{:}";
    } else if constexpr (is_vec<T>::value) {
        p.kind = ISTHMUS_PARAM_VEC;
        p.dtype = dtype_code<typename T::value_type>::value;
        p.vec_len = T::size();
        p.type_name = T::size() <= 4 ? k_vec_type_names[T::size()] : "vec";
    } else if constexpr (std::is_same_v<T, isthmus_tensor>) {
        p.kind = ISTHMUS_PARAM_TENSOR, p.flags = ISTHMUS_PARAM_READ | ISTHMUS_PARAM_WRITE;
        p.type_name = "cube{:}";
    } else if constexpr (!std::is_same_v<T, isthmus_value>) {
        full_param<T>::describe(p);
    }
    return p;
}

// Note [constant parameter tables]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every registration describes its parameters for the host (isthmus_param: kind, dtype, rank,
// access, type name). Filled in by code at load time, the descriptions were a function per
// callable that the optimiser compiled in every plugin: a tenth of a small kernel's quick build
// (GCC's instructions, cc1plus under callgrind). For the basic argument types they depend on the
// type alone, so they are a constant table per parameter list instead, which the compiler writes
// as data; a list with a full-layer type (a string, a callback, an object, whose description
// reads its registered type at run time) is still described by code.
template <typename A>
struct param_table;
template <typename... P>
struct param_table<std::tuple<P...>> {
    /// Whether the descriptions are constants: all are basic types.
    static constexpr bool constant = (is_basic_arg<std::remove_cvref_t<P>> && ...);
};
/// The constant table itself (used only where param_table says it is one).
template <typename A>
struct constant_params;
template <typename... P>
struct constant_params<std::tuple<P...>> {
    static constexpr isthmus_param value[sizeof...(P) > 0 ? sizeof...(P) : 1] = {
        describe_param<P>(nullptr)...};
};

/// The descriptions of the parameter types of the tuple A: a constant table where all are basic
/// types (See Note [constant parameter tables]), else `out` (room for them all) filled in.
template <typename A>
const isthmus_param* describe_params(isthmus_param* out) {
    if constexpr (param_table<A>::constant) {
        return constant_params<A>::value;
    } else {
        [out]<size_t... I>(std::index_sequence<I...>) {
            ((out[I] = describe_param<std::tuple_element_t<I, A>>(nullptr)), ...);
        }
        (std::make_index_sequence<std::tuple_size_v<A>>{});
        return out;
    }
}

} // namespace detail

} // namespace isthmus::plugin
