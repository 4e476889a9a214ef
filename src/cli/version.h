#pragma once
// What `dmlgrad --version` prints: the version (set once, in CMakeLists.txt), the commit it was built from, the
// libraries built in, and the Vulkan loader and drivers found at run time.
#include <string>

namespace dmlgrad::cli {

std::string version_text();

}  // namespace dmlgrad::cli
