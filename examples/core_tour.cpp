// A tour of the core runtime's C++ API: dtypes and promotion, tensors, views, locks, and the
// storage coherence model. Uses only the public headers and links the shared libisthmus.
// Run it: build/examples/core_tour (scripts/demo runs it as its first step).
#include <isthmus/isthmus.hpp>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace q = isthmus;

namespace {

void heading(const std::string& title) {
    std::cout << "\n-- " << title << " --\n";
}

/// Prints every copy a storage holds: where, whether valid, and its locks.
void show_copies(const char* label, const q::tensor& t) {
    std::cout << label << ":";
    auto copies = t.storage()->copies();
    if (copies.empty()) std::cout << " (no copy allocated yet)";
    for (const auto& c : copies) {
        std::cout << "  [" << q::get_resource(c.resource).name() << (c.valid ? " valid" : " stale")
                  << (c.owned ? "" : " external");
        if (c.read_locks + c.write_locks > 0)
            std::cout << ", locks r" << c.read_locks << "/w" << c.write_locks;
        std::cout << "]";
    }
    std::cout << "\n";
}

/// A second memory resource for the tour: plain host memory that pretends to be a device (the
/// CPU may not dereference it), so the coherence model is visible on a machine without a GPU.
/// The CUDA backend registers its devices through the same interface.
class simulated_device final : public q::memory_resource {
public:
    static constexpr q::resource_id slot = q::max_resource_id; // far from the CUDA slots
    q::resource_id id() const noexcept override { return slot; }
    std::string name() const override { return "sim:" + std::to_string(slot); }
    bool host_accessible() const noexcept override { return false; }
    void* allocate(size_t nbytes) noexcept override { return std::malloc(nbytes ? nbytes : 1); }
    void deallocate(void* p, size_t) noexcept override { std::free(p); }
    void copy_from_host(void* dst, const void* src, size_t n) override {
        ++transfers;
        std::memcpy(dst, src, n);
    }
    void copy_to_host(void* dst, const void* src, size_t n) override {
        ++transfers;
        std::memcpy(dst, src, n);
    }
    void copy_within(void* dst, const void* src, size_t n) override { std::memmove(dst, src, n); }
    int transfers = 0;
};

void tour_dtypes() {
    heading("1. dtypes and promotion");
    for (q::dtype t : {q::dtype::bool_, q::dtype::int8, q::dtype::uint16, q::dtype::float16,
                       q::dtype::bfloat16, q::dtype::float32, q::dtype::complex128})
        std::cout << "  " << t << ": " << q::itemsize(t) << " byte(s)\n";
    std::cout << "  parse_dtype(\"double\") = " << q::parse_dtype("double") << "\n";

    // NumPy's rules for two arrays (np.result_type), with bfloat16 following PyTorch.
    struct pair {
        q::dtype a, b;
    };
    for (auto [a, b] :
         {pair{q::dtype::int32, q::dtype::float32}, pair{q::dtype::uint8, q::dtype::int8},
          pair{q::dtype::int64, q::dtype::uint64}, pair{q::dtype::float16, q::dtype::bfloat16},
          pair{q::dtype::float32, q::dtype::complex64}})
        std::cout << "  promote_types(" << a << ", " << b << ") = " << q::promote_types(a, b)
                  << "\n";
    // A Python scalar operand promotes weakly (NEP 50): the array's dtype wins within its kind.
    std::cout << "  float16 array + Python float -> "
              << q::promote_with_scalar(q::dtype::float16, q::scalar_kind::floating) << "\n";
    std::cout << "  int8 array + Python int -> "
              << q::promote_with_scalar(q::dtype::int8, q::scalar_kind::integer) << "\n";
    std::cout << "  Quasar's `scalar` is " << q::scalar_dtype() << ", `cscalar` is "
              << q::cscalar_dtype() << "\n";
}

void tour_tensors() {
    heading("2. creating tensors");
    // empty() allocates without initialising; fill() sets every element.
    q::tensor z = q::tensor::empty({2, 3}, q::dtype::float64);
    z.fill(0.5);
    std::cout << "empty({2, 3}, float64) filled with 0.5:\n" << z << "\n";

    q::tensor a =
        q::tensor::from_vector(std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
    std::cout << "from_vector, shape " << q::shape_str(a.shape()) << ", dtype " << a.dtype()
              << ", strides " << q::shape_str(a.strides()) << ":\n"
              << a << "\n";
    std::cout << "a.at({1, 2}) = " << a.at<int>({1, 2}) << "\n";

    q::tensor s = q::tensor::scalar_tensor(2.5f);
    std::cout << "scalar_tensor(2.5f): dim " << s.dim() << ", item " << s.item<float>() << "\n";

    std::cout << "a.to(float32):\n" << a.to(q::dtype::float32) << "\n";
}

void tour_views() {
    heading("3. views alias their base");
    q::tensor a =
        q::tensor::from_vector(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});

    q::tensor r = a.reshape({2, 6});
    std::cout << "a.reshape({2, 6}):\n" << r << "\n";

    q::tensor t = a.t();
    std::cout << "a.t(): shape " << q::shape_str(t.shape()) << ", strides "
              << q::shape_str(t.strides()) << ", contiguous " << std::boolalpha << t.is_contiguous()
              << ", dense " << t.is_dense() << "\n"
              << t << "\n";

    q::tensor col = a.slice(1, 1, 4, 2); // a[:, 1:4:2]
    std::cout << "a.slice(1, 1, 4, 2)  (a[:, 1:4:2]): offset " << col.offset() << ", strides "
              << q::shape_str(col.strides()) << "\n"
              << col << "\n";

    q::tensor row = q::tensor::from_vector(std::vector<float>{10, 20, 30, 40});
    q::tensor b = row.expand({3, 4});
    std::cout << "row.expand({3, 4}): strides " << q::shape_str(b.strides())
              << " (stride 0 repeats the row)\n"
              << b << "\n";

    col.fill(-1);
    std::cout << "after col.fill(-1), a (same storage) is:\n" << a << "\n";

    q::tensor c = t.contiguous();
    std::cout << "t.contiguous() copies: same storage as a? " << (c.storage() == a.storage())
              << ", strides " << q::shape_str(c.strides()) << "\n";

    try {
        (void)q::broadcast_shapes({3, 4}, {2, 4});
    } catch (const q::value_error& e) {
        std::cout << "broadcast_shapes((3, 4), (2, 4)) raises value_error: " << e.what() << "\n";
    }
}

void tour_locks() {
    heading("4. lock / unlock on MEMRESOURCE_CPU");
    q::tensor t = q::tensor::empty({2, 4}, q::dtype::float32, q::MEMRESOURCE_CPU);
    // LOCK_WRITE: the pointer stays valid until unlock; no transfer, other copies go stale.
    auto* p = static_cast<float*>(t.lock(q::LOCK_WRITE, q::MEMRESOURCE_CPU));
    for (int i = 0; i < 8; ++i) p[i] = static_cast<float>(i * i);
    show_copies("  while write-locked", t);
    t.unlock(q::LOCK_WRITE, q::MEMRESOURCE_CPU);
    std::cout << "written through the pointer:\n" << t << "\n";

    // The pointer is element 0 of the view: a slice's pointer starts at its offset.
    q::tensor second_row = t.select(0, 1);
    auto* r = static_cast<const float*>(second_row.lock(q::LOCK_READ, q::MEMRESOURCE_CPU));
    std::cout << "t.select(0, 1) locked for reading starts at " << r[0] << "\n";
    second_row.unlock(q::LOCK_READ, q::MEMRESOURCE_CPU);

    // RAII form on a storage.
    {
        q::storage_lock lk(t.storage(), q::LOCK_READWRITE, q::MEMRESOURCE_CPU);
        static_cast<float*>(lk.data())[0] = 100.0f;
    }
    std::cout << "after a storage_lock wrote element 0: t[0, 0] = " << t.at<float>({0, 0}) << "\n";

    // Unlocking what is not locked is a user error, reported and harmless.
    try {
        t.unlock(q::LOCK_READ, q::MEMRESOURCE_CPU);
    } catch (const q::runtime_error& e) {
        std::cout << "double unlock raises runtime_error: " << e.what() << "\n";
    }
}

void tour_coherence() {
    heading("5. storage copy states (the coherence model)");
    auto dev = std::make_shared<simulated_device>();
    q::register_resource(dev);
    const q::resource_id DEV = simulated_device::slot;

    q::tensor t = q::tensor::from_vector(std::vector<float>{1, 2, 3, 4});
    show_copies("  made on the CPU", t);

    // LOCK_READ on the device makes its copy valid by transferring from the valid CPU copy.
    t.lock(q::LOCK_READ, DEV);
    show_copies("  read-locked on the device", t);
    t.unlock(q::LOCK_READ, DEV);

    // LOCK_WRITE on the device invalidates every other copy (no transfer needed).
    auto* d = static_cast<float*>(t.lock(q::LOCK_WRITE, DEV));
    for (int i = 0; i < 4; ++i) d[i] = 10.0f * static_cast<float>(i + 1);
    t.unlock(q::LOCK_WRITE, DEV);
    show_copies("  written on the device", t);

    // Reading on the CPU brings the bytes back.
    std::cout << "  read on the CPU: " << t << "\n";
    show_copies("  after the CPU read", t);

    // A conflicting lock is refused at once, never waited on.
    t.lock(q::LOCK_READ, q::MEMRESOURCE_CPU);
    try {
        t.lock(q::LOCK_WRITE, DEV);
    } catch (const q::runtime_error& e) {
        std::cout << "  write lock on the device while the CPU copy is read-locked: " << e.what()
                  << "\n";
    }
    t.unlock(q::LOCK_READ, q::MEMRESOURCE_CPU);

    // Evicting an unlocked device copy frees it; the CPU copy stays valid.
    t.storage()->evict(DEV);
    show_copies("  after evict(device)", t);
    std::cout << "  host<->device transfers: " << dev->transfers << "\n";

    t = q::tensor();
    q::unregister_resource(DEV);
}

void tour_values() {
    heading("6. runtime values");
    std::vector<q::value> vs{q::value(),
                             q::value(3),
                             q::value(2.5),
                             q::value("text"),
                             q::value(q::tensor::from_vector(std::vector<int64_t>{1, 2, 3})),
                             q::value::make_cell({2})};
    for (const auto& v : vs) std::cout << "  " << v.kind_name() << ": " << v << "\n";
}

} // namespace

int main() {
    try {
        std::cout << "isthmus core tour\n";
        tour_dtypes();
        tour_tensors();
        tour_views();
        tour_locks();
        tour_coherence();
        tour_values();
        std::cout << "\ncore tour done\n";
    } catch (const q::error& e) {
        std::cerr << "core_tour: isthmus error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "core_tour: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
