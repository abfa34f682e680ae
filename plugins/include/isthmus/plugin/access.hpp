// Access modifiers: the index maps of views (clamped, circular, mirror) and the record of a
// failed access on the GPU. Part of the device layer: included by isthmus/plugin/device.hpp,
// after its macros (ISTHMUS_HD, ISTHMUS_UNLIKELY) and fixed-width types.
#pragma once

namespace isthmus::plugin {

/// Quasar's access modifiers: what an index outside [0, size) does.
///
/// A dimension of size 0 has no element to map to, whatever the modifier: an access into it is
/// an error, never a read or write of memory. On the CPU it raises index_error naming the
/// argument, the index and the shape; on the GPU it is recorded like a 'checked failure (Note
/// [checked access on the GPU]) and raised when the launch completes. 'unchecked views check
/// nothing unless the call runs in checked mode (Note [view checks]).
enum class access {
    unchecked, ///< no check (fastest; out of range is undefined behaviour outside checked mode)
    checked,   ///< raises index_error naming the index, the size, the argument and its shape
    clamped,   ///< clamps to the nearest edge element
    circular,  ///< wraps around (periodic)
    mirror     ///< reflects at the edges (..., 1, 0, 0, 1, ... ; half-sample symmetric)
};

namespace detail {

/// Note [view checks]
/// ~~~~~~~~~~~~~~~~~~
/// Every element access of a view goes through map_index, which maps one index of one dimension by
/// the view's access modifier and says whether there is an element at all. It fails for a 'checked
/// index outside [0, size), for any index into a dimension of size 0 under 'clamped, 'circular and
/// 'mirror (they have nothing to clamp, wrap or reflect to), and, in checked mode only, for an
/// 'unchecked index outside [0, size). A failure goes to the view's cold path: on the CPU it throws
/// index_error with the message below; on the GPU it records the failure and ends the thread
/// (Note [checked access on the GPU]). Either way a failed access never touches memory.
///
/// Checked mode (ISTHMUS_CALL_CHECKED, see Note [checked mode in the ABI]) is bit 0 of each
/// view's tag, set by the launcher when it binds the arguments (the other bits hold the
/// argument's position, for messages). The launchers are instantiated twice, once with the bit
/// a compile-time 0 and once 1 (kernel_loop<Checked>, grid_loop<Checked>), and pick one per
/// call. The loops run on by-value copies of the views (run_positions, the device kernel's
/// parameters) whose bit is that constant, so the compiler folds the test away: unchecked
/// kernels in normal mode compile to the loop they had before the flag existed
/// (docs/plugins.md has the measurements). Were the loop to read the views from memory whose
/// address escaped, it would lose vectorisation (a 60x slowdown measured on a scale kernel).
/// Note [stencil interiors]
/// ~~~~~~~~~~~~~~~~~~~~~~~~
/// A 'clamped, 'circular or 'mirror view maps every index, which costs little in itself but
/// hides from the compiler that neighbouring positions read neighbouring elements: a 3x3 blur's
/// nine reads become scalar loads (or gathers) where an unmodified view's become vector loads,
/// about 15x apart on an AVX-512 machine. The mapping changes nothing for an index inside the
/// tensor, so where every read is inside, it can be skipped. The launcher cannot see where a
/// body reads; the kernel says it: `.stencil({"x"}, r)` (ISTHMUS_PARAM_STENCIL in the ABI)
/// declares that the body reads x only within r elements of the position along its leading
/// dimensions. The CPU launcher then cuts each run of positions into the edges and the
/// interior, the positions at least r from every edge of every declared view, and runs the
/// interior on copies whose interior_dims() (tag bits 1-3, a constant in that loop, like the
/// checked bit) take indices as they are: the body compiles to the loop over plain strided
/// memory. The declaration only says where reads stay; a read beyond it in the interior that
/// still lands inside the tensor reads what the mapping would have given. Only one that lands
/// outside would differ, undefined behaviour in normal mode like an unchecked view's; checked
/// mode keeps the split and checks those reads, raising index_error that names the declaration
/// (k_access_stencil). Only kernels whose every mapping view declares a radius take the split;
/// the GPU launcher maps every index (its threads do not run along rows).
inline constexpr int k_access_stencil = 8; // or-ed into the modifier code of an access error
/// The modifier code of a GPU thread whose derived backward outgrew its tape (See Note [derived
/// backward on the GPU] in isthmus/plugin/derive_kernel.hpp): the failure record's failing
/// index is the entries it needed, its size what the tape holds.
inline constexpr int k_device_tape_full = 64;

template <access A>
ISTHMUS_HD inline bool map_index(int64_t i, int64_t n, bool checked_mode, int64_t& j) {
    if constexpr (A == access::unchecked) {
        j = i;
        if (ISTHMUS_UNLIKELY(checked_mode))
            return static_cast<uint64_t>(i) < static_cast<uint64_t>(n);
        return true;
    } else if constexpr (A == access::checked) {
        (void)checked_mode;
        j = i;
        return static_cast<uint64_t>(i) < static_cast<uint64_t>(n);
    } else {
        (void)checked_mode;
        if (ISTHMUS_UNLIKELY(n <= 0)) { // nothing to clamp, wrap or reflect to
            j = 0;
            return false;
        }
        if constexpr (A == access::clamped) {
            j = i < n ? i : n - 1; // (two selects, no branch: the loop stays straight)
            j = j < 0 ? 0 : j;
        } else if constexpr (A == access::circular) {
            const int64_t r = i % n;
            j = r < 0 ? r + n : r;
        } else {
            const int64_t p = 2 * n;
            int64_t r = i % p;
            if (r < 0) r += p;
            j = r < n ? r : p - 1 - r;
        }
        return true;
    }
}

/// Note [checked access on the GPU]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// Device code cannot throw, so a failed view access on the GPU (Note [view checks]) records the
/// first failure here (one record per plugin module and device, claimed with atomicCAS: the view's
/// modifier, the argument, the dimension, and up to 8 indices and sizes), and the thread then ends
/// (PTX `exit`), so it reads and writes nothing more: neither the element that is not there nor,
/// with a value it never got, any other. (The access returns a scratch element, which is never
/// reached; the grid-stride loop's other positions of that thread do not run, and the launch fails
/// anyway.) Kernel bodies must not use block barriers, which the grid-stride loop rules out
/// already. Other threads run on; what they write is written, as on the CPU where other blocks run
/// on until they see the first error. A launch that can fail this way waits: the CUDA launcher
/// clears the record, launches, reads the record back and syncs the stream, and then raises
/// index_error with the CPU's message. That is every launch of a kernel with a 'checked view, every
/// launch in checked mode, and a launch where a 'clamped, 'circular or 'mirror view has an empty
/// dimension; other launches return as soon as they are queued.
struct device_index_error {
    unsigned int failed;
    int modifier;
    int dim;
    int arg;
    int rank; ///< the view's rank; index and shape hold the first min(rank, 8)
    int unused;
    long long failing_index;
    long long failing_size;
    long long index[8];
    long long shape[8];
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
// Under NVRTC the record has external linkage, so the host finds it in the module by its
// mangled name (k_device_error_symbol in driver_launch.hpp); under nvcc it is per translation
// unit and reached through the runtime's symbol API.
#if defined(__CUDACC_RTC__)
__device__ device_index_error g_device_index_error;
#else
static __device__ device_index_error g_device_index_error;
#endif
/// Where failed accesses on the GPU go (room for the largest element, complex128).
alignas(16) static __device__ unsigned char g_device_scratch[16];

__device__ __noinline__ inline void record_device_failure(int modifier, int dim,
                                                          const int64_t* index,
                                                          const int64_t* shape, int rank, int arg) {
    if (atomicCAS(&g_device_index_error.failed, 0u, 1u) == 0u) {
        g_device_index_error.modifier = modifier;
        g_device_index_error.dim = dim;
        g_device_index_error.arg = arg;
        g_device_index_error.rank = rank;
        g_device_index_error.failing_index = index[dim];
        g_device_index_error.failing_size = shape[dim];
        for (int d = 0; d < rank && d < 8; ++d) {
            g_device_index_error.index[d] = index[d];
            g_device_index_error.shape[d] = shape[d];
        }
        __threadfence();
    }
}
#endif

} // namespace detail

} // namespace isthmus::plugin
