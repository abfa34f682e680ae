// pyvalue's primitives: the exported calls behind every pyapi member (pyvalue.cpp), the GIL
// scope of the inline templates, and the operator and built-in type codes they take.
#pragma once

#include "isthmus/export.hpp"
#include "isthmus/python.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace isthmus {

class pyvalue;

namespace detail {

struct call_arg;

// Each primitive takes the GIL itself. incref / decref: isthmus/python_ref.hpp.

/// RAII GIL holder used by the inline templates (one acquisition for a whole call: the
/// conversions, the call and the argument references it drops).
class gil_scope {
public:
    gil_scope() : t_(gil_ensure()) {}
    ~gil_scope() {
        if (t_.state >= 0) gil_release(t_);
    }
    gil_scope(const gil_scope&) = delete;
    gil_scope& operator=(const gil_scope&) = delete;

private:
    gil_token t_;
};

/// Python operators, in the order of the table in pyvalue.cpp.
enum class binop : uint8_t {
    add,
    sub,
    mul,
    truediv,
    floordiv,
    mod,
    pow,
    matmul,
    lshift,
    rshift,
    and_,
    or_,
    xor_
};
enum class unop : uint8_t { neg, pos, invert, not_, abs };
enum class cmpop : uint8_t { lt, le, eq, ne, gt, ge }; // Py_LT .. Py_GE

/// The built-in types pyapi's type checks (is_int, is_str, ...) ask about.
enum class builtin_type : uint8_t { int_, float_, bool_, str, bytes, list, tuple, dict, callable };

/// Calls `f` (takes the GIL itself; the arguments' own conversions need it taken before).
ISTHMUS_API pyvalue call(_object* f, const call_arg* args, std::size_t n);
/// Calls `f` without arguments (takes the GIL itself).
ISTHMUS_API pyvalue call0(_object* f);
ISTHMUS_API pyvalue getattr(_object* o, std::string_view name);
ISTHMUS_API bool hasattr(_object* o, std::string_view name);
ISTHMUS_API pyvalue getitem(_object* o, _object* key);
ISTHMUS_API void delitem(_object* o, _object* key);
ISTHMUS_API pyvalue binary(binop op, _object* a, _object* b);
ISTHMUS_API pyvalue inplace(binop op, _object* a, _object* b);
ISTHMUS_API pyvalue unary(unop op, _object* a);
ISTHMUS_API pyvalue compare(cmpop op, _object* a, _object* b);
ISTHMUS_API int64_t len(_object* o);
ISTHMUS_API std::string str(_object* o);
ISTHMUS_API std::string repr(_object* o);
ISTHMUS_API bool truthy(_object* o);
ISTHMUS_API bool is_none(_object* o);
ISTHMUS_API bool isinstance(_object* o, _object* type);
ISTHMUS_API pyvalue type(_object* o);
ISTHMUS_API std::string type_name(_object* o);
/// True when `o` is an instance of the built-in type `kind` (subclasses count, bool is not an
/// int here).
ISTHMUS_API bool check_type(_object* o, builtin_type kind);
ISTHMUS_API int64_t hash(_object* o);
ISTHMUS_API pyvalue enter(_object* o);
ISTHMUS_API void exit(_object* o);
ISTHMUS_API pyvalue iter(_object* o);
/// The next item of iterator `it`, or an empty pyvalue at the end.
ISTHMUS_API pyvalue next(_object* it);

} // namespace detail

} // namespace isthmus
