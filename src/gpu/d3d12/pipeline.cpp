#include "gpu/d3d12/pipeline.h"

#include <stdexcept>

#include "gpu/d3d12/runtime.h"

namespace dmlgrad::d3d12 {
namespace {

// Binding i of the program for each resource the kernel declares (the parameter block excepted).
std::vector<std::optional<ShaderResource>> program_bindings(const std::string& kernel,
                                                            const std::vector<ShaderResource>& resources,
                                                            uint32_t binding_count) {
    std::vector<std::optional<ShaderResource>> bindings(binding_count);
    for (const ShaderResource& r : resources) {
        if (r.view == BufferView::constant && r.reg == 0) continue;  // the parameter block: root constants
        if (r.reg >= binding_count || bindings[r.reg])
            throw std::logic_error("d3d12: kernel " + kernel + " declares " + r.name + " at register " +
                                   std::to_string(r.reg) + ", which is no binding of its program");
        bindings[r.reg] = r;
    }
    return bindings;
}

D3D12_DESCRIPTOR_RANGE_TYPE range_type(const ShaderResource& r) {
    if (r.view == BufferView::constant) return D3D12_DESCRIPTOR_RANGE_TYPE_CBV;
    return r.writable ? D3D12_DESCRIPTOR_RANGE_TYPE_UAV : D3D12_DESCRIPTOR_RANGE_TYPE_SRV;
}

}  // namespace

Pipeline::Pipeline(ID3D12Device* device, const std::string& kernel, std::span<const uint8_t> dxbc,
                   uint32_t binding_count, uint32_t push_bytes)
    : bindings_(program_bindings(kernel, reflect_dxbc(dxbc), binding_count)) {
    std::vector<D3D12_DESCRIPTOR_RANGE> ranges;
    for (uint32_t i = 0; i < binding_count; ++i) {
        if (!bindings_[i]) continue;
        D3D12_DESCRIPTOR_RANGE range{};
        range.RangeType = range_type(*bindings_[i]);
        range.NumDescriptors = 1;
        range.BaseShaderRegister = bindings_[i]->reg;
        range.OffsetInDescriptorsFromTableStart = i;
        ranges.push_back(range);
    }
    D3D12_ROOT_PARAMETER parameters[2]{};
    parameters[kConstantsParameter].ParameterType = D3D12_ROOT_PARAMETER_TYPE_32BIT_CONSTANTS;
    parameters[kConstantsParameter].Constants.Num32BitValues = push_bytes / 4;
    parameters[kConstantsParameter].ShaderVisibility = D3D12_SHADER_VISIBILITY_ALL;
    parameters[kTableParameter].ParameterType = D3D12_ROOT_PARAMETER_TYPE_DESCRIPTOR_TABLE;
    parameters[kTableParameter].DescriptorTable.NumDescriptorRanges = UINT(ranges.size());
    parameters[kTableParameter].DescriptorTable.pDescriptorRanges = ranges.data();
    parameters[kTableParameter].ShaderVisibility = D3D12_SHADER_VISIBILITY_ALL;
    D3D12_ROOT_SIGNATURE_DESC desc{};
    desc.NumParameters = 2;
    desc.pParameters = parameters;
    const std::vector<uint8_t> serialized = serialize_root_signature(&desc);
    check(device->CreateRootSignature(0, serialized.data(), serialized.size(), root_signature_.iid(),
                                      root_signature_.put()),
          "CreateRootSignature for " + kernel);

    D3D12_COMPUTE_PIPELINE_STATE_DESC pso{};
    pso.pRootSignature = root_signature_.get();
    pso.CS.pShaderBytecode = dxbc.data();
    pso.CS.BytecodeLength = dxbc.size();
    check(device->CreateComputePipelineState(&pso, state_.iid(), state_.put()), "creating the pipeline of " + kernel);
}

}  // namespace dmlgrad::d3d12
