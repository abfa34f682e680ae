// Host-side internals shared by the plugin host files: call contexts, the callback table,
// argument marshalling between runtime values and ABI values.
#pragma once

#include "isthmus/plugin_host.hpp"

#include <array>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace isthmus::plugin_host::detail {

/// dtype <-> ABI dtype code.
int32_t code_of(dtype dt) noexcept;
/// Throws type_error for codes isthmus has no dtype for.
dtype dtype_of_code(int32_t code);

/// Note [call context]
/// ~~~~~~~~~~~~~~~~~~~
/// Every host -> plugin call gets one. It records the first error (code, message, and the original
/// C++ exception when a host callback failed, so a Python exception raised in an event handler
/// comes back as itself), owns what the plugin allocates through new_tensor / new_string (so
/// nothing leaks when the plugin fails half way), and is shared by the threads of a parallel_do
/// (hence the mutex on the rarely used paths).
struct call_context {
    isthmus_call base; // first member: an isthmus_call* is a call_context*
    std::mutex mu;
    uint32_t flags = 0; // ISTHMUS_CALL_* flags the plugin reads (Note [checked mode])
    int32_t code = 0;
    std::string message;
    std::exception_ptr cause;
    struct owned {
        tensor t;
        lock_mode mode = lock_mode::write; // how `t` is locked (read: a Python result)
        bool taken = false;                // `t` unlocked and handed on as a result (unmarshal)
        std::string s;
        std::vector<isthmus_value> items; // a tuple's items (new_tuple)
        bool tuple = false;
    };
    std::vector<std::unique_ptr<owned>> results;
    /// Keeps `o` for the call's life as the owner of the result `out` describes.
    void hand_out(std::unique_ptr<owned> o, isthmus_value& out) {
        out.owner = o.get();
        std::lock_guard lk(mu);
        results.push_back(std::move(o));
    }

    call_context();
    ~call_context();
    static call_context& of(isthmus_call* c) { return *reinterpret_cast<call_context*>(c); }
    void fail(int32_t c, const char* msg, std::exception_ptr e = nullptr);
    bool failed() const noexcept { return code != 0; }
    /// Throws the recorded error: the original exception when there is one, else the typed
    /// error of `code` with `prefix` and the message.
    [[noreturn]] void rethrow(const std::string& prefix) const;
    /// Releases the locks taken by new_tensor.
    void finish();
};

/// The host's callback table (one per process).
const isthmus_host& host_table() noexcept;

/// A value converted for one call; tensors stay locked (on `where`) until the slot is destroyed.
/// A tensor slot points at the argument's own tensor (the caller keeps the argument alive for
/// the call), or at `converted`, a copy in the parameter's dtype.
struct arg_slot {
    const tensor* t = nullptr;
    tensor converted;
    lock_mode mode = lock_mode::read;
    resource_id where = MEMRESOURCE_CPU;
    bool locked = false;
    ~arg_slot();
};

/// How well an argument fits a parameter.
enum class fit { no, convert, exact };
/// Checks one argument against one parameter; on `no`, `why` says what was expected and given.
fit check_arg(const isthmus_param& p, const value& v, std::string* why);
/// Note [integer parameters] (plugin.hpp), host side: throws overflow_error (OverflowError in
/// Python) when `v`, an integer
/// given for an integer parameter, is out of the parameter's range; `what` and `i` (0-based)
/// name the call and the argument.
void check_range(const isthmus_param& p, const value& v, std::string_view what, size_t i);
/// The flags of a call made from this thread: ISTHMUS_CALL_CHECKED in checked mode.
uint32_t call_flags_now();
/// Describes a value for messages: "a float64 tensor of shape (2, 3)", "a float32 scalar".
std::string describe(const value& v);

// Note [argument buffers]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A call's marshalled arguments live on the stack up to eight, on the heap past that. The stack
// part is raw storage in which only the call's own arguments are constructed (ABI values zeroed,
// argument slots by their members' initialisers, without zeroing first) and destroyed. A
// std::array<T, 8> member had value-initialised (zeroed with `rep stos`, then constructed) and
// destroyed all eight ABI values and all eight slots on every call, the largest single item of a
// small kernel launch's host time: with it gone a launch over 1,000 float32 positions with two
// arrays went from 2.87 to 2.60 us (with the NumPy-scalar type check in
// py_boundary/src/conversions.cpp).
/// Fixed-capacity storage for a call's marshalled arguments (See Note [argument buffers]).
template <typename T>
class arg_buffer {
public:
    explicit arg_buffer(size_t n) : n_(n) {
        if (n > k_inline) {
            heap_.resize(n);
            return;
        }
        T* p = inline_data();
        for (size_t i = 0; i < n; ++i) {
            if constexpr (std::is_trivially_default_constructible_v<T>)
                new (p + i) T(); // ABI values: zeroed
            else
                new (p + i) T; // argument slots: their members' own initialisers, no zeroing
        }
    }
    ~arg_buffer() {
        if (n_ > k_inline) return;
        T* p = inline_data();
        for (size_t i = n_; i-- > 0;) p[i].~T();
    }
    arg_buffer(const arg_buffer&) = delete;
    arg_buffer& operator=(const arg_buffer&) = delete;

    T* data() { return n_ > k_inline ? heap_.data() : inline_data(); }
    T& operator[](size_t i) { return data()[i]; }
    size_t size() const { return n_; }

private:
    static constexpr size_t k_inline = 8;
    T* inline_data() { return std::launder(reinterpret_cast<T*>(inline_)); }

    size_t n_;
    alignas(T) unsigned char inline_[k_inline * sizeof(T)];
    std::vector<T> heap_;
};

/// Marshals `v` into `out` for parameter `p` (nullptr: generic), converting a read-only tensor's
/// dtype when check_arg said `convert`; tensors are locked through `slot` on `where` (the CPU,
/// or a CUDA device's resource: then `out` carries a device pointer, device_type CUDA). Fixed
/// vectors (ISTHMUS_PARAM_VEC) are always locked on the CPU: the launcher reads them on the host.
void marshal(const value& v, const isthmus_param* p, arg_slot& slot, isthmus_value& out,
             const std::shared_ptr<const library>& lib, resource_id where = MEMRESOURCE_CPU);
/// The CUDA ordinal of resource `r`, or -1 when it is no CUDA device (the CPU, a test double).
int cuda_ordinal(resource_id r);
/// Converts a result (or a callback argument) to a runtime value; takes ownership of objects.
/// A tuple (ISTHMUS_VALUE_TUPLE) becomes a 1-d cell of its converted items.
value unmarshal(const isthmus_value& v, call_context& ctx,
                const std::shared_ptr<const library>& lib);
/// Converts a host value (a callback's or call_python's result) into `out`, owned by the call:
/// numbers and None by value, strings and tensors (locked for reading) kept by the context.
void marshal_result(const value& v, call_context& ctx, isthmus_value& out);
/// An ABI callback that calls `fn` (the plugin releases it).
isthmus_callback make_callback(host_callable fn, std::shared_ptr<const library> lib);

} // namespace isthmus::plugin_host::detail
