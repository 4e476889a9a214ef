#pragma once
// The Direct3D 12 backend behind gpu.h: the same GpuPrograms as the Vulkan backend, through D3D12's API.
#include <memory>
#include <optional>

#include "gpu/gpu.h"

namespace dmlgrad::d3d12 {

// `adapter`: an index of list_adapters(), or the preferred adapter.
std::unique_ptr<Backend> make_d3d12_backend(std::optional<int> adapter, const GpuBackendOptions& options = {});

}  // namespace dmlgrad::d3d12
