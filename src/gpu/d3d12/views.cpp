#include "gpu/d3d12/views.h"

#include <stdexcept>

namespace dmlgrad::d3d12 {
namespace {

DXGI_FORMAT typed_format(uint32_t element_bytes) {
    switch (element_bytes) {
        case 4: return DXGI_FORMAT_R32_UINT;
        case 8: return DXGI_FORMAT_R32G32_UINT;
        case 12: return DXGI_FORMAT_R32G32B32_UINT;
        default: return DXGI_FORMAT_R32G32B32A32_UINT;
    }
}

// The format, flags and element size of a buffer view of `resource`.
struct ViewShape {
    DXGI_FORMAT format = DXGI_FORMAT_UNKNOWN;
    bool raw = false;
    uint32_t element_bytes = 0;
};

ViewShape view_shape(const ShaderResource& r) {
    switch (r.view) {
        case BufferView::raw: return {DXGI_FORMAT_R32_TYPELESS, true, 4};
        case BufferView::typed: return {typed_format(r.element_bytes), false, r.element_bytes};
        default: return {DXGI_FORMAT_UNKNOWN, false, r.element_bytes};  // structured
    }
}

}  // namespace

void write_view(ID3D12Device* device, D3D12_CPU_DESCRIPTOR_HANDLE at, const ShaderResource& resource,
                ID3D12Resource* buffer, uint64_t offset, uint64_t range) {
    if (resource.view == BufferView::constant) {
        D3D12_CONSTANT_BUFFER_VIEW_DESC view{};
        view.BufferLocation = buffer->GetGPUVirtualAddress() + offset;
        const uint64_t block = D3D12_CONSTANT_BUFFER_DATA_PLACEMENT_ALIGNMENT;
        view.SizeInBytes = UINT((range + block - 1) / block * block);
        device->CreateConstantBufferView(&view, at);
        return;
    }
    const ViewShape shape = view_shape(resource);
    if (shape.element_bytes == 0 || offset % shape.element_bytes || range % shape.element_bytes)
        throw std::logic_error("d3d12: a window of " + resource.name + " that is not whole elements");
    const UINT64 first = offset / shape.element_bytes;
    const auto count = UINT(range / shape.element_bytes);
    const UINT stride = resource.view == BufferView::structured ? shape.element_bytes : 0;
    if (resource.writable) {
        D3D12_UNORDERED_ACCESS_VIEW_DESC view{};
        view.Format = shape.format;
        view.ViewDimension = D3D12_UAV_DIMENSION_BUFFER;
        view.Buffer = {first, count, stride, 0, shape.raw ? D3D12_BUFFER_UAV_FLAG_RAW : D3D12_BUFFER_UAV_FLAG_NONE};
        device->CreateUnorderedAccessView(buffer, nullptr, &view, at);
    } else {
        D3D12_SHADER_RESOURCE_VIEW_DESC view{};
        view.Format = shape.format;
        view.ViewDimension = D3D12_SRV_DIMENSION_BUFFER;
        view.Shader4ComponentMapping = D3D12_DEFAULT_SHADER_4_COMPONENT_MAPPING;
        view.Buffer = {first, count, stride, shape.raw ? D3D12_BUFFER_SRV_FLAG_RAW : D3D12_BUFFER_SRV_FLAG_NONE};
        device->CreateShaderResourceView(buffer, &view, at);
    }
}

void DescriptorTables::reset(ID3D12Device* device, uint32_t descriptors) {
    used_ = 0;
    if (heap_ && capacity_ >= descriptors) return;
    D3D12_DESCRIPTOR_HEAP_DESC desc{};
    desc.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
    desc.NumDescriptors = std::max<uint32_t>(descriptors, 64);
    desc.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
    check(device->CreateDescriptorHeap(&desc, heap_.iid(), heap_.put()), "CreateDescriptorHeap");
    capacity_ = desc.NumDescriptors;
    increment_ = device->GetDescriptorHandleIncrementSize(D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV);
    cpu_start_ = cpu_heap_start(heap_.get());
    gpu_start_ = gpu_heap_start(heap_.get());
}

uint32_t DescriptorTables::add(uint32_t count) {
    if (used_ + count > capacity_) throw std::logic_error("d3d12: more descriptor tables than reset() made room for");
    const uint32_t table = used_;
    used_ += count;
    return table;
}

D3D12_CPU_DESCRIPTOR_HANDLE DescriptorTables::cpu(uint32_t table, uint32_t entry) const {
    return {cpu_start_.ptr + SIZE_T(table + entry) * increment_};
}

D3D12_GPU_DESCRIPTOR_HANDLE DescriptorTables::gpu(uint32_t table) const {
    return {gpu_start_.ptr + UINT64(table) * increment_};
}

}  // namespace dmlgrad::d3d12
