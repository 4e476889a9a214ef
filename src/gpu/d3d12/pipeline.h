#pragma once
// One kernel's root signature and compute pipeline state, made once per kernel. The layout, for every kernel:
//   parameter 0: the kernel's Params as root constants, the cbuffer at register b0;
//   parameter 1: a descriptor table of binding_count descriptors, entry i for binding i of the GpuProgram, which
//                the kernel declares at register i of its class (t#, u# or b#; b0 is the parameter block).
// Which view each binding needs (structured, byte-address, typed, constant) is read from the kernel's DXBC.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/d3d12/com.h"
#include "gpu/d3d12/dxbc_reflection.h"

namespace dmlgrad::d3d12 {

class Pipeline {
public:
    // `dxbc`: the kernel's compiled code; `binding_count`, `push_bytes`: its GpuProgram's.
    Pipeline(ID3D12Device* device, const std::string& kernel, std::span<const uint8_t> dxbc, uint32_t binding_count,
             uint32_t push_bytes);

    ID3D12RootSignature* root_signature() const { return root_signature_.get(); }
    ID3D12PipelineState* state() const { return state_.get(); }
    // Binding i's resource as the kernel declares it; nullopt for a binding the compiled kernel does not use.
    const std::optional<ShaderResource>& binding(size_t i) const { return bindings_.at(i); }
    uint32_t binding_count() const { return uint32_t(bindings_.size()); }

    static constexpr UINT kConstantsParameter = 0;
    static constexpr UINT kTableParameter = 1;

private:
    std::vector<std::optional<ShaderResource>> bindings_;
    Com<ID3D12RootSignature> root_signature_;
    Com<ID3D12PipelineState> state_;
};

}  // namespace dmlgrad::d3d12
