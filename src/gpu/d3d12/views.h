#pragma once
// Descriptors: the view of a buffer window as a kernel declares the binding, and the shader-visible heap that
// holds a run's descriptor tables.
#include <cstdint>

#include "gpu/d3d12/com.h"
#include "gpu/d3d12/dxbc_reflection.h"

namespace dmlgrad::d3d12 {

// Writes at `at` the view of bytes [offset, offset + range) of `buffer` that `resource` needs: a constant-buffer,
// shader-resource or unordered-access view of the element type the kernel declares. `offset` and `range` are
// multiples of the element (and of 256 bytes for a constant buffer, whose range is rounded up to 256).
void write_view(ID3D12Device* device, D3D12_CPU_DESCRIPTOR_HANDLE at, const ShaderResource& resource,
                ID3D12Resource* buffer, uint64_t offset, uint64_t range);

// A shader-visible CBV/SRV/UAV heap, kept and grown; tables are handed out from its start after each reset().
class DescriptorTables {
public:
    // Room for `descriptors` from now on (earlier tables are dropped: the previous run has finished).
    void reset(ID3D12Device* device, uint32_t descriptors);
    // A new table of `count` descriptors: its index (its first descriptor).
    uint32_t add(uint32_t count);
    D3D12_CPU_DESCRIPTOR_HANDLE cpu(uint32_t table, uint32_t entry) const;
    D3D12_GPU_DESCRIPTOR_HANDLE gpu(uint32_t table) const;
    ID3D12DescriptorHeap* heap() const { return heap_.get(); }

private:
    Com<ID3D12DescriptorHeap> heap_;
    uint32_t capacity_ = 0, used_ = 0, increment_ = 0;
    D3D12_CPU_DESCRIPTOR_HANDLE cpu_start_{};
    D3D12_GPU_DESCRIPTOR_HANDLE gpu_start_{};
};

}  // namespace dmlgrad::d3d12
