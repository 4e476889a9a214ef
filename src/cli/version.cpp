#include "cli/version.h"

#include <fmt/format.h>
#include <spdlog/version.h>
#include <CLI/Version.hpp>

#include <set>

#include "core/error.h"
#include "gpu/gpu.h"

namespace dmlgrad::cli {
namespace {

// The API's run-time library and each distinct driver; or, after "unavailable: ", why there is none (the CPU
// path works regardless).
std::string api_lines(GpuApi api) {
    if (!gpu_api_built(api)) return "unavailable: not in this build";
    try {
        std::string text = gpu_api_version(api);
        std::set<std::string> drivers;
        for (const GpuDeviceInfo& d : list_gpu_devices(api)) drivers.insert(fmt::format("{} ({})", d.driver, d.name));
        for (const std::string& d : drivers) text += "\ndriver " + d;
        return text;
    } catch (const RuntimeFailure& e) {
        return fmt::format("unavailable: {}", e.what());
    }
}

}  // namespace

std::string version_text() {
    const std::string vulkan = api_lines(GpuApi::vulkan);
    return fmt::format(
        "dmlgrad {} (commit {})\nbuilt with fmt {}.{}.{}, spdlog {}.{}.{}, CLI11 {}\n{}{}\nDirect3D 12 (--api d3d12): "
        "{}",
        DMLGRAD_VERSION, DMLGRAD_COMMIT, FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100,
        SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH, CLI11_VERSION,
        vulkan.rfind("unavailable", 0) == 0 ? "Vulkan: " : "", vulkan, api_lines(GpuApi::d3d12));
}

}  // namespace dmlgrad::cli
