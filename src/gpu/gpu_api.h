#pragma once
// The GPU APIs a kernel family can run on. Every family runs on Vulkan; a D3D12 backend marks the families whose
// kernels it has (the family tables of src/gpu/ops/*_kernels.h).
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace dmlgrad {

enum class GpuApi : uint8_t { vulkan, d3d12 };

// "vulkan", "d3d12".
constexpr std::string_view gpu_api_name(GpuApi api) { return api == GpuApi::vulkan ? "vulkan" : "d3d12"; }

// A set of APIs, as bits.
class ApiSet {
public:
    constexpr ApiSet(std::initializer_list<GpuApi> apis) {
        for (GpuApi api : apis) bits_ |= bit(api);
    }
    constexpr bool has(GpuApi api) const { return (bits_ & bit(api)) != 0; }
    constexpr bool operator==(const ApiSet&) const = default;

private:
    static constexpr uint8_t bit(GpuApi api) { return uint8_t(1u << uint8_t(api)); }
    uint8_t bits_ = 0;
};

inline constexpr ApiSet kEveryApi{GpuApi::vulkan, GpuApi::d3d12};

}  // namespace dmlgrad
