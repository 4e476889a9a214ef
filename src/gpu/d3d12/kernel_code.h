#pragma once
// The kernels compiled to DXBC (shader model 5.0) for the D3D12 backend, by the names of the SPIR-V registry
// (gpu/kernel_registry.h).
#include <cstdint>
#include <span>
#include <string_view>

namespace dmlgrad::d3d12 {

// Throws RuntimeFailure for a kernel this build has no DXBC of.
std::span<const uint8_t> dxbc_kernel(std::string_view name);

}  // namespace dmlgrad::d3d12
