// The kernel family tables against the build (no device needed): every name a family can choose was compiled by
// src/gpu/CMakeLists.txt, every compiled variant of max-pool and resample grad is one a family can choose, and the
// families marked for Direct3D 12 are those with DXBC.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gpu/kernel_registry.h"
#include "gpu/ops/maxpool_grad_kernels.h"
#include "gpu/ops/resample_grad_kernels.h"

namespace dmlgrad::testing {
namespace {

// The names the families produce, each once.
template <class Variant>
std::set<std::string> names_of(const std::vector<Variant>& variants, std::string (*name)(const Variant&)) {
    std::set<std::string> names;
    for (const Variant& v : variants) EXPECT_TRUE(names.insert(name(v)).second) << name(v) << " twice";
    return names;
}

std::set<std::string> compiled_names_starting(std::string_view prefix) {
    std::set<std::string> names;
    for (const KernelBinary& k : kernel_binaries())
        if (k.name.starts_with(prefix)) names.insert(std::string(k.name));
    return names;
}

TEST(KernelFamilies, MaxPoolFamiliesNameExactlyTheCompiledVariants) {
    const std::set<std::string> chosen = names_of(maxpool_gpu::compiled_variants(), maxpool_gpu::kernel_name);
    EXPECT_EQ(chosen, compiled_names_starting("maxpool_grad_"));
    EXPECT_EQ(chosen.size(), 50u);  // the count CMake's loops give: 2 x (3 + 2 + 1 + 2 + 1 + 1 + 2) + 13 fp16 + 7 fp32
                                    // fast + cellwords (two), the two-pass long-run variants and the bands (fp16)
                                    // + the cell rows (fp32)
}

TEST(KernelFamilies, ResampleFamiliesNameExactlyTheCompiledVariants) {
    const std::set<std::string> chosen = names_of(resample_gpu::compiled_variants(), resample_gpu::kernel_name);
    EXPECT_EQ(chosen, compiled_names_starting("resample_grad_"));
    EXPECT_EQ(chosen.size(), 48u);  // 4 block, 10 lines, 3 rows, 4 planes, 2 sparse walks, 6 walks, 2 fractions,
                                    // 2 elements, 4 one-tap, 4 plain and 3 fixed-tap strips, 4 runs
}

TEST(KernelFamilies, EveryFamilyRunsOnVulkan) {
    for (const auto& v : maxpool_gpu::compiled_variants())
        EXPECT_TRUE(maxpool_gpu::family_apis(v.family).has(GpuApi::vulkan)) << maxpool_gpu::kernel_name(v);
    for (const auto& v : resample_gpu::compiled_variants())
        EXPECT_TRUE(resample_gpu::family_apis(v.family).has(GpuApi::vulkan)) << resample_gpu::kernel_name(v);
}

// The families' `apis` and the DXBC the build embeds (cmake/hlsl_kernels.cmake's DMLGRAD_D3D12_VARIANTS) say the
// same: a family marked for Direct3D 12 has DXBC for every variant, a Vulkan-only family for none.
TEST(KernelFamilies, TheFamiliesMarkedForD3d12AreExactlyThoseWithDxbc) {
    for (const auto& v : maxpool_gpu::compiled_variants())
        EXPECT_EQ(maxpool_gpu::family_apis(v.family).has(GpuApi::d3d12),
                  !dxbc_kernel(maxpool_gpu::kernel_name(v)).empty())
            << maxpool_gpu::kernel_name(v);
    for (const auto& v : resample_gpu::compiled_variants())
        EXPECT_EQ(resample_gpu::family_apis(v.family).has(GpuApi::d3d12),
                  !dxbc_kernel(resample_gpu::kernel_name(v)).empty())
            << resample_gpu::kernel_name(v);
}

}  // namespace
}  // namespace dmlgrad::testing
