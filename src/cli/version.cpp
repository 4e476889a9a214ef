#include "cli/version.h"

#include <fmt/format.h>
#include <spdlog/version.h>
#include <CLI/Version.hpp>

#include <set>

#include "core/error.h"
#include "gpu/gpu.h"

namespace dmlgrad::cli {
namespace {

// The loader's version and each distinct driver, or why there is none (the CPU path works regardless).
std::string vulkan_lines() {
    try {
        std::string text = gpu_api_version();
        std::set<std::string> drivers;
        for (const GpuDeviceInfo& d : list_gpu_devices()) drivers.insert(fmt::format("{} ({})", d.driver, d.name));
        for (const std::string& d : drivers) text += "\ndriver " + d;
        return text;
    } catch (const RuntimeFailure& e) {
        return fmt::format("Vulkan: {}", e.what());
    }
}

}  // namespace

std::string version_text() {
    return fmt::format("dmlgrad {} (commit {})\nbuilt with fmt {}.{}.{}, spdlog {}.{}.{}, CLI11 {}\n{}",
                       DMLGRAD_VERSION, DMLGRAD_COMMIT, FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100,
                       SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH, CLI11_VERSION, vulkan_lines());
}

}  // namespace dmlgrad::cli
