#include "gpu/d3d12/com.h"

#include <fmt/format.h>

#include "core/error.h"

namespace dmlgrad::d3d12 {

void check(HRESULT result, const std::string& what) {
    if (SUCCEEDED(result)) return;
    if (result == E_OUTOFMEMORY) throw RuntimeFailure("out of GPU memory: " + what);
    throw RuntimeFailure(fmt::format("Direct3D 12: {} failed (HRESULT 0x{:08X})", what, uint32_t(result)));
}

}  // namespace dmlgrad::d3d12
