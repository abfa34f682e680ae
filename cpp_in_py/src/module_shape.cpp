// Module-level shape and indexing functions in NumPy's spelling: q.concatenate, q.stack, q.pad,
// q.reshape, q.take, q.put_along_axis, ...
#include "bindings.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/shape.hpp"

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

namespace isthmus::pymod {

namespace {

// ---- shape ----

std::vector<std::pair<int64_t, int64_t>> pad_widths(py::handle w) {
    // An int (same before/after on every axis), a pair, or one pair per axis.
    auto pair_of = [](py::handle p) -> std::pair<int64_t, int64_t> {
        if (PyIndex_Check(p.ptr())) {
            const int64_t n = int_arg(p, "pad", "pad_width");
            return {n, n};
        }
        const shape_t v = int_list(p, "pad", "pad_width");
        ISTHMUS_CHECK(v.size() == 1 || v.size() == 2, value_error,
                      "pad: each pad_width entry must be an int or a (before, after) pair, got ",
                      v.size(), " numbers");
        return v.size() == 1 ? std::pair{v[0], v[0]} : std::pair{v[0], v[1]};
    };
    if (PyIndex_Check(w.ptr())) return {pair_of(w)};
    ISTHMUS_CHECK(py::isinstance<py::sequence>(w), type_error,
                  "pad: pad_width must be an int, a pair or a sequence of pairs, got ",
                  type_name(w));
    const auto seq = py::reinterpret_borrow<py::sequence>(w);
    bool nested = false;
    for (py::handle x : seq) nested = nested || !PyIndex_Check(x.ptr());
    if (!nested) return {pair_of(w)};
    std::vector<std::pair<int64_t, int64_t>> out;
    for (py::handle x : seq) out.push_back(pair_of(x));
    return out;
}

} // namespace

void bind_module_shape(py::module_& m) {
    // ---- shape ----
    auto concat_fn = [](py::handle seq, int64_t axis) {
        require_init("concatenate");
        const std::vector<tensor> ts = tensor_list(seq, "concatenate");
        native_section nogil;
        return value(isthmus::concat(ts, axis));
    };
    m.def("concatenate", concat_fn, py::arg("arrays"), py::arg("axis") = 0,
          "Joins tensors along an existing axis (dtypes promote).");
    m.def("concat", concat_fn, py::arg("arrays"), py::arg("axis") = 0, "Alias of concatenate.");
    m.def(
        "stack",
        [](py::handle seq, int64_t axis) {
            require_init("stack");
            const std::vector<tensor> ts = tensor_list(seq, "stack");
            native_section nogil;
            return value(isthmus::stack(ts, axis));
        },
        py::arg("arrays"), py::arg("axis") = 0, "Joins same-shape tensors along a new axis.");
    m.def(
        "split",
        [](py::handle a, py::handle sections, int64_t axis) {
            require_init("split");
            const tensor t = tensor_arg(a, "split");
            if (PyIndex_Check(sections.ptr()))
                return tensor_tuple(
                    isthmus::split(t, int_arg(sections, "split", "sections"), axis));
            return tensor_tuple(isthmus::split(t, int_list(sections, "split", "indices"), axis));
        },
        py::arg("a"), py::arg("indices_or_sections"), py::arg("axis") = 0,
        "Splits into equal sections (an int that must divide the axis) or at the given indices;\n"
        "the parts are views.");
    m.def(
        "array_split",
        [](py::handle a, py::handle sections, int64_t axis) {
            require_init("array_split");
            const tensor t = tensor_arg(a, "array_split");
            if (PyIndex_Check(sections.ptr()))
                return tensor_tuple(
                    isthmus::array_split(t, int_arg(sections, "array_split", "sections"), axis));
            return tensor_tuple(
                isthmus::split(t, int_list(sections, "array_split", "indices"), axis));
        },
        py::arg("a"), py::arg("indices_or_sections"), py::arg("axis") = 0,
        "Like split, but the sections need not be equal.");
    m.def(
        "flip",
        [](py::handle a, py::handle axis) {
            require_init("flip");
            const tensor t = tensor_arg(a, "flip");
            if (axis.is_none()) return value(isthmus::flip(t));
            return value(isthmus::flip(t, int_list(axis, "flip", "axis")));
        },
        py::arg("m"), py::arg("axis") = py::none(),
        "Reverses the order of elements along axis (all axes when None); a view.");
    m.def(
        "tile",
        [](py::handle a, py::handle reps) {
            require_init("tile");
            const tensor t = tensor_arg(a, "tile");
            const shape_t r = int_list(reps, "tile", "reps");
            native_section nogil;
            return value(isthmus::tile(t, r));
        },
        py::arg("A"), py::arg("reps"), "Repeats the whole tensor reps[i] times along axis i.");
    m.def(
        "repeat",
        [](py::handle a, py::handle repeats, py::handle axis) {
            require_init("repeat");
            const tensor t = tensor_arg(a, "repeat");
            const std::optional<int64_t> ax = optional_axis(axis, "repeat");
            if (PyIndex_Check(repeats.ptr()) && !is_qvalue(repeats)) {
                const int64_t n = int_arg(repeats, "repeat", "repeats");
                native_section nogil;
                return value(isthmus::repeat(t, n, ax));
            }
            const tensor r = tensor_arg(repeats, "repeat");
            native_section nogil;
            return value(isthmus::repeat(t, r, ax));
        },
        py::arg("a"), py::arg("repeats"), py::arg("axis") = py::none(),
        "Repeats each element `repeats` times (an int or one count per element) along axis\n"
        "(the flattened tensor when None).");
    m.def(
        "pad",
        [](py::handle a, py::handle width, const std::string& mode, py::handle constant) {
            require_init("pad");
            const tensor t = tensor_arg(a, "pad");
            const auto w = pad_widths(width);
            const pad_mode pm = parse_pad_mode(mode);
            const scalar c = scalar_arg(constant, "pad", "constant_values");
            native_section nogil;
            return value(isthmus::pad(t, w, pm, c));
        },
        py::arg("array"), py::arg("pad_width"), py::arg("mode") = "constant",
        py::arg("constant_values") = 0,
        "Pads with `mode` \"constant\", \"edge\", \"reflect\", \"symmetric\" or \"wrap\", as "
        "NumPy.");
    m.def(
        "reshape",
        [](py::handle a, py::handle shape) {
            require_init("reshape");
            const tensor t = tensor_arg(a, "reshape");
            return value(t.reshape(int_list(shape, "reshape", "shape")));
        },
        py::arg("a"), py::arg("shape"),
        "The same elements in a new shape (one size may be -1); a view when the strides allow.");
    m.def(
        "transpose",
        [](py::handle a, py::handle axes) {
            require_init("transpose");
            const tensor t = tensor_arg(a, "transpose");
            if (axes.is_none()) return value(t.t());
            return value(t.permute(int_list(axes, "transpose", "axes")));
        },
        py::arg("a"), py::arg("axes") = py::none(),
        "Reverses (or permutes by `axes`) the dimensions; a view.");
    m.def(
        "squeeze",
        [](py::handle a, py::handle axis) {
            require_init("squeeze");
            const tensor t = tensor_arg(a, "squeeze");
            if (axis.is_none()) return value(t.squeeze());
            shape_t axes = int_list(axis, "squeeze", "axis");
            for (int64_t& x : axes) x = wrap_axis(x, t.dim());
            std::sort(axes.begin(), axes.end(), std::greater<>());
            tensor r = t;
            for (int64_t x : axes) r = r.squeeze(x);
            return value(r);
        },
        py::arg("a"), py::arg("axis") = py::none(),
        "Removes size-1 dimensions (all, or the given ones, which must have size 1); a view.");
    m.def(
        "expand_dims",
        [](py::handle a, int64_t axis) {
            require_init("expand_dims");
            return value(tensor_arg(a, "expand_dims").unsqueeze(axis));
        },
        py::arg("a"), py::arg("axis"), "Inserts a size-1 dimension at axis; a view.");
    m.def(
        "broadcast_to",
        [](py::handle a, py::handle shape) {
            require_init("broadcast_to");
            const tensor t = tensor_arg(a, "broadcast_to");
            return value(t.expand(int_list(shape, "broadcast_to", "shape")));
        },
        py::arg("array"), py::arg("shape"),
        "A read-through view broadcast to `shape` (stride 0 on the expanded axes).");
    m.def(
        "ravel",
        [](py::handle a) {
            require_init("ravel");
            return value(tensor_arg(a, "ravel").flatten());
        },
        py::arg("a"), "The elements as a 1-d tensor (a view when possible).");

    // ---- indexing ----
    m.def(
        "nonzero",
        [](py::handle a) {
            require_init("nonzero");
            const tensor t = tensor_arg(a, "nonzero");
            std::vector<tensor> idx;
            {
                native_section nogil;
                idx = isthmus::nonzero(t);
            }
            return tensor_tuple(std::move(idx));
        },
        py::arg("a"), "A tuple of int64 index tensors, one per axis, of the nonzero elements.");
    m.def(
        "argwhere",
        [](py::handle a) {
            require_init("argwhere");
            const tensor t = tensor_arg(a, "argwhere");
            native_section nogil;
            return value(isthmus::argwhere(t));
        },
        py::arg("a"), "The coordinates of the nonzero elements, shape (count, ndim).");
    m.def(
        "take",
        [](py::handle a, py::handle indices, py::handle axis) {
            require_init("take");
            const tensor t = tensor_arg(a, "take"), i = tensor_arg(indices, "take");
            const std::optional<int64_t> ax = optional_axis(axis, "take");
            native_section nogil;
            return value(isthmus::take(t, i, ax));
        },
        py::arg("a"), py::arg("indices"), py::arg("axis") = py::none(),
        "Elements at `indices` along axis (the flattened tensor when None).");
    m.def(
        "take_along_axis",
        [](py::handle a, py::handle indices, int64_t axis) {
            require_init("take_along_axis");
            const tensor t = tensor_arg(a, "take_along_axis"),
                         i = tensor_arg(indices, "take_along_axis");
            native_section nogil;
            return value(isthmus::take_along_axis(t, i, axis));
        },
        py::arg("arr"), py::arg("indices"), py::arg("axis"),
        "NumPy's take_along_axis (torch's gather).");
    m.def(
        "put_along_axis",
        [](py::handle a, py::handle indices, py::handle values, int64_t axis) {
            require_init("put_along_axis");
            const tensor t = tensor_arg(a, "put_along_axis"),
                         i = tensor_arg(indices, "put_along_axis"),
                         v = tensor_arg(values, "put_along_axis");
            native_section nogil;
            isthmus::put_along_axis(t, i, v, axis);
        },
        py::arg("arr"), py::arg("indices"), py::arg("values"), py::arg("axis"),
        "Writes values into arr at indices along axis, in place (torch's scatter).");
}

} // namespace isthmus::pymod
