// The embedded DXBC (gpu/kernel_registry.h, generated from kernels/dxbc/ or the build's own vkd3d-compiler output).
#include "gpu/d3d12/kernel_code.h"

#include <string>

#include "core/error.h"
#include "gpu/kernel_registry.h"

namespace dmlgrad::d3d12 {

std::span<const uint8_t> dxbc_kernel(std::string_view name) {
    const std::span<const uint8_t> code = dmlgrad::dxbc_kernel(name);
    if (code.empty())
        throw RuntimeFailure("this build has no DXBC of kernel " + std::string(name) +
                             " for Direct3D 12 (kernels/README.md lists the Vulkan-only kernels)");
    return code;
}

}  // namespace dmlgrad::d3d12
