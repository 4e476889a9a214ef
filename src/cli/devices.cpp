#include "cli/devices.h"

#include <fmt/format.h>

#include "cli/report.h"
#include "gpu/gpu.h"

namespace dmlgrad::cli {

int list_devices(bool json) {
    const auto devices = list_gpu_devices();
    if (json) {
        std::string items;
        for (const auto& d : devices)
            items +=
                fmt::format(R"({}{{"index":{},"name":{},"type":{},"driver":{},"api_version":{},"memory_bytes":{}}})",
                            items.empty() ? "" : ",", d.index, json_string(d.name), json_string(d.type),
                            json_string(d.driver), json_string(d.api_version), d.memory_bytes);
        fmt::print("{{\"devices\":[{}]}}\n", items);
        return 0;
    }
    if (devices.empty()) fmt::print("no GPU devices found\n");
    for (const auto& d : devices)
        fmt::print("{}: {} ({}), driver {}, Vulkan {}, {:.1f} GiB\n", d.index, d.name, d.type, d.driver, d.api_version,
                   double(d.memory_bytes) / double(1ull << 30));
    return 0;
}

}  // namespace dmlgrad::cli
