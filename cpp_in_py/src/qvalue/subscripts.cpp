// qvalue subscripts with NumPy's rules: A[key] and A[key] = value (Note [Python subscripts]).
#include "qvalue/qvalue.hpp"

#include "isthmus/ops/indexing.hpp"

#include <pybind11/numpy.h>

#include <optional>
#include <vector>

namespace isthmus::pymod {

namespace {

// Note [Python subscripts]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A Python key becomes the core's index_items once, here, and the core applies NumPy's rules
// (Note [NumPy's subscript rules] in core/src/ops/indexing_parse.cpp) for basic and advanced
// indexing alike. The conversion follows NumPy 2's prepare_index item by item:
// - a tuple (or tuple subclass) is one item per entry; anything else, lists included, is one
//   item (NumPy 2: a list is always an index array);
// - None, Ellipsis and slices as they are (huge slice bounds clamp as in Python; a float bound
//   is a TypeError here, where NumPy raises it once the key's structure is checked);
// - Python and NumPy bools are 0-d masks; a qvalue or NumPy array is an index array as it is
//   (a 0-d integer one acts as an integer);
// - anything else with __index__ (int, NumPy integers) is an integer: one outside int64 raises
//   IndexError, as it is out of bounds for any axis (NumPy raises OverflowError for
//   [2**63, 2**64) and IndexError beyond);
// - everything else goes through np.asarray (DLPack producers through DLPack): an empty result
//   is an empty integer array (NumPy's rule for `A[[]]`), and one that is neither integer nor
//   bool raises IndexError.
// An assigned list or tuple converts to the target's dtype directly (np.asarray with it), so
// its numbers are cast once, with NumPy's checks; without index arrays it may have no more
// dimensions than the indexed view (NumPy's depth limit for sequences).

const char* const not_an_index =
    "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
    "boolean arrays are valid indices";

// One bound of a slice, clamped to int64 as Python's slice.indices does; a zero step is left
// for the core to refuse in NumPy's order (Note [NumPy's subscript rules]).
std::optional<int64_t> slice_bound(PyObject* b) {
    if (b == Py_None) return std::nullopt;
    if (!PyIndex_Check(b))
        throw py::type_error("slice indices must be integers or None or have an __index__ method");
    const Py_ssize_t v = PyNumber_AsSsize_t(b, nullptr); // clamps instead of overflowing
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    return static_cast<int64_t>(v);
}

// A Python int as an index item.
index_item integer_item(py::handle n) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
    if (i == -1 && PyErr_Occurred()) throw py::error_already_set();
    ISTHMUS_CHECK(overflow == 0, index_error, "index ", py::str(n).cast<std::string>(),
                  " is out of bounds: an index must fit in int64");
    return index_item(static_cast<int64_t>(i));
}

// The index array an array-like gives (np.asarray or DLPack; NumPy's PyArray_FromAny step).
index_item array_item(py::handle it) {
    tensor x;
    if (is_dlpack_producer(it)) {
        x = tensor_from_dlpack(it, copy_policy::if_needed);
    } else {
        py::object arr = numpy().attr("asarray")(it);
        const auto kind = arr.attr("dtype").attr("kind").cast<std::string>();
        const bool empty = arr.attr("size").cast<int64_t>() == 0;
        ISTHMUS_CHECK(empty || kind == "b" || kind == "i" || kind == "u", index_error,
                      not_an_index);
        x = tensor_from_array(arr, copy_policy::if_needed);
    }
    // Only an ndarray or a qvalue keeps its dtype when empty (`A[[]]` is an empty int index).
    if (x.numel() == 0 && x.dtype() != dtype::int64) x = x.to(dtype::int64);
    ISTHMUS_CHECK(is_integer(x.dtype()) || x.dtype() == dtype::bool_, index_error, not_an_index);
    return index_item(std::move(x));
}

bool is_numpy_bool(py::handle h) {
    static py::object* bool_type = new py::object(numpy().attr("bool_"));
    return PyObject_TypeCheck(h.ptr(), reinterpret_cast<PyTypeObject*>(bool_type->ptr()));
}

index_item index_item_from_py(py::handle it) {
    PyObject* o = it.ptr();
    if (o == Py_None) return index_item(newaxis);
    if (o == Py_Ellipsis) return index_item(ellipsis);
    if (PyBool_Check(o)) return index_item(o == Py_True);
    if (PyLong_Check(o)) return integer_item(it);
    if (PySlice_Check(o)) {
        const auto* sl = reinterpret_cast<PySliceObject*>(o);
        return index_item(
            index_slice(slice_bound(sl->start), slice_bound(sl->stop), slice_bound(sl->step)));
    }
    if (const value* p = qvalue_ptr(it)) {
        if (p->is_tensor()) return index_item(p->as_tensor());
        ISTHMUS_CHECK(p->is_scalar(), index_error, not_an_index, ", got a ", p->kind_name(),
                      " value");
        const scalar& s = p->as_scalar();
        if (s.type() == dtype::bool_) return index_item(s.to<bool>());
        ISTHMUS_CHECK(is_integer(s.type()), index_error, not_an_index);
        if (s.type() == dtype::uint64) return index_item(s.to<uint64_t>());
        return index_item(s.to<int64_t>());
    }
    if (py::isinstance<py::array>(it)) {
        const auto kind = it.attr("dtype").attr("kind").cast<std::string>();
        ISTHMUS_CHECK(kind == "b" || kind == "i" || kind == "u", index_error,
                      "arrays used as indices must be of integer (or boolean) type, got ",
                      py::str(it.attr("dtype")).cast<std::string>());
        return index_item(tensor_from_array(it, copy_policy::if_needed));
    }
    if (is_numpy_bool(it)) return index_item(PyObject_IsTrue(o) == 1);
    if (PyIndex_Check(o)) { // NumPy integers and anything else with __index__
        auto n = py::reinterpret_steal<py::object>(PyNumber_Index(o));
        if (n) return integer_item(n);
        PyErr_Clear(); // not a single integer after all (a torch tensor of many elements)
    }
    return array_item(it);
}

// The index items of a key (Note [Python subscripts]).
std::vector<index_item> index_items(py::handle key) {
    std::vector<index_item> items;
    if (PyTuple_Check(key.ptr())) {
        items.reserve(static_cast<size_t>(PyTuple_GET_SIZE(key.ptr())));
        bool ellipsis_seen = false;
        for (py::handle it : py::reinterpret_borrow<py::tuple>(key)) {
            // NumPy stops at a second ellipsis, before converting the items after it.
            if (it.ptr() == Py_Ellipsis) {
                ISTHMUS_CHECK(!ellipsis_seen, index_error,
                              "an index can only have a single ellipsis ('...')");
                ellipsis_seen = true;
            }
            items.push_back(index_item_from_py(it));
        }
    } else {
        items.push_back(index_item_from_py(key));
    }
    return items;
}

// Whether an item is an index array or a mask: advanced indexing, a copy (work worth
// releasing the GIL for).
bool has_index_arrays(const std::vector<index_item>& items) {
    for (const index_item& it : items)
        if (it.type() == index_item::kind::tensor &&
            (it.tensor().dim() > 0 || it.tensor().dtype() == dtype::bool_))
            return true;
    return false;
}

// The value assigned through a subscript (Note [Python subscripts]). The key's own errors
// come first, as in NumPy: a value that does not convert raises only for a valid key.
value assigned_through(const tensor& t, const std::vector<index_item>& items, py::handle item) {
    if (!(PyList_Check(item.ptr()) || PyTuple_Check(item.ptr())) || t.dtype() == dtype::bfloat16) {
        try {
            return assigned_value(item, t.dtype());
        } catch (...) {
            (void)index_shape(t, items);
            throw;
        }
    }
    const auto depth = static_cast<int64_t>(index_shape(t, items).size());
    const bool limited = !has_index_arrays(items);
    auto check_depth = [&](int64_t ndim) {
        ISTHMUS_CHECK(!limited || ndim <= depth, value_error,
                      "setting an array element with a sequence. The requested array would "
                      "exceed the maximum number of dimension of ",
                      depth);
    };
    py::object arr;
    try {
        arr = numpy().attr("asarray")(item, numpy_dtype(t.dtype()));
    } catch (py::error_already_set&) {
        // NumPy finds the shape before it converts the numbers: too deep wins.
        if (limited) {
            int64_t ndim = 0;
            try {
                ndim = numpy().attr("ndim")(item).cast<int64_t>();
            } catch (py::error_already_set&) {
            }
            check_depth(ndim);
        }
        throw;
    }
    check_depth(arr.attr("ndim").cast<int64_t>());
    return value(tensor_from_array(arr, copy_policy::if_needed));
}

} // namespace

py::object tensor_getitem(const tensor& t, py::handle key) {
    const std::vector<index_item> items = index_items(key);
    tensor r;
    if (has_index_arrays(items)) {
        native_section nogil;
        r = index(t, items);
    } else {
        r = index(t, items); // a view: cheap, no reason to release the GIL
    }
    // All integers, one per dimension: a scalar, as NumPy.
    return result_out(std::move(r), is_full_integer_index(items, t.dim())
                                        ? result_form::scalar_if_0d
                                        : result_form::tensor);
}

void tensor_setitem(const tensor& t, py::handle key, py::handle item) {
    const std::vector<index_item> items = index_items(key);
    const value src = assigned_through(t, items, item);
    ISTHMUS_CHECK(src.is_scalar() || src.is_tensor(), type_error,
                  "index assignment needs a number or a tensor, got a ", src.kind_name());
    native_section nogil;
    if (src.is_scalar())
        index_put(t, items, src.as_scalar());
    else
        index_put(t, items, src.as_tensor());
}

} // namespace isthmus::pymod
