// Functions across the boundary: pyfunc (Python callables as C++ functions) and py_function.
#pragma once

#include "isthmus/pyvalue/builders.hpp" // none()
#include "isthmus/pyvalue/pyapi_members.hpp"

#include <functional>
#include <string>
#include <utility>

namespace isthmus {

/// The PyQuasar manual's pyfunc: a Python callable usable as a C++ function value. Checks
/// callability up front (type_error names the type), calls like a pyvalue, and converts to a typed
/// std::function (`std::function<double(double)> f = pyfunc(math.attr("cos"));`) that converts
/// arguments with to_py and the result with from_py.
class ISTHMUS_API pyfunction : public pyapi<pyfunction> {
public:
    explicit pyfunction(pyvalue f);
    _object* get() const { return f_.get(); }
    const pyvalue& object() const noexcept { return f_; }

    template <typename R, typename... A>
    operator std::function<R(A...)>() const { // NOLINT: a function value
        pyvalue f = f_;
        return [f](A... args) -> R {
            pyvalue r = f(std::forward<A>(args)...);
            if constexpr (std::is_void_v<R>)
                return;
            else
                return from_py<R>(r);
        };
    }

private:
    pyvalue f_;
};
ISTHMUS_API pyfunction pyfunc(const pyvalue& f);

/// A C++ callable as a Python function: `args` are the positional arguments (a tuple) and
/// `kwargs` the keyword ones (a dict, or empty when there are none). C++ exceptions thrown by
/// `f` become the matching Python exception (isthmus errors by type, others RuntimeError);
/// when that exception comes back into C++ through a pyvalue call, the original C++
/// exception is rethrown (same type and message).
ISTHMUS_API pyvalue
py_callback(std::function<pyvalue(const pyvalue& args, const pyvalue& kwargs)> f,
            std::string name = "isthmus_callback");

/// A typed C++ function as a Python function: arguments converted with from_py, the result
/// with to_py (`py_function([](double x, double y) { return x * y; })`).
template <typename R, typename... A>
pyvalue py_function(std::function<R(A...)> f, std::string name = "isthmus_function") {
    return py_callback(
        [f = std::move(f)](const pyvalue& args, const pyvalue& kwargs) -> pyvalue {
            ISTHMUS_CHECK(kwargs.empty(), type_error, "a C++ function takes no keyword arguments");
            ISTHMUS_CHECK(args.len() == static_cast<int64_t>(sizeof...(A)), type_error,
                          "the C++ function takes ", sizeof...(A), " argument(s), ", args.len(),
                          " given");
            return [&]<std::size_t... I>(std::index_sequence<I...>)->pyvalue {
                if constexpr (std::is_void_v<R>) {
                    f(from_py<std::decay_t<A>>(pyvalue(args[static_cast<int64_t>(I)]))...);
                    return none();
                } else {
                    return to_py(
                        f(from_py<std::decay_t<A>>(pyvalue(args[static_cast<int64_t>(I)]))...));
                }
            }
            (std::index_sequence_for<A...>{});
        },
        std::move(name));
}
template <typename F>
pyvalue py_function(F&& f, std::string name = "isthmus_function") {
    return py_function(std::function(std::forward<F>(f)), std::move(name));
}

} // namespace isthmus
