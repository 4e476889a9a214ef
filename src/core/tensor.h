#pragma once
// A dense row-major tensor held in host memory: a dtype, a shape and an owned, 64-byte aligned byte buffer.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace dmlgrad {

using Shape = std::vector<int64_t>;

uint64_t element_count(const Shape& shape);
// "8x32x128x128"; "scalar" for a 0-d shape.
std::string shape_string(const Shape& shape);
// Row-major strides in elements.
std::vector<int64_t> row_major_strides(const Shape& shape);

// Frees a HostBuffer's memory: munmap for mappings, free() for heap memory, nothing for borrowed memory.
struct HostBufferRelease {
    enum class Kind { heap, mapping, borrowed } kind = Kind::heap;
    void* map_base = nullptr;  // a mapping: what munmap takes
    size_t map_bytes = 0;
    void operator()(std::byte* p) const;
};

// Uninitialized, 64-byte aligned host memory. Movable, not copyable. Large buffers are mapped with
// transparent huge pages, so filling a gigabyte costs hundreds of page faults rather than 260,000.
class HostBuffer {
public:
    HostBuffer() = default;
    explicit HostBuffer(size_t bytes);
    // A mapping made elsewhere (a file mapped by load_npy): `data` lies in [base, base + map_bytes), and the whole
    // mapping is unmapped with the buffer.
    static HostBuffer adopt_mapping(void* base, size_t map_bytes, std::byte* data, size_t size);
    // Memory that its owner keeps alive longer than this buffer (an output file's mapping, see NpyOutput).
    static HostBuffer borrow(std::byte* data, size_t size);
    std::byte* data() { return data_.get(); }
    const std::byte* data() const { return data_.get(); }
    size_t size() const { return size_; }

private:
    std::unique_ptr<std::byte, HostBufferRelease> data_;
    size_t size_ = 0;
};

// What a .npy header tells about a tensor, before its payload is read.
struct TensorInfo {
    DType dtype = DType::f32;
    Shape shape;
    uint64_t elements() const { return element_count(shape); }
    uint64_t bytes() const { return elements() * dtype_size(dtype); }
};

struct Tensor {
    TensorInfo info;
    HostBuffer buffer;

    Tensor() = default;
    explicit Tensor(TensorInfo i) : info(std::move(i)), buffer(info.bytes()) {}
    Tensor(TensorInfo i, HostBuffer memory) : info(std::move(i)), buffer(std::move(memory)) {}

    DType dtype() const { return info.dtype; }
    const Shape& shape() const { return info.shape; }
    uint64_t elements() const { return info.elements(); }
    size_t bytes() const { return info.bytes(); }
    std::span<std::byte> span() { return {buffer.data(), bytes()}; }
    std::span<const std::byte> span() const { return {buffer.data(), bytes()}; }
    template <class T>
    T* as() {
        return reinterpret_cast<T*>(buffer.data());
    }
    template <class T>
    const T* as() const {
        return reinterpret_cast<const T*>(buffer.data());
    }
};

}  // namespace dmlgrad
