// The module's error setup: the boundary's translation registered with pybind11, and a test hook.
#include "bindings.hpp"

namespace isthmus::pymod {

void bind_errors(py::module_& m) {
    register_error_translator(); // Note [error mapping] in py_boundary/src/errors.cpp

    // Test hook: raises the isthmus error named `kind` with `message` (tests/python checks the
    // mapping of every type through it).
    m.def(
        "_raise_error",
        [](const std::string& kind, const std::string& message) {
            if (kind == "value_error") throw value_error(message);
            if (kind == "type_error") throw type_error(message);
            if (kind == "index_error") throw index_error(message);
            if (kind == "memory_error") throw memory_error(message);
            if (kind == "overflow_error") throw overflow_error(message);
            if (kind == "not_implemented_error") throw not_implemented_error(message);
            if (kind == "runtime_error") throw runtime_error(message);
            if (kind == "internal_error") throw internal_error(message);
            if (kind == "error") throw error(message);
            if (kind == "interrupted") throw interrupted(message);
            throw value_error("_raise_error: unknown kind \"" + kind + "\"");
        },
        py::arg("kind"), py::arg("message"));
}

} // namespace isthmus::pymod
