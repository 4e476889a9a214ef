#include "gpu/kernel_registry.h"

#include <stdexcept>
#include <string>

namespace dmlgrad {

const KernelBinary& find_kernel(std::string_view name) {
    for (const KernelBinary& k : kernel_binaries())
        if (k.name == name) return k;
    throw std::logic_error("no compiled kernel named " + std::string(name) + " (see src/gpu/CMakeLists.txt)");
}

std::span<const uint8_t> dxbc_kernel(std::string_view name) {
    for (const DxbcBinary& k : dxbc_binaries())
        if (k.name == name) return k.code;
    return {};
}

}  // namespace dmlgrad
