// Building values from Quasar types: `typename("vec[mat]")(4)`, zero tensors, default cells.
#include "isthmus/types.hpp"

#include "isthmus/error.hpp"
#include "isthmus/memory.hpp"

namespace isthmus {
namespace {

// Note [construction sizes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// A type of rank N takes exactly N sizes: `vec(4)` -> (4), `mat(3, 4)` -> (3, 4), `cube{5}(...)` ->
// five sizes. `mat(3)` is an error rather than a guess: MATLAB reads zeros(n) as n x n while Quasar
// reads it as a length-n vector, and either guess silently builds a shape some caller did not mean.
// No sizes at all is the one shortcut: it builds the type's default (empty) value, which is also
// what cell elements start as (`vec[mat](4)` holds four 0 x 0 matrices). `cube{:}` takes its rank
// from the number of sizes (none -> a 0-d tensor); `vecL` takes no sizes or exactly L.
shape_t resolve_shape(const type_desc& t, const shape_t& sizes) {
    for (size_t d = 0; d < sizes.size(); ++d)
        ISTHMUS_CHECK(sizes[d] >= 0, value_error, "cannot construct '", t, "' with sizes ",
                      shape_str(sizes), ": size ", sizes[d], " of dimension ", d, " is negative");
    if (auto len = t.fixed_length()) {
        ISTHMUS_CHECK(sizes.empty() || (sizes.size() == 1 && sizes[0] == *len), value_error,
                      "cannot construct '", t, "' with sizes ", shape_str(sizes), ": '", t,
                      "' has the fixed shape ", shape_str(shape_t{*len}),
                      "; give no sizes or exactly that size");
        return shape_t{*len};
    }
    if (t.is_any_rank()) {
        ISTHMUS_CHECK(sizes.size() <= static_cast<size_t>(max_rank), value_error,
                      "cannot construct '", t, "' with ", sizes.size(),
                      " sizes: the rank is at most ", max_rank);
        return sizes;
    }
    auto rank = static_cast<size_t>(t.rank());
    if (sizes.empty()) return shape_t(rank, 0);
    ISTHMUS_CHECK(sizes.size() == rank, value_error, "cannot construct '", t, "' with sizes ",
                  shape_str(sizes), ": a type of rank ", rank, " takes ", rank, " size",
                  rank == 1 ? "" : "s", " (or none for an empty value), got ", sizes.size());
    return sizes;
}

void check_no_sizes(const type_desc& t, const shape_t& sizes) {
    ISTHMUS_CHECK(sizes.empty(), value_error, "cannot construct '", t, "' with sizes ",
                  shape_str(sizes), ": ", name(t.kind()), " types take no sizes");
}

} // namespace

value type_desc::construct(const shape_t& sizes) const {
    switch (kind_) {
    case type_kind::any:
        check_no_sizes(*this, sizes);
        return value();
    case type_kind::string:
        check_no_sizes(*this, sizes);
        return value(std::string());
    case type_kind::scalar:
        check_no_sizes(*this, sizes);
        return value(scalar::of(0.0, *dtype()));
    case type_kind::tensor: {
        shape_t shape = resolve_shape(*this, sizes);
        // Note [CPU construction]
        // ~~~~~~~~~~~~~~~~~~~~~~~
        // Values are built on the CPU; the runtime moves them to a device on first use there (the
        // storage's coherence protocol), so construction needs no device and costs no transfer for
        // data the host fills anyway.
        tensor t = tensor::empty(shape, *dtype(), MEMRESOURCE_CPU);
        t.fill(0.0);
        return value(std::move(t));
    }
    case type_kind::cell: {
        shape_t shape = resolve_shape(*this, sizes);
        value v = value::make_cell(shape);
        // Each element is its own default value: elements never share a tensor.
        for (value& item : v.as_cell().items) item = element_->default_value();
        return v;
    }
    }
    ISTHMUS_ASSERT(false, "unhandled type kind ", static_cast<int>(kind_));
    return value();
}

} // namespace isthmus
