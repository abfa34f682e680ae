// Bool memory from other libraries: its bytes checked and normalised to 0 and 1 on import.
#include "boundary/bool_bytes.hpp"

#include "isthmus/ops/reduce.hpp"

namespace isthmus::boundary {

// Note [bool bytes]
// ~~~~~~~~~~~~~~~~~
// isthmus's bool storage holds the bytes 0 and 1 only: its kernels read a bool as C++ reads
// one, and a byte like 217 there is undefined behaviour in C++ (sum counted the byte, astype
// kept it, sort indexed its buckets with it and corrupted the heap). Other libraries make such
// memory without complaint: NumPy's u8.view(bool), torch's .view(torch.bool), a DLPack or CUDA
// array interface producer, a crafted pickle payload; they read a nonzero byte as true. So every
// entry point that adopts bool memory from elsewhere checks its bytes (one max reduction over a
// byte view; a bool import costs that pass): memory holding only 0 and 1 is shared as usual,
// other memory is copied as byte != 0, NumPy's reading of it, and refused with copy=False
// (ValueError), since a copy would not share the producer's writes. An import that copies
// anyway converts the same way. Inside isthmus no view reinterprets other bytes as bool or
// bool storage as bytes (tensor::view_as refuses both). What stays possible is a producer
// writing other bytes into memory it shared earlier: the sort and search kernels read bool
// rows as byte != 0 (cpu/sort.cpp), so their order is NumPy's and no index comes from a raw
// byte; other ops then see the bytes as C++ does (a sum may count them), never outside the
// tensor's memory.

namespace {

tensor byte_view(void* data, const shape_t& shape, const shape_t& strides, resource_id resource) {
    return tensor::wrap(data, dtype::uint8, shape, strides, resource, {});
}

} // namespace

bool bool_bytes_valid(void* data, const shape_t& shape, const shape_t& strides,
                      resource_id resource) {
    const tensor bytes = byte_view(data, shape, strides, resource);
    if (bytes.numel() == 0) return true;
    return isthmus::max(bytes).item<uint8_t>() <= 1;
}

tensor bools_from_bytes(void* data, const shape_t& shape, const shape_t& strides,
                        resource_id resource) {
    tensor out = tensor::empty(shape, dtype::bool_, resource);
    if (out.numel() > 0) out.copy_from(byte_view(data, shape, strides, resource)); // byte != 0
    return out;
}

} // namespace isthmus::boundary
