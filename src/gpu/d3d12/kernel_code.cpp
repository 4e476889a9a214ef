#include "gpu/d3d12/kernel_code.h"

#include <string>

#include "core/error.h"

namespace dmlgrad::d3d12 {

std::span<const uint8_t> dxbc_kernel(std::string_view name) {
    throw RuntimeFailure("this build has no DXBC of kernel " + std::string(name) + " for Direct3D 12");
}

}  // namespace dmlgrad::d3d12
