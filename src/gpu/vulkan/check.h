#pragma once
// VkResult checking: every call that can fail goes through check(), which throws RuntimeFailure naming the call.
#include "gpu/vulkan/loader.h"

namespace dmlgrad::vk {

// What to do when there is no Vulkan at all (one line, appended to the failure).
inline constexpr const char* kNoDeviceAdvice =
    "run with --cpu, or install a Vulkan driver (the package mesa-vulkan-drivers provides a CPU one)";

const char* result_name(VkResult result);

// Throws RuntimeFailure "<call> failed: VK_ERROR_..."; out-of-memory results say so in words.
void check(VkResult result, const char* call);

}  // namespace dmlgrad::vk
