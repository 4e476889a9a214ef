#pragma once
// What a compiled kernel (DXBC, shader model 5.0) declares, read from its resource-definition chunk (RDEF): for each
// resource, its register class, register and view. The backend builds the root signature and the descriptors from
// it, so the kernels' choice of buffer types (structured, byte-address or typed) needs no second description.
// API-free: plain bytes in, plain structs out.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dmlgrad::d3d12 {

// How a buffer is viewed, as D3D12's descriptors distinguish them.
enum class BufferView : uint8_t {
    constant,    // cbuffer (b#)
    structured,  // [RW]StructuredBuffer<T> (t# / u#): element_bytes = the structure's stride
    raw,         // [RW]ByteAddressBuffer: 4-byte words
    typed,       // [RW]Buffer<uintN>: element_bytes = 4 * N, 32-bit unsigned components
};

struct ShaderResource {
    std::string name;
    BufferView view = BufferView::structured;
    bool writable = false;  // a UAV (u#); otherwise an SRV (t#) or a cbuffer (b#)
    uint32_t reg = 0;       // the register number within its class
    uint32_t element_bytes = 0;
};

// The resources of a DXBC container, in declaration order. Throws std::invalid_argument for bytes that are not a
// DXBC container with an RDEF chunk, or a resource this backend cannot bind (textures, samplers, non-uint types).
std::vector<ShaderResource> reflect_dxbc(std::span<const uint8_t> dxbc);

}  // namespace dmlgrad::d3d12
