// Until the build embeds kernels/dxbc/ (a table generated like the SPIR-V one, by variant name), no kernel has DXBC
// here and every D3D12 run fails with this message; the backend needs nothing else (tested with those files).
#include "gpu/d3d12/kernel_code.h"

#include <string>

#include "core/error.h"

namespace dmlgrad::d3d12 {

std::span<const uint8_t> dxbc_kernel(std::string_view name) {
    throw RuntimeFailure("this build has no DXBC of kernel " + std::string(name) + " for Direct3D 12");
}

}  // namespace dmlgrad::d3d12
