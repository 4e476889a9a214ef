#include "gpu/kernel_registry.h"

#include <stdexcept>
#include <string>

namespace dmlgrad {

const KernelBinary& find_kernel(std::string_view name) {
    for (const KernelBinary& k : kernel_binaries())
        if (k.name == name) return k;
    throw std::logic_error("no compiled kernel named " + std::string(name) + " (see src/gpu/CMakeLists.txt)");
}

}  // namespace dmlgrad
