// Plugin objects from Python: q.native_object (fields, methods, events) and q.native_event.
#include "bindings.hpp"

#include "isthmus/plugin_host.hpp"
#include "native_function.hpp"
#include "plugin_values.hpp"

#include <pybind11/stl.h>

#include <string>
#include <vector>

namespace isthmus::pymod {

void bind_plugin_objects(py::module_& m) {
    py::class_<native_event>(m, "native_event",
                             "An event of a native object: a list of callbacks the plugin fires.")
        .def(
            "add",
            [](const native_event& e, py::function fn) {
                const std::string nm =
                    py::str(py::getattr(fn, "__qualname__", py::str("callable")));
                e.o->add_listener(e.name, python_callable(fn), nm);
            },
            py::arg("callback"), "Adds a callable; the plugin calls it when the event fires.")
        .def(
            "clear", [](const native_event& e) { e.o->clear_listeners(e.name); },
            "Removes every callback.")
        .def("__len__", [](const native_event& e) { return e.o->listener_count(e.name); })
        .def("__iadd__",
             [](native_event& e, py::function fn) {
                 e.o->add_listener(e.name, python_callable(fn));
                 return e;
             })
        .def("__repr__", [](const native_event& e) {
            return "<native event " + e.name + " of " + e.o->to_string() + ", " +
                   std::to_string(e.o->listener_count(e.name)) + " callback(s)>";
        });

    py::class_<native_object>(m, "native_object",
                              "An instance of a plugin object type: fields are attributes, "
                              "methods are callable, events take callbacks (obj.onclick.add(f)).")
        .def("__getattr__",
             [](const native_object& self, const std::string& name) -> py::object {
                 const auto& o = self.o;
                 if (o->has_field(name)) return result_to_py(o->get(name));
                 if (o->has_event(name)) return py::cast(native_event{o, name});
                 if (o->has_method(name)) {
                     return py::cpp_function(
                         [o, name](py::args args) {
                             std::vector<value> vs;
                             for (py::handle a : args) vs.push_back(arg_value(a));
                             return result_to_py(o->call(name, vs));
                         },
                         py::name(name.c_str()));
                 }
                 std::string have;
                 for (const auto& v : {o->fields(), o->methods(), o->events()})
                     for (const auto& n : v) have += (have.empty() ? "" : ", ") + n;
                 throw py::attribute_error("'" + o->kind() + "' object has no attribute '" + name +
                                           "' (it has: " + (have.empty() ? "nothing" : have) + ")");
             })
        .def("__setattr__",
             [](const native_object& self, const std::string& name, py::handle v) {
                 if (!self.o->has_field(name))
                     throw py::attribute_error("'" + self.o->kind() + "' object has no field '" +
                                               name + "'");
                 self.o->set(name, arg_value(v));
             })
        .def("__dir__",
             [](const native_object& self) {
                 py::list l;
                 for (const auto& v : {self.o->fields(), self.o->methods(), self.o->events()})
                     for (const auto& n : v) l.append(n);
                 return l;
             })
        .def_property_readonly("type_name",
                               [](const native_object& self) { return self.o->kind(); })
        .def("__repr__", [](const native_object& self) { return self.o->to_string(); });
    // See Note [runtime-made types refuse __new__].
    refuse_python_new(m.attr("native_object"),
                      "objects come from a plugin type's constructor (module.<Type>(...))");
    refuse_python_new(m.attr("native_event"), "events are attributes of native objects");
}

} // namespace isthmus::pymod
