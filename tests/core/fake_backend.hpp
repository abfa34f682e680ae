// Test-only: a compute backend for a fake device that runs a few kernels in the canonical forms.
#pragma once

#include "fake_resource.hpp"

#include <isthmus/backend.hpp>
#include <isthmus/schedule.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <string>

namespace isthmus_test {

using namespace isthmus;

inline constexpr resource_id BACKEND_DEV = MEMRESOURCE_DEVICE3;

/// Offset in elements of linear position `i` of `shape` through `strides`.
inline int64_t offset_of(int64_t i, const shape_t& shape, const shape_t& strides) {
    int64_t off = 0;
    for (size_t d = shape.size(); d-- > 0;) {
        off += (i % shape[d]) * strides[d];
        i /= shape[d];
    }
    return off;
}

/// A compute backend for the fake device (whose memory is host memory): float32 add, float32
/// fill, float32 copies from float32 and int8, float32 sums and row gathers/scatters run "on
/// the device", in the canonical forms only (Note [canonical forms]); everything else falls
/// back to the CPU backend. Counters tell the tests which kernels ran here.
struct fake_kernels final : backend::compute {
    static inline int binaries = 0, fills = 0, copies = 0, reduces = 0, gathers = 0, scatters = 0;
    std::string name() const override { return "fake compute"; }
    bool supports_binary(binary_op op, dtype dt) const override {
        return op == binary_op::add && dt == dtype::float32;
    }
    void binary(binary_op, dtype dt, const shape_t& shape, const backend::operand& out,
                const backend::operand& a, const backend::operand& b) override {
        ++binaries;
        // the canonical form: every operand of the compute dtype
        REQUIRE(dt == dtype::float32);
        REQUIRE((out.dt == dt && a.dt == dt && b.dt == dt));
        auto* o = static_cast<float*>(const_cast<void*>(out.data));
        auto at = [&](const backend::operand& x, int64_t i) {
            float v;
            if (x.data)
                v = static_cast<const float*>(x.data)[offset_of(i, shape, *x.strides)];
            else
                std::memcpy(&v, x.value, sizeof v);
            return v;
        };
        for (int64_t i = 0; i < numel_of(shape); ++i)
            o[offset_of(i, shape, *out.strides)] = at(a, i) + at(b, i);
    }
    bool supports_unary(unary_op, dtype) const override { return false; }
    void unary(unary_op, dtype, const shape_t&, const backend::operand&,
               const backend::operand&) override {
        FAIL("unary called without support");
    }
    bool supports_fill(dtype dt) const override { return dt == dtype::float32; }
    void fill(const tensor& out, void* data, const backend::operand& v) override {
        ++fills;
        REQUIRE(v.dt == dtype::float32);
        float x;
        std::memcpy(&x, v.value, sizeof x);
        auto* o = static_cast<float*>(data);
        for (int64_t i = 0; i < out.numel(); ++i) o[offset_of(i, out.shape(), out.strides())] = x;
    }
    bool supports_copy(dtype out, dtype in) const override {
        return out == dtype::float32 && (in == dtype::float32 || in == dtype::int8);
    }
    void copy(const tensor& out, void* out_data, const tensor& in, const void* in_data) override {
        ++copies;
        REQUIRE(out.dtype() == dtype::float32);
        auto* o = static_cast<float*>(out_data);
        for (int64_t i = 0; i < out.numel(); ++i) {
            const int64_t at = offset_of(i, out.shape(), in.strides());
            o[offset_of(i, out.shape(), out.strides())] =
                in.dtype() == dtype::int8 ? static_cast<const int8_t*>(in_data)[at]
                                          : static_cast<const float*>(in_data)[at];
        }
    }
    bool supports_reduce(backend::reduce_kind kind, dtype in, dtype out) const override {
        return kind == backend::reduce_kind::sum && in == dtype::float32 && out == in;
    }
    void reduce(backend::reduce_kind, const tensor& out, void* out_data, const tensor& in,
                const void* in_data, const std::vector<bool>& reduced) override {
        ++reduces;
        // the canonical form: a contiguous input with the reduced dimensions last
        REQUIRE(in.is_contiguous());
        REQUIRE(out.is_contiguous());
        bool seen_reduced = false;
        int64_t cols = 1;
        for (size_t d = 0; d < reduced.size(); ++d) {
            REQUIRE((reduced[d] || !seen_reduced));
            seen_reduced = seen_reduced || reduced[d];
            if (reduced[d]) cols *= in.shape()[d];
        }
        const auto* x = static_cast<const float*>(in_data);
        auto* o = static_cast<float*>(out_data);
        for (int64_t r = 0; r < out.numel(); ++r) {
            float s = 0;
            for (int64_t c = 0; c < cols; ++c) s += x[r * cols + c];
            o[r] = s;
        }
    }
    bool supports_ternary(backend::ternary_op, dtype) const override { return false; }
    void ternary(backend::ternary_op, dtype, const shape_t&, const backend::operand&,
                 const backend::operand&, const backend::operand&,
                 const backend::operand&) override {
        FAIL("ternary called without support");
    }
    bool supports_cumulative(bool, dtype) const override { return false; }
    void cumulative(bool, const tensor&, void*, const tensor&, const void*, int64_t) override {
        FAIL("cumulative called without support");
    }
    // Row gathers and scatters of any element size, as the interface describes them (byte
    // offsets and strides, the canonical device array of offsets).
    bool supports_index(size_t) const override { return true; }
    void gather(size_t isz, const backend::index_rows& at, void* out, int64_t out_row,
                const void* src, const shape_t& rest, const shape_t& out_rest,
                const shape_t& src_rest, bool) override {
        ++gathers;
        REQUIRE(at.off != nullptr);
        for (int64_t r = 0; r < at.count; ++r)
            for (int64_t i = 0; i < numel_of(rest); ++i)
                std::memcpy(
                    static_cast<char*>(out) + r * out_row + offset_of(i, rest, out_rest),
                    static_cast<const char*>(src) + at.off[r] + offset_of(i, rest, src_rest), isz);
    }
    void scatter(size_t isz, const backend::index_rows& at, void* dst, const void* val,
                 int64_t val_row, const shape_t& rest, const shape_t& dst_rest,
                 const shape_t& val_rest, bool) override {
        ++scatters;
        REQUIRE(at.off != nullptr);
        for (int64_t r = 0; r < at.count; ++r) {
            for (int64_t q = 0; q < r; ++q) // the canonical form: rows that never repeat
                REQUIRE(at.off[q] != at.off[r]);
            for (int64_t i = 0; i < numel_of(rest); ++i)
                std::memcpy(static_cast<char*>(dst) + at.off[r] + offset_of(i, rest, dst_rest),
                            static_cast<const char*>(val) + r * val_row +
                                offset_of(i, rest, val_rest),
                            isz);
        }
    }
    bool supports_random(dtype, bool) const override { return false; }
    void random_real(dtype, bool, void*, int64_t, uint64_t, uint64_t, double, double) override {
        FAIL("random called without support");
    }
    void random_int(dtype, void*, int64_t, uint64_t, uint64_t, int64_t, uint64_t) override {
        FAIL("random called without support");
    }
    bool supports_matmul(dtype) const override { return false; }
    void matmul(const tensor&, void*, const tensor&, const void*, const tensor&,
                const void*) override {
        FAIL("matmul called without support");
    }
};

// A fake device with a (kernel-less) backend, made the default device for the test's lifetime.
struct fake_default_device {
    registered_fake dev{BACKEND_DEV};
    int64_t saved_threshold = transfer_threshold();
    fake_default_device() {
        backend::register_compute(BACKEND_DEV, std::make_shared<fake_kernels>());
        set_default_resource(BACKEND_DEV);
    }
    ~fake_default_device() {
        set_default_resource(MEMRESOURCE_CPU);
        backend::register_compute(BACKEND_DEV, nullptr);
        set_transfer_threshold(saved_threshold);
    }
};

} // namespace isthmus_test
