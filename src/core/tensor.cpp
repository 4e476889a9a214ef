#include "core/tensor.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "core/fatal_signals.h"

namespace dmlgrad {

uint64_t element_count(const Shape& shape) {
    uint64_t n = 1;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    return n;
}

std::string shape_string(const Shape& shape) {
    if (shape.empty()) return "scalar";
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += 'x';
        s += std::to_string(shape[i]);
    }
    return s;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
    std::vector<int64_t> strides(shape.size());
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = s;
        s *= shape[i];
    }
    return strides;
}

HostBuffer::HostBuffer(size_t bytes) : size_(bytes) {
    constexpr size_t kAlign = 64;
    constexpr size_t kHugePage = size_t(2) << 20;
    if (bytes >= 4 * kHugePage) {
        size_t mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
        void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        ::madvise(p, mapped, MADV_HUGEPAGE);  // a hint: without THP it is ordinary memory
        data_ = std::unique_ptr<std::byte, HostBufferRelease>(
            static_cast<std::byte*>(p), HostBufferRelease{HostBufferRelease::Kind::mapping, p, mapped});
        return;
    }
    size_t rounded = std::max((bytes + kAlign - 1) / kAlign * kAlign, kAlign);
    void* p = std::aligned_alloc(kAlign, rounded);
    if (!p) throw std::bad_alloc();
    data_ = std::unique_ptr<std::byte, HostBufferRelease>(static_cast<std::byte*>(p), HostBufferRelease{});
}

HostBuffer HostBuffer::adopt_mapping(void* base, size_t map_bytes, std::byte* data, size_t size) {
    HostBuffer b;
    b.data_ = std::unique_ptr<std::byte, HostBufferRelease>(
        data, HostBufferRelease{HostBufferRelease::Kind::mapping, base, map_bytes});
    b.size_ = size;
    return b;
}

HostBuffer HostBuffer::borrow(std::byte* data, size_t size) {
    HostBuffer b;
    b.data_ = std::unique_ptr<std::byte, HostBufferRelease>(data, HostBufferRelease{HostBufferRelease::Kind::borrowed});
    b.size_ = size;
    return b;
}

void HostBufferRelease::operator()(std::byte* p) const {
    switch (kind) {
        case Kind::heap: std::free(p); break;
        case Kind::mapping:
            forget_mapping(map_base);
            ::munmap(map_base, map_bytes);
            break;
        case Kind::borrowed: break;
    }
}

}  // namespace dmlgrad
