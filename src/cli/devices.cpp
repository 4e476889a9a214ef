#include "cli/devices.h"

#include <fmt/format.h>

#include "cli/report.h"
#include "core/error.h"
#include "gpu/gpu.h"

namespace dmlgrad::cli {
namespace {

// The devices of Direct3D 12, or why there are none: Vulkan's list alone decides the exit status.
std::vector<GpuDeviceInfo> d3d12_devices(std::string& unavailable) {
    if (!gpu_api_built(GpuApi::d3d12)) {
        unavailable = "not in this build";
        return {};
    }
    try {
        return list_gpu_devices(GpuApi::d3d12);
    } catch (const RuntimeFailure& e) {
        unavailable = e.what();
        return {};
    }
}

std::string devices_json(const std::vector<GpuDeviceInfo>& devices, GpuApi api) {
    std::string items;
    for (const auto& d : devices)
        items += fmt::format(
            R"({}{{"index":{},"name":{},"type":{},"driver":{},"api_version":{},"memory_bytes":{},"api":{}}})",
            items.empty() ? "" : ",", d.index, json_string(d.name), json_string(d.type), json_string(d.driver),
            json_string(d.api_version), d.memory_bytes, json_string(gpu_api_name(api)));
    return items;
}

void print_devices(const std::vector<GpuDeviceInfo>& devices, const char* api_label) {
    for (const auto& d : devices)
        fmt::print("{}: {} ({}), driver {}, {} {}, {:.1f} GiB\n", d.index, d.name, d.type, d.driver, api_label,
                   d.api_version, double(d.memory_bytes) / double(1ull << 30));
}

}  // namespace

int list_devices(bool json) {
    const auto devices = list_gpu_devices(GpuApi::vulkan);
    std::string d3d12_unavailable;
    const auto d3d12 = d3d12_devices(d3d12_unavailable);
    if (json) {
        const std::string vulkan_items = devices_json(devices, GpuApi::vulkan);
        const std::string d3d12_items = devices_json(d3d12, GpuApi::d3d12);
        fmt::print("{{\"devices\":[{}{}{}]}}\n", vulkan_items, vulkan_items.empty() || d3d12_items.empty() ? "" : ",",
                   d3d12_items);
        return 0;
    }
    if (devices.empty()) fmt::print("no GPU devices found\n");
    print_devices(devices, "Vulkan");
    if (d3d12_unavailable.empty()) {
        fmt::print("with --api d3d12 (Direct3D 12):\n");
        print_devices(d3d12, "Direct3D 12");
    } else {
        fmt::print("--api d3d12 (Direct3D 12): unavailable: {}\n", d3d12_unavailable);
    }
    return 0;
}

}  // namespace dmlgrad::cli
