// dtypes across the Python boundary: dtype arguments, NumPy dtypes, buffer format strings.
#include "boundary/dtypes.hpp"

#include "boundary/conversions.hpp"
#include "boundary/qvalue_handle.hpp"

#include "isthmus/error.hpp"

#include <pybind11/numpy.h>

#include <string>

namespace isthmus::boundary {

py::module_& numpy() {
    // Note [leaked module handles]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // Kept for the process's life (never destroyed at exit, when the interpreter may already be
    // gone).
    static py::module_* np = new py::module_(py::module_::import("numpy"));
    return *np;
}

dtype dtype_from_numpy(const py::handle& np_dtype) {
    const auto d = py::reinterpret_borrow<py::dtype>(np_dtype);
    const char kind = d.kind();
    const auto size = d.itemsize();
    switch (kind) {
    case 'b':
        if (size == 1) return dtype::bool_;
        break;
    case 'i':
        if (size == 1) return dtype::int8;
        if (size == 2) return dtype::int16;
        if (size == 4) return dtype::int32;
        if (size == 8) return dtype::int64;
        break;
    case 'u':
        if (size == 1) return dtype::uint8;
        if (size == 2) return dtype::uint16;
        if (size == 4) return dtype::uint32;
        if (size == 8) return dtype::uint64;
        break;
    case 'f':
        if (size == 2) return dtype::float16;
        if (size == 4) return dtype::float32;
        if (size == 8) return dtype::float64;
        break;
    case 'c':
        if (size == 8) return dtype::complex64;
        if (size == 16) return dtype::complex128;
        break;
    default:
        break;
    }
    ISTHMUS_THROW(type_error, "NumPy dtype ", py::str(np_dtype).cast<std::string>(),
                  " has no isthmus equivalent (supported: bool, int8..int64, uint8..uint64, "
                  "float16, float32, float64, complex64, complex128)");
}

dtype dtype_from_py(py::handle obj) {
    if (py::isinstance<py::str>(obj)) {
        const std::string s = text_from_py(obj, "dtype", "the dtype name"); // no lone surrogates
        try {
            return parse_dtype(s);
        } catch (const type_error& e) {
            // Not an isthmus name: NumPy's spellings ("f4", "<i8", "complex") are accepted too.
            py::object d;
            try {
                d = numpy().attr("dtype")(obj);
            } catch (py::error_already_set&) {
                throw type_error(e.what());
            }
            return dtype_from_numpy(d);
        }
    }
    if (py::isinstance<py::dtype>(obj)) return dtype_from_numpy(obj);
    py::object d;
    try {
        d = numpy().attr("dtype")(obj);
    } catch (py::error_already_set&) {
        ISTHMUS_THROW(type_error, "not a dtype: ", py::repr(obj).cast<std::string>(),
                      " (expected a dtype name such as \"float32\", a numpy.dtype or a type)");
    }
    return dtype_from_numpy(d);
}

std::optional<dtype> optional_dtype(py::handle obj) {
    if (obj.is_none()) return std::nullopt;
    return dtype_from_py(obj);
}

py::object numpy_dtype(dtype dt) {
    ISTHMUS_CHECK(dt != dtype::bfloat16, type_error,
                  "bfloat16 has no NumPy dtype; convert first, e.g. A.astype(\"float32\")");
    static py::object* cache[dtype_count] = {};
    auto& slot = cache[static_cast<int>(dt)];
    if (!slot) slot = new py::object(numpy().attr("dtype")(std::string(name(dt))));
    return *slot;
}

py::object dtype_attr(dtype dt) {
    if (dt == dtype::bfloat16) return py::str("bfloat16");
    return numpy_dtype(dt);
}

const char* buffer_format(dtype dt) {
    switch (dt) {
    case dtype::bool_:
        return "?";
    case dtype::int8:
        return "b";
    case dtype::int16:
        return "h";
    case dtype::int32:
        return "i";
    case dtype::int64:
        return sizeof(long) == 8 ? "l" : "q";
    case dtype::uint8:
        return "B";
    case dtype::uint16:
        return "H";
    case dtype::uint32:
        return "I";
    case dtype::uint64:
        return sizeof(long) == 8 ? "L" : "Q";
    case dtype::float16:
        return "e";
    case dtype::float32:
        return "f";
    case dtype::float64:
        return "d";
    case dtype::complex64:
        return "Zf";
    case dtype::complex128:
        return "Zd";
    case dtype::bfloat16:
        break;
    }
    ISTHMUS_THROW(type_error,
                  "bfloat16 tensors cannot be exported to NumPy (NumPy has no bfloat16 dtype); "
                  "convert first, e.g. A.astype(\"float32\")");
}

} // namespace isthmus::boundary
