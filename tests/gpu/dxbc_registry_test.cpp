// The embedded DXBC (src/gpu/kernel_registry.h, cmake/embed_dxbc.cmake): every entry is a well-formed DXBC
// container of a variant the SPIR-V table also has, and the generic kernels of relu and clip exist for every
// element type.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gpu/kernel_registry.h"

namespace dmlgrad {
namespace {

uint32_t read_u32(std::span<const uint8_t> bytes, size_t offset) {
    return uint32_t(bytes[offset]) | uint32_t(bytes[offset + 1]) << 8 | uint32_t(bytes[offset + 2]) << 16 |
           uint32_t(bytes[offset + 3]) << 24;
}

TEST(DxbcRegistry, EveryEntryIsADxbcContainerOfAKnownVariant) {
    ASSERT_FALSE(dxbc_binaries().empty());
    for (const DxbcBinary& k : dxbc_binaries()) {
        SCOPED_TRACE(std::string(k.name));
        EXPECT_NO_THROW(find_kernel(k.name));
        ASSERT_GE(k.code.size(), 32u);
        EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(k.code.data()), 4), "DXBC");
        EXPECT_EQ(read_u32(k.code, 24), k.code.size());  // the container's own total size
    }
}

TEST(DxbcRegistry, ReluAndClipHaveDxbcForEveryElementType) {
    for (const char* t : {"f32", "f16", "i32", "i16", "i8"})
        EXPECT_FALSE(dxbc_kernel(std::string("relu_grad_") + t).empty()) << t;
    for (const char* t : {"f32", "f16", "i32", "i16", "i8", "u32", "u16", "u8", "i64", "u64"})
        EXPECT_FALSE(dxbc_kernel(std::string("clip_grad_") + t).empty()) << t;
}

TEST(DxbcRegistry, AVulkanOnlyVariantHasNone) {
    EXPECT_NO_THROW(find_kernel("maxpool_grad_fast_k3s1_f32"));
    EXPECT_TRUE(dxbc_kernel("maxpool_grad_fast_k3s1_f32").empty());
}

}  // namespace
}  // namespace dmlgrad
