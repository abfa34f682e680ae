// Module-level ops in NumPy's spelling: q.exp(A), q.add(A, B), q.where, q.sum, q.concat, ...
#include "bindings.hpp"
#include "qvalue/qvalue.hpp"

#include "isthmus/ops/creation.hpp"
#include "isthmus/ops/fused.hpp"
#include "isthmus/ops/indexing.hpp"
#include "isthmus/ops/linalg.hpp"
#include "isthmus/ops/shape.hpp"
#include "isthmus/ops/sorting.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace isthmus::pymod {

// Note [module functions]
// ~~~~~~~~~~~~~~~~~~~~~~~
// Every function takes any array-like where a tensor goes (a qvalue, a NumPy array or scalar, a
// Python number or (nested) list, later torch tensors through asvalue), shares arrays without
// copying where the layout allows, and returns qvalues. Elementwise functions follow the operators
// exactly (weak Python scalars, NumPy promotion); a 0-d result of scalar inputs comes back as a
// scalar qvalue, as NumPy returns its scalars. Names are NumPy's, with the common aliases
// (arcsin/asin, concatenate/concat, clip/clamp).

tensor tensor_arg(py::handle obj, const char* fn) {
    return tensor_in(obj, {copy_policy::if_needed, std::nullopt, fn}); // Note [inbound rule]
}

std::vector<tensor> tensor_list(py::handle seq, const char* fn) {
    ISTHMUS_CHECK(py::isinstance<py::sequence>(seq) && !py::isinstance<py::str>(seq) &&
                      !is_qvalue(seq),
                  type_error, fn, ": expected a sequence of array-likes, got ", type_name(seq));
    std::vector<tensor> ts;
    for (py::handle item : seq) ts.push_back(tensor_arg(item, fn));
    return ts;
}

std::optional<int64_t> optional_axis(py::handle axis, const char* fn) {
    if (axis.is_none()) return std::nullopt;
    return int64_from_py(axis, fn, "axis (an int or None)");
}

int64_t int_arg(py::handle v, const char* fn, const char* what) {
    return int64_from_py(v, fn, what);
}

py::object tensor_result(tensor t) {
    return result_out(std::move(t), result_form::tensor);
}

py::tuple tensor_tuple(std::vector<tensor> ts) {
    py::tuple out(ts.size());
    for (size_t i = 0; i < ts.size(); ++i) out[i] = tensor_result(std::move(ts[i]));
    return out;
}

namespace {

// ---- elementwise ----

// Note [functions from the op table]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The elementwise functions are the rows of the op table (isthmus/ops/op_table.hpp): the first
// Python name is NumPy's, the others are aliases whose docstring says so, and q._op_table() hands
// the rows to the tests and tools.

struct unary_row {
    unary_op op;
    const char* rule;
    const char* python;
    const char* doc;
};
struct binary_row {
    binary_op op;
    const char* rule;
    const char* on_bool;
    const char* python;
    const char* doc;
};

#define ISTHMUS_UNARY_ROW(n, r, py, doc) {unary_op::n, #r, py, doc},
constexpr unary_row unary_rows[] = {ISTHMUS_UNARY_OPS(ISTHMUS_UNARY_ROW)};
constexpr unary_row unary_part_rows[] = {ISTHMUS_UNARY_PART_OPS(ISTHMUS_UNARY_ROW)};
#undef ISTHMUS_UNARY_ROW
static_assert(unary_part_rows[0].op == unary_op::real && unary_part_rows[1].op == unary_op::imag);
#define ISTHMUS_BINARY_ROW(n, r, b, py, doc) {binary_op::n, #r, #b, py, doc},
constexpr binary_row binary_rows[] = {ISTHMUS_BINARY_OPS(ISTHMUS_BINARY_ROW)};
#undef ISTHMUS_BINARY_ROW

// The space-separated names of a row's python column.
std::vector<std::string> python_names(const char* column) {
    std::vector<std::string> out;
    std::string cur;
    for (const char* c = column;; ++c) {
        if (*c == ' ' || *c == '\0') {
            if (!cur.empty()) out.push_back(std::move(cur));
            cur.clear();
            if (*c == '\0') break;
        } else {
            cur += *c;
        }
    }
    return out;
}

// The docstring of Python name `i` of a row: the doc, plus "(alias of X)" for aliases.
std::string python_doc(const char* doc, const std::vector<std::string>& names, size_t i) {
    std::string d = doc;
    if (i == 0) return d;
    if (!d.empty() && d.back() == '.') d.pop_back();
    return d + " (alias of " + names[0] + ").";
}

py::dict row_dict(std::string_view name, int arity, const char* rule, const char* python,
                  const char* doc) {
    py::dict d;
    d["name"] = std::string(name);
    d["arity"] = arity;
    d["rule"] = rule;
    py::list names;
    for (const std::string& n : python_names(python)) names.append(n);
    d["python"] = names;
    d["doc"] = doc;
    return d;
}

// q._op_table(): every row, in the table's order (Note [functions from the op table]).
py::list op_table_rows() {
    py::list out;
    for (const unary_row& r : unary_rows) {
        py::dict d = row_dict(name(r.op), 1, r.rule, r.python, r.doc);
        d["view"] = false;
        out.append(d);
    }
    for (const unary_row& r : unary_part_rows) {
        py::dict d = row_dict(name(r.op), 1, r.rule, r.python, r.doc);
        d["view"] = true; // q.real and q.imag are bound by hand: they return views
        out.append(d);
    }
    for (const binary_row& r : binary_rows) {
        py::dict d = row_dict(name(r.op), 2, r.rule, r.python, r.doc);
        d["on_bool"] = r.on_bool;
        out.append(d);
    }
    return out;
}

py::object binary_function(binary_op op, const char* fn, py::handle a, py::handle b) {
    py::object r = apply_binary(op, a, b);
    if (r.is(not_implemented()))
        ISTHMUS_THROW(type_error, fn, ": unsupported operand types '", type_name(a), "' and '",
                      type_name(b), "'; expected array-likes or numbers");
    return r;
}

py::object unary_function(unary_op op, const char* fn, py::handle a) {
    const value v = asvalue(a);
    ISTHMUS_CHECK(v.is_scalar() || v.is_tensor(), type_error, fn,
                  ": expected an array-like or a number, got ", type_name(a));
    return apply_unary(op, v);
}

py::object where_function(py::handle cond, py::handle a, py::handle b) {
    require_init("where");
    const tensor c = tensor_arg(cond, "where");
    if (a.is_none() && b.is_none()) {
        std::vector<tensor> idx;
        {
            native_section nogil;
            idx = nonzero(c);
        }
        return tensor_tuple(std::move(idx));
    }
    ISTHMUS_CHECK(!a.is_none() && !b.is_none(), type_error,
                  "where: give both x and y, or neither (where(cond) is nonzero(cond))");
    operand x, y;
    ISTHMUS_CHECK(to_operand(a, x), type_error, "where: x must be an array-like or a number, got ",
                  type_name(a));
    ISTHMUS_CHECK(to_operand(b, y), type_error, "where: y must be an array-like or a number, got ",
                  type_name(b));
    tensor r;
    {
        native_section nogil;
        if (x.is_scalar && y.is_scalar)
            r = where(c, x.s, y.s);
        else if (x.is_scalar)
            r = where(c, x.s, y.t());
        else if (y.is_scalar)
            r = where(c, x.t(), y.s);
        else
            r = where(c, x.t(), y.t());
    }
    return tensor_result(std::move(r));
}

py::object clip_function(py::handle a, py::handle lo, py::handle hi) {
    require_init("clip");
    const value va = asvalue(a);
    ISTHMUS_CHECK(va.is_scalar() || va.is_tensor(), type_error,
                  "clip: expected an array-like or a number, got ", type_name(a));
    ISTHMUS_CHECK(!lo.is_none() || !hi.is_none(), value_error,
                  "clip: give at least one of the bounds a_min and a_max");
    if (lo.is_none()) return binary_function(binary_op::minimum, "clip", qvalue_of(va), hi);
    if (hi.is_none()) return binary_function(binary_op::maximum, "clip", qvalue_of(va), lo);
    operand l, h;
    ISTHMUS_CHECK(to_operand(lo, l), type_error, "clip: a_min must be an array-like or a number");
    ISTHMUS_CHECK(to_operand(hi, h), type_error, "clip: a_max must be an array-like or a number");
    const tensor t = va.is_scalar() ? va.as_scalar().to_tensor() : va.as_tensor();
    tensor r;
    {
        native_section nogil;
        r = l.is_scalar && h.is_scalar
                ? clamp(t, l.s, h.s)
                : clamp(t, l.as_tensor_beside(t.dtype()), h.as_tensor_beside(t.dtype()));
    }
    return wrap_result(std::move(r), va.is_scalar() && l.is_scalar && h.is_scalar);
}

// ---- reductions ----

using reduce_fn = tensor (*)(const tensor&, const reduce_axes&, bool);

py::object reduce_function(reduce_fn fn, const char* name, py::handle a, py::handle axis,
                           bool keepdims) {
    require_init(name);
    const tensor t = tensor_arg(a, name);
    const reduce_axes axes = axes_from_py(axis);
    tensor r;
    {
        native_section nogil;
        r = fn(t, axes, keepdims);
    }
    return reduced(std::move(r));
}

template <tensor (*Flat)(const tensor&), tensor (*Axis)(const tensor&, int64_t)>
py::object scan_function(const char* name, py::handle a, py::handle axis) {
    require_init(name);
    const tensor t = tensor_arg(a, name);
    const std::optional<int64_t> ax = optional_axis(axis, name);
    tensor r;
    {
        native_section nogil;
        r = ax ? Axis(t, *ax) : Flat(t);
    }
    return tensor_result(std::move(r));
}

// sort/argsort: axis None sorts the flattened tensor; `stable` (None or a bool) is accepted
// for NumPy's and the array API's signatures, every sort being stable.
template <tensor (*Sort)(const tensor&, int64_t, bool)>
py::object sort_function(const char* name, py::handle a, py::handle axis, bool descending,
                         py::handle stable) {
    require_init(name);
    ISTHMUS_CHECK(stable.is_none() || PyBool_Check(stable.ptr()), type_error, name,
                  ": stable must be None or a bool, got ", type_name(stable));
    const tensor t = tensor_arg(a, name);
    const std::optional<int64_t> ax = optional_axis(axis, name);
    tensor r;
    {
        native_section nogil;
        r = ax ? Sort(t, *ax, descending) : Sort(t.reshape({t.numel()}), 0, descending);
    }
    return tensor_result(std::move(r));
}

template <tensor (*Flat)(const tensor&), tensor (*Axis)(const tensor&, int64_t, bool)>
py::object arg_function(const char* name, py::handle a, py::handle axis, bool keepdims) {
    require_init(name);
    const tensor t = tensor_arg(a, name);
    const std::optional<int64_t> ax = optional_axis(axis, name);
    tensor r;
    {
        native_section nogil;
        r = ax ? Axis(t, *ax, keepdims) : flat_index(Flat(t), t, keepdims);
    }
    return reduced(std::move(r));
}

} // namespace

shape_t int_list(py::handle v, const char* fn, const char* what) {
    if (PyIndex_Check(v.ptr()) && !PyBool_Check(v.ptr())) return {int_arg(v, fn, what)};
    ISTHMUS_CHECK(py::isinstance<py::sequence>(v) && !py::isinstance<py::str>(v), type_error, fn,
                  ": ", what, " must be an int or a sequence of ints, got ", type_name(v));
    shape_t out;
    for (py::handle x : v) out.push_back(int_arg(x, fn, what));
    return out;
}

scalar scalar_arg(py::handle v, const char* fn, const char* what) {
    ISTHMUS_CHECK(is_py_number(v) || (is_qvalue(v) && qvalue_ref(v).is_scalar()), type_error, fn,
                  ": ", what, " must be a number, got ", type_name(v));
    if (is_qvalue(v)) return qvalue_ref(v).as_scalar();
    return scalar_from_py(v, std::nullopt);
}

scalar exact_scalar_arg(py::handle v, const char* fn, const char* what) {
    const scalar s = scalar_arg(v, fn, what);
    PyObject* o = v.ptr();
    if (PyFloat_CheckExact(o)) return scalar(PyFloat_AS_DOUBLE(o));
    if (PyComplex_CheckExact(o))
        return scalar(complex128_t(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
    return s;
}

void bind_module_ops(py::module_& m) {
    // ---- elementwise ----
    for (const unary_row& r : unary_rows) {
        const std::vector<std::string> names = python_names(r.python);
        for (size_t i = 0; i < names.size(); ++i) {
            const unary_op op = r.op;
            m.def(
                names[i].c_str(),
                [op, fn = names[i]](py::handle x) {
                    require_init(fn.c_str());
                    return unary_function(op, fn.c_str(), x);
                },
                py::arg("x"), python_doc(r.doc, names, i).c_str());
        }
    }
    for (const binary_row& r : binary_rows) {
        const std::vector<std::string> names = python_names(r.python);
        for (size_t i = 0; i < names.size(); ++i) {
            const binary_op op = r.op;
            m.def(
                names[i].c_str(),
                [op, fn = names[i]](py::handle a, py::handle b) {
                    require_init(fn.c_str());
                    return binary_function(op, fn.c_str(), a, b);
                },
                py::arg("x1"), py::arg("x2"), python_doc(r.doc, names, i).c_str());
        }
    }
    m.def("_op_table", &op_table_rows,
          "The op table's rows (isthmus/ops/op_table.hpp) as dicts: name, arity, rule, python "
          "(names, NumPy's first), doc, and view (unary) or on_bool (binary).");
    m.def("where", &where_function, py::arg("condition"), py::arg("x") = py::none(),
          py::arg("y") = py::none(),
          "Elements of x where condition is true, else of y (all three broadcast); where(cond)\n"
          "alone is nonzero(cond).");
    m.def("clip", &clip_function, py::arg("a"), py::arg("a_min"), py::arg("a_max"),
          "Limits values to [a_min, a_max] (either bound may be None), NaN-propagating.");
    m.def("clamp", &clip_function, py::arg("a"), py::arg("a_min"), py::arg("a_max"),
          "Alias of clip.");
    m.def(
        "nextafter",
        [](py::handle a, py::handle b) {
            require_init("nextafter");
            operand x, y;
            ISTHMUS_CHECK(to_operand(a, x), type_error,
                          "nextafter: x1 must be an array-like or a number, got ", type_name(a));
            ISTHMUS_CHECK(to_operand(b, y), type_error,
                          "nextafter: x2 must be an array-like or a number, got ", type_name(b));
            // a number beside an array is weak (NEP 50), as for the other binary functions
            const tensor tx = !x.is_scalar  ? x.t()
                              : y.is_scalar ? x.s.to_tensor()
                                            : x.as_tensor_beside(y.t().dtype());
            const tensor ty = y.as_tensor_beside(tx.dtype());
            tensor r;
            {
                native_section nogil;
                r = isthmus::nextafter(tx, ty);
            }
            return wrap_result(std::move(r), x.is_scalar && y.is_scalar);
        },
        py::arg("x1"), py::arg("x2"),
        "The next representable value after x1 toward x2, elementwise (float16/bfloat16 in\n"
        "their own spacing; ints compute as floats, as NumPy; complex raises TypeError).");
    m.def(
        "fma",
        [](py::handle a, py::handle b, py::handle c) {
            require_init("fma");
            const tensor x = tensor_arg(a, "fma"), y = tensor_arg(b, "fma"),
                         z = tensor_arg(c, "fma");
            native_section nogil;
            return value(isthmus::fma(x, y, z));
        },
        py::arg("a"), py::arg("b"), py::arg("c"),
        "a * b + c in one pass (fused multiply-add per element), broadcasting.");
    m.def(
        "real",
        [](py::handle a) {
            require_init("real");
            return value(isthmus::real(tensor_arg(a, "real")));
        },
        py::arg("x"), unary_part_rows[0].doc);
    m.def(
        "imag",
        [](py::handle a) {
            require_init("imag");
            return value(isthmus::imag(tensor_arg(a, "imag")));
        },
        py::arg("x"), unary_part_rows[1].doc);

    // ---- linear algebra ----
    m.def(
        "matmul",
        [](py::handle a, py::handle b) {
            require_init("matmul");
            py::object r = apply_matmul(a, b);
            ISTHMUS_CHECK(!r.is(not_implemented()), type_error,
                          "matmul: unsupported operand types '", type_name(a), "' and '",
                          type_name(b), "'");
            return r;
        },
        py::arg("x1"), py::arg("x2"), "Matrix product with NumPy's matmul rules (batched, 1-d).");
    using linalg_fn = tensor (*)(const tensor&, const tensor&);
    static const std::tuple<const char*, linalg_fn, const char*> linalg[] = {
        {"dot", &isthmus::dot, "NumPy's dot (matmul for 2-d, sum-product over the last axis)."},
        {"vdot", &isthmus::vdot, "Flattened dot product, conjugating the first argument."},
        {"inner", &isthmus::inner, "Sum-product over the last axes of both arguments."},
    };
    for (const auto& [name, fn, doc] : linalg) {
        const char* n = name;
        linalg_fn f = fn;
        m.def(
            name,
            [n, f](py::handle a, py::handle b) {
                require_init(n);
                const tensor x = tensor_arg(a, n), y = tensor_arg(b, n);
                tensor r;
                {
                    native_section nogil;
                    r = f(x, y);
                }
                return reduced(std::move(r));
            },
            py::arg("a"), py::arg("b"), doc);
    }

    // ---- reductions ----
    static const std::tuple<const char*, reduce_fn, const char*> reductions[] = {
        {"sum", &isthmus::sum, "Sum over axis (None: all), as NumPy."},
        {"prod", &isthmus::prod, "Product over axis, as NumPy."},
        {"mean", &isthmus::mean, "Mean over axis, as NumPy."},
        {"min", &isthmus::min, "Minimum over axis (NaN-propagating), as NumPy."},
        {"max", &isthmus::max, "Maximum over axis (NaN-propagating), as NumPy."},
        {"amin", &isthmus::min, "Alias of min."},
        {"amax", &isthmus::max, "Alias of max."},
        {"any", &isthmus::any, "True where any element over axis is nonzero."},
        {"all", &isthmus::all, "True where every element over axis is nonzero."},
    };
    for (const auto& [name, fn, doc] : reductions) {
        const char* n = name;
        reduce_fn f = fn;
        m.def(
            name,
            [n, f](py::handle a, py::handle axis, bool keepdims) {
                return reduce_function(f, n, a, axis, keepdims);
            },
            py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false, doc);
    }
    m.def(
        "var",
        [](py::handle a, py::handle axis, bool keepdims, int64_t ddof) {
            require_init("var");
            const tensor t = tensor_arg(a, "var");
            const reduce_axes axes = axes_from_py(axis);
            tensor r;
            {
                native_section nogil;
                r = isthmus::var(t, axes, keepdims, ddof);
            }
            return reduced(std::move(r));
        },
        py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
        py::arg("ddof") = 0, "Variance over axis (divisor n - ddof), as NumPy.");
    m.def(
        "std",
        [](py::handle a, py::handle axis, bool keepdims, int64_t ddof) {
            require_init("std");
            const tensor t = tensor_arg(a, "std");
            const reduce_axes axes = axes_from_py(axis);
            tensor r;
            {
                native_section nogil;
                r = isthmus::std_(t, axes, keepdims, ddof);
            }
            return reduced(std::move(r));
        },
        py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
        py::arg("ddof") = 0, "Standard deviation over axis (divisor n - ddof), as NumPy.");
    m.def(
        "argmin",
        [](py::handle a, py::handle axis, bool keepdims) {
            return arg_function<&isthmus::argmin, &isthmus::argmin>("argmin", a, axis, keepdims);
        },
        py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
        "Index of the minimum (flat index when axis is None).");
    m.def(
        "argmax",
        [](py::handle a, py::handle axis, bool keepdims) {
            return arg_function<&isthmus::argmax, &isthmus::argmax>("argmax", a, axis, keepdims);
        },
        py::arg("a"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
        "Index of the maximum (flat index when axis is None).");
    m.def(
        "cumsum",
        [](py::handle a, py::handle axis) {
            return scan_function<&isthmus::cumsum, &isthmus::cumsum>("cumsum", a, axis);
        },
        py::arg("a"), py::arg("axis") = py::none(),
        "Running sum along axis (the flattened tensor when axis is None).");
    m.def(
        "cumprod",
        [](py::handle a, py::handle axis) {
            return scan_function<&isthmus::cumprod, &isthmus::cumprod>("cumprod", a, axis);
        },
        py::arg("a"), py::arg("axis") = py::none(),
        "Running product along axis (the flattened tensor when axis is None).");
    m.def(
        "sort",
        [](py::handle a, py::handle axis, bool descending, py::handle stable) {
            return sort_function<&isthmus::sort>("sort", a, axis, descending, stable);
        },
        py::arg("a"), py::arg("axis") = -1, py::kw_only(), py::arg("descending") = false,
        py::arg("stable") = py::none(),
        "a sorted along axis (the flattened tensor when axis is None): NaNs last (first when "
        "descending), equal elements in their order (every sort is stable).");
    m.def(
        "argsort",
        [](py::handle a, py::handle axis, bool descending, py::handle stable) {
            return sort_function<&isthmus::argsort>("argsort", a, axis, descending, stable);
        },
        py::arg("a"), py::arg("axis") = -1, py::kw_only(), py::arg("descending") = false,
        py::arg("stable") = py::none(),
        "The int64 positions that sort a along axis (of the flattened tensor when axis is "
        "None), in sort's order.");
    m.def(
        "searchsorted",
        [](py::handle a, py::handle v, py::handle side, py::handle sorter) {
            require_init("searchsorted");
            ISTHMUS_CHECK(py::isinstance<py::str>(side), type_error,
                          "searchsorted: side must be 'left' or 'right', got a ", type_name(side));
            const std::string s = side.cast<std::string>();
            ISTHMUS_CHECK(s == "left" || s == "right", value_error,
                          "searchsorted: side must be 'left' or 'right', got '", s, "'");
            tensor sorted = tensor_arg(a, "searchsorted");
            operand values;
            ISTHMUS_CHECK(to_operand(v, values), type_error,
                          "searchsorted: v must be an array-like or a number, got ", type_name(v));
            const tensor order = sorter.is_none() ? tensor() : tensor_arg(sorter, "searchsorted");
            tensor r;
            {
                native_section nogil;
                if (order.defined()) sorted = isthmus::take(sorted, order);
                r = isthmus::searchsorted(sorted, values.as_tensor_beside(sorted.dtype()),
                                          s == "right");
            }
            return wrap_result(std::move(r), values.is_scalar);
        },
        py::arg("a"), py::arg("v"), py::arg("side") = "left", py::arg("sorter") = py::none(),
        "Where v's elements would go in the ascending 1-d a to keep it sorted (int64; 'left':\n"
        "before equal elements, 'right': after them); sorter: the positions that sort a.");
}

} // namespace isthmus::pymod
