// Marshalling runtime values into ABI values for a plugin call: dtype codes, argument slots and
// marshal (unmarshal and results: results.cpp).
#include "call_context.hpp"

#include "isthmus/storage.hpp"

#include <cstdint>
#include <cstring>

namespace isthmus::plugin_host::detail {

namespace {

constexpr dtype k_codes[] = {dtype::bool_,   dtype::int8,      dtype::int16,     dtype::int32,
                             dtype::int64,   dtype::uint8,     dtype::uint16,    dtype::uint32,
                             dtype::uint64,  dtype::float16,   dtype::bfloat16,  dtype::float32,
                             dtype::float64, dtype::complex64, dtype::complex128};

} // namespace

int32_t code_of(dtype dt) noexcept {
    for (int32_t i = 0; i < 15; ++i)
        if (k_codes[i] == dt) return i;
    return ISTHMUS_DT_ANY;
}

dtype dtype_of_code(int32_t code) {
    ISTHMUS_CHECK(code >= 0 && code <= ISTHMUS_DT_COMPLEX128, type_error,
                  "plugin ABI: unknown dtype code ", code);
    return k_codes[code];
}

arg_slot::~arg_slot() {
    if (locked) {
        try {
            t->unlock(mode, where);
        } catch (...) {
        }
    }
}

int cuda_ordinal(resource_id r) {
    if (r < MEMRESOURCE_DEVICE2) return -1;
    const memory_resource* res = find_resource(r);
    return res && res->name().rfind("cuda:", 0) == 0 ? r - MEMRESOURCE_DEVICE2 : -1;
}

void marshal(const value& v, const isthmus_param* p, arg_slot& slot, isthmus_value& out,
             const std::shared_ptr<const library>& lib, resource_id where) {
    std::memset(&out, 0, sizeof out);
    out.dtype = ISTHMUS_DT_ANY;
    switch (v.kind()) {
    case value_kind::none:
        out.kind = ISTHMUS_VALUE_NONE;
        return;
    case value_kind::scalar: {
        const scalar& s = v.as_scalar();
        const dtype dt = s.type();
        out.dtype = code_of(dt);
        if (is_bool(dt)) {
            out.kind = ISTHMUS_VALUE_BOOL;
            out.u.i = s.to<bool>() ? 1 : 0;
        } else if (is_integer(dt)) {
            out.kind = ISTHMUS_VALUE_INT;
            out.u.i =
                dt == dtype::uint64 ? static_cast<int64_t>(s.to<uint64_t>()) : s.to<int64_t>();
        } else if (is_complex(dt)) {
            out.kind = ISTHMUS_VALUE_COMPLEX;
            const auto c = s.to<complex128_t>();
            out.u.c[0] = c.real();
            out.u.c[1] = c.imag();
        } else {
            out.kind = ISTHMUS_VALUE_FLOAT;
            out.u.f = s.to<double>();
        }
        // A bool or integer given for a real parameter arrives as the parameter's kind.
        const auto int_as_double = [&] {
            return dt == dtype::uint64 ? static_cast<double>(static_cast<uint64_t>(out.u.i))
                                       : static_cast<double>(out.u.i);
        };
        if (p && p->kind == ISTHMUS_PARAM_FLOAT && out.kind != ISTHMUS_VALUE_FLOAT) {
            out.u.f = int_as_double();
            out.kind = ISTHMUS_VALUE_FLOAT;
        } else if (p && p->kind == ISTHMUS_PARAM_COMPLEX && out.kind != ISTHMUS_VALUE_COMPLEX) {
            const double r = out.kind == ISTHMUS_VALUE_FLOAT ? out.u.f : int_as_double();
            out.u.c[0] = r;
            out.u.c[1] = 0;
            out.kind = ISTHMUS_VALUE_COMPLEX;
        }
        return;
    }
    case value_kind::string:
        out.kind = ISTHMUS_VALUE_STRING;
        out.u.s.data = v.as_string().data();
        out.u.s.size = static_cast<int64_t>(v.as_string().size());
        return;
    case value_kind::tensor: {
        slot.t = &v.as_tensor(); // no copy of the handle: `v` outlives the slot
        const bool writes = !p || p->kind == ISTHMUS_PARAM_ANY || (p->flags & ISTHMUS_PARAM_WRITE);
        if (p && p->kind == ISTHMUS_PARAM_TENSOR && p->dtype >= 0 &&
            code_of(slot.t->dtype()) != p->dtype && !writes) {
            slot.converted = slot.t->to(dtype_of_code(p->dtype)); // read-only, another dtype
            slot.t = &slot.converted;
        }
        slot.mode = writes ? lock_mode::readwrite : lock_mode::read;
        // Note [where arguments are locked]
        // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        // On the launcher's device, except fixed vectors, which the author layer reads on the host
        // to fill a vec (a few elements).
        if (p && p->kind == ISTHMUS_PARAM_VEC) where = MEMRESOURCE_CPU;
        const int ordinal = where == MEMRESOURCE_CPU ? -1 : cuda_ordinal(where);
        ISTHMUS_CHECK(where == MEMRESOURCE_CPU || ordinal >= 0, value_error,
                      "plugin arguments can be locked on the CPU or a CUDA device, not on ",
                      get_resource(where).name());
        void* data = slot.t->lock(slot.mode, where);
        slot.where = where;
        slot.locked = true;
        out.kind = ISTHMUS_VALUE_TENSOR;
        out.dtype = code_of(slot.t->dtype());
        out.u.t = {data,
                   ordinal >= 0 ? ISTHMUS_DEVICE_CUDA : ISTHMUS_DEVICE_CPU,
                   ordinal >= 0 ? ordinal : 0,
                   out.dtype,
                   static_cast<int32_t>(slot.t->dim()),
                   slot.t->shape().data(),
                   slot.t->strides().data()};
        return;
    }
    case value_kind::cell:
        ISTHMUS_THROW(type_error, "plugin calls do not take cells (given ", describe(v), ")");
    case value_kind::object: {
        const auto& o = v.as_object();
        if (auto* po = dynamic_cast<const plugin_object*>(o.get())) {
            out.kind = ISTHMUS_VALUE_OBJECT;
            out.u.o.instance = po->instance();
            out.u.o.type = po->type();
            return;
        }
        if (auto* co = dynamic_cast<const callable_object*>(o.get())) {
            out.kind = ISTHMUS_VALUE_CALLBACK;
            out.u.cb = make_callback(co->fn(), lib);
            return;
        }
        ISTHMUS_THROW(type_error, "plugin calls do not take ", describe(v));
    }
    }
}

} // namespace isthmus::plugin_host::detail
