#include "core/tensor.h"

#include <cstdlib>
#include <new>

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
    size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    if (rounded == 0) rounded = kAlign;
    void* p = std::aligned_alloc(kAlign, rounded);
    if (!p) throw std::bad_alloc();
    data_.reset(static_cast<std::byte*>(p));
}

void HostBuffer::Free::operator()(std::byte* p) const { std::free(p); }

}  // namespace dmlgrad
