#pragma once
// The D3D12 runtime of this platform: where devices, root-signature serialization and fence events come from.
// Linux: vkd3d (D3D12 on Vulkan; libvkd3d.so.1, opened at run time like the Vulkan loader) on the Vulkan physical
// devices, in runtime_vkd3d.cpp, the one file that knows vkd3d. Windows: d3d12.dll on the DXGI adapters (planned
// in docs/ARCHITECTURE.md, not built). The signatures carry no D3D12 type, so this file needs no D3D12 header:
// the vkd3d file includes vkd3d's own declarations, which cannot sit beside DirectX-Headers'.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu.h"

namespace dmlgrad::d3d12 {

// "vkd3d 1.2.0 on Vulkan loader 1.3.239". Throws RuntimeFailure when the runtime is missing.
std::string runtime_version();

// The adapters D3D12 can run on, in the runtime's order (the index is the `--device` number).
std::vector<GpuDeviceInfo> list_adapters();

// `requested` when given (UsageError if out of range, RuntimeFailure if unusable), else the preferred adapter:
// discrete, integrated, virtual, CPU.
int choose_adapter(std::optional<int> requested);

// A new device on adapter `index` at feature level 11_0, as the interface `iid` (a GUID) names: an owned COM
// reference. Throws RuntimeFailure.
void* create_device(int index, const void* iid);

// A root signature description (D3D12_ROOT_SIGNATURE_DESC, version 1.0) serialized as CreateRootSignature takes
// it. Throws std::logic_error with the runtime's message for a description it refuses (a programming error).
std::vector<uint8_t> serialize_root_signature(const void* desc);

// An event that ID3D12Fence::SetEventOnCompletion signals and the host waits on.
class FenceEvent {
public:
    FenceEvent();
    ~FenceEvent();
    FenceEvent(const FenceEvent&) = delete;
    FenceEvent& operator=(const FenceEvent&) = delete;
    void* handle() const { return handle_; }  // a HANDLE
    void wait();                              // until signalled, then unsignalled again

private:
    void* handle_ = nullptr;
};

}  // namespace dmlgrad::d3d12
