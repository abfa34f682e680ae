// The plugin author layer's host callables and events, and values between C++ and the ABI.
#pragma once

#include "isthmus/plugin/arg_convert.hpp"
#include "isthmus/plugin/view.hpp"

namespace isthmus::plugin {

// ---- host callables and events -----------------------------------------------------------

/// An owned host callable (e.g. a Python function): call it with values, release on drop.
class callback {
public:
    callback() = default;
    explicit callback(isthmus_callback cb) : cb_(new isthmus_callback(cb), &drop) {}
    explicit operator bool() const { return cb_ != nullptr; }
    /// Calls the host function with already-marshalled arguments; throws the host's error.
    void invoke(const isthmus_value* args, int32_t nargs, isthmus_value* result) const;
    /// Calls it with C++ arguments and converts the result (see the definition below).
    template <typename R = void, typename... A>
    R call(const A&... args) const;

private:
    static void drop(isthmus_callback* cb) {
        if (cb->release) cb->release(cb->data);
        delete cb;
    }
    std::shared_ptr<isthmus_callback> cb_;
};

namespace detail {
template <typename T>
isthmus_value to_abi(const T& v);
} // namespace detail

/// A list of host callbacks an object type fires (Quasar's events: `button.onclick.add(f)`).
/// Callbacks receive the arguments of fire() (numbers, bools, strings).
template <typename... Args>
class event {
public:
    void add(callback cb) { cbs_.push_back(std::move(cb)); }
    void clear() { cbs_.clear(); }
    size_t size() const { return cbs_.size(); }
    /// Calls every callback in order; the first error stops and propagates as an exception.
    void fire(const Args&... args) const {
        isthmus_value vs[sizeof...(Args) > 0 ? sizeof...(Args) : 1] = {detail::to_abi(args)...};
        for (const callback& cb : std::vector<callback>(cbs_)) {
            isthmus_value r{};
            cb.invoke(vs, static_cast<int32_t>(sizeof...(Args)), &r);
        }
    }

private:
    std::vector<callback> cbs_;
};

namespace detail {

// ---- value conversion --------------------------------------------------------------------

template <typename T>
struct is_tensor : std::false_type {};
template <typename T, int N>
struct is_tensor<tensor<T, N>> : std::true_type {};
template <typename T>
struct is_complex : std::false_type {};
template <typename T>
struct is_complex<std::complex<T>> : std::true_type {};
template <typename T>
struct is_shared : std::false_type {};
template <typename T>
struct is_shared<std::shared_ptr<T>> : std::true_type {};
/// std::tuple and std::pair: several results (Note [tuple results in the ABI]).
template <typename T>
struct is_tuple_like : std::false_type {};
template <typename... E>
struct is_tuple_like<std::tuple<E...>> : std::true_type {};
template <typename A, typename B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};

/// Per object type T: its descriptor, once registered.
template <typename T>
struct type_slot {
    static inline const isthmus_type* desc = nullptr;
};

/// "int", "tensor": an ABI value kind for messages.
ISTHMUS_PLUGIN_SUPPORT const char* kind_name(int32_t k);
/// Throws type_error "expected <expected>, got <v's kind>".
[[noreturn]] ISTHMUS_PLUGIN_SUPPORT void bad_arg(const char* expected, const isthmus_value& v);
/// Rethrows `e`, a conversion error of argument `i`, with the argument named in front.
[[noreturn]] ISTHMUS_PLUGIN_SUPPORT void rethrow_for_arg(const error& e, size_t i);
/// A host tuple of `n` values, each none, for the running call (isthmus_host.new_tuple); throws
/// an error naming the missing slot when the host predates it (Note [tuple results in the ABI]).
ISTHMUS_PLUGIN_SUPPORT_CALL isthmus_value new_tuple(int64_t n);

template <typename Tuple, typename Convert, size_t... I>
isthmus_value tuple_to_abi(const Tuple& r, Convert convert, std::index_sequence<I...>) {
    isthmus_value v = new_tuple(static_cast<int64_t>(sizeof...(I)));
    ((v.u.tup.items[I] = convert(std::get<I>(r))), ...);
    (void)r, (void)convert; // unused for an empty tuple
    return v;
}

/// The tuple `r` (std::tuple or std::pair) as a host tuple, each element converted by
/// `convert` (to_abi, or result_to_abi for a function's result).
template <typename Tuple, typename Convert>
isthmus_value tuple_to_abi(const Tuple& r, Convert convert) {
    return tuple_to_abi(r, convert, std::make_index_sequence<std::tuple_size_v<Tuple>>{});
}

/// Converts one value to the C++ parameter type P (by value; views alias the tensor): the basic
/// types through basic_arg (arg_convert.hpp), the others here.
template <typename P>
struct arg_caster {
    using T = std::remove_cvref_t<P>;
    static T get(const isthmus_value& v) {
        if constexpr (is_basic_arg<T>) {
            return basic_arg<T>(v, -1);
        } else if constexpr (is_complex<T>::value) {
            if (v.kind == ISTHMUS_VALUE_COMPLEX) return T(v.u.c[0], v.u.c[1]);
            return T(static_cast<typename T::value_type>(arg_number(v, -1)));
        } else if constexpr (std::is_same_v<T, std::string> ||
                             std::is_same_v<T, std::string_view>) {
            if (v.kind != ISTHMUS_VALUE_STRING) bad_arg("a string", v);
            return T(v.u.s.data, static_cast<size_t>(v.u.s.size));
        } else if constexpr (std::is_same_v<T, callback>) {
            if (v.kind != ISTHMUS_VALUE_CALLBACK) bad_arg("a callable", v);
            return callback(v.u.cb);
        } else if constexpr (is_shared<T>::value) {
            using U = typename T::element_type;
            if (v.kind != ISTHMUS_VALUE_OBJECT) bad_arg("an object", v);
            if (v.u.o.type != type_slot<U>::desc)
                throw type_error(cat("expected an object of type ", type_slot<U>::desc->name,
                                     ", got one of type ", v.u.o.type ? v.u.o.type->name : "?"));
            return *static_cast<std::shared_ptr<U>*>(v.u.o.instance);
        } else {
            static_assert(sizeof(T) == 0, "isthmus::plugin: unsupported parameter type");
        }
    }
};

/// Argument `i` of a type beyond the basic ones (See get_arg in arg_convert.hpp); a conversion
/// error names the argument.
template <typename T>
struct full_arg {
    static T get(const isthmus_value* args, size_t i) {
        try {
            return arg_caster<T>::get(args[i]);
        } catch (const error& e) {
            rethrow_for_arg(e, i);
        }
    }
};

/// The description of a parameter type beyond the basic ones (See describe_param in
/// arg_convert.hpp); other types are "any".
template <typename T>
struct full_param {
    static void describe(isthmus_param& p) {
        if constexpr (is_complex<T>::value) {
            p.kind = ISTHMUS_PARAM_COMPLEX, p.dtype = dtype_code<T>::value;
            p.type_name = "cscalar";
        } else if constexpr (std::is_same_v<T, std::string> ||
                             std::is_same_v<T, std::string_view>) {
            p.kind = ISTHMUS_PARAM_STRING, p.type_name = "string";
        } else if constexpr (std::is_same_v<T, callback>) {
            p.kind = ISTHMUS_PARAM_CALLBACK, p.type_name = "function";
        } else if constexpr (is_shared<T>::value) {
            p.kind = ISTHMUS_PARAM_OBJECT, p.type = type_slot<typename T::element_type>::desc;
            p.type_name = p.type ? p.type->name : "object";
        }
    }
};

/// Converts a C++ result to an ABI value (tensors and strings through the host).
template <typename T>
isthmus_value to_abi(const T& r) {
    isthmus_value v{};
    v.dtype = ISTHMUS_DT_ANY;
    if constexpr (std::is_same_v<T, bool>) {
        v.kind = ISTHMUS_VALUE_BOOL, v.dtype = ISTHMUS_DT_BOOL, v.u.i = r ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
        v.kind = ISTHMUS_VALUE_INT, v.dtype = dtype_code<T>::value, v.u.i = static_cast<int64_t>(r);
    } else if constexpr (std::is_floating_point_v<T>) {
        v.kind = ISTHMUS_VALUE_FLOAT, v.dtype = dtype_code<T>::value, v.u.f = r;
    } else if constexpr (is_complex<T>::value) {
        v.kind = ISTHMUS_VALUE_COMPLEX, v.dtype = dtype_code<T>::value;
        v.u.c[0] = r.real(), v.u.c[1] = r.imag();
    } else if constexpr (std::is_convertible_v<T, std::string_view>) {
        const std::string_view s(r);
        isthmus_call* c = current_call();
        if (c->host->new_string(c, s.data(), static_cast<int64_t>(s.size()), &v) != 0)
            throw error("the host could not allocate a string");
    } else if constexpr (is_tensor<T>::value) {
        v = r.raw();
    } else if constexpr (is_view<T>::value) {
        v.kind = ISTHMUS_VALUE_TENSOR, v.dtype = dtype_code<typename T::value_type>::value;
        v.u.t = r.abi();
    } else if constexpr (std::is_same_v<T, isthmus_value>) {
        v = r;
    } else if constexpr (is_vec<T>::value) {
        using E = std::remove_cvref_t<decltype(r[0])>;
        tensor<E, 1> t({static_cast<int64_t>(T::size())});
        for (int i = 0; i < T::size(); ++i) t(i) = r[i];
        v = t.raw();
    } else if constexpr (is_shared<T>::value) {
        using U = typename T::element_type;
        if (!type_slot<U>::desc) throw error("returning an object of an unregistered type");
        if (!r) return v; // none
        v.kind = ISTHMUS_VALUE_OBJECT;
        v.u.o.instance = new std::shared_ptr<U>(r);
        v.u.o.type = type_slot<U>::desc;
    } else if constexpr (is_tuple_like<T>::value) {
        v = tuple_to_abi(r, [](const auto& e) { return to_abi(e); });
    } else {
        static_assert(sizeof(T) == 0,
                      "isthmus::plugin: unsupported result type (numbers, strings, tensors, "
                      "views, vec, objects, or a std::tuple / std::pair of them)");
    }
    return v;
}

} // namespace detail

} // namespace isthmus::plugin
