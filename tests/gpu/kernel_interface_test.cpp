// Every embedded kernel's SPIR-V interface matches what the backend binds: buffers at distinct bindings 0..n-1
// of set 0, exactly one push-constant block, and the workgroup size the registry records. (glslang turns a bare
// `[[vk::push_constant]] Params pc;` into a uniform buffer at binding 0 without a warning, colliding with the
// first buffer; lavapipe ran such kernels, NVIDIA did not. This test catches it without a GPU.)
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "gpu/kernel_registry.h"

namespace dmlgrad {
namespace {

constexpr uint32_t kOpExecutionMode = 16, kOpTypeStruct = 30, kOpTypePointer = 32, kOpVariable = 59,
                   kOpDecorate = 71;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kDecorationBlock = 2, kDecorationBufferBlock = 3, kDecorationBinding = 33,
                   kDecorationDescriptorSet = 34;
constexpr uint32_t kStorageUniform = 2, kStoragePushConstant = 9, kStorageStorageBuffer = 12;

TEST(KernelInterface, EveryKernelHasDistinctBindingsAndOnePushConstantBlock) {
    ASSERT_FALSE(kernel_binaries().empty());
    for (const KernelBinary& k : kernel_binaries()) {
        SCOPED_TRACE(std::string(k.name));
        const auto& w = k.code;
        ASSERT_GT(w.size(), 5u);
        ASSERT_EQ(w[0], 0x07230203u);  // SPIR-V magic
        std::map<uint32_t, std::set<uint32_t>> decorations;      // id -> decorations
        std::map<uint32_t, uint32_t> binding, set, pointee;      // id -> value
        std::vector<std::pair<uint32_t, uint32_t>> variables;    // (id, storage class)
        std::map<uint32_t, uint32_t> pointer_of;                 // variable id -> pointer type id
        uint32_t local_size_x = 0;
        for (size_t i = 5; i < w.size();) {
            const uint32_t op = w[i] & 0xFFFF, n = w[i] >> 16;
            ASSERT_GT(n, 0u);
            ASSERT_LE(i + n, w.size());
            const uint32_t* a = &w[i + 1];
            if (op == kOpDecorate) {
                decorations[a[0]].insert(a[1]);
                if (a[1] == kDecorationBinding) binding[a[0]] = a[2];
                if (a[1] == kDecorationDescriptorSet) set[a[0]] = a[2];
            } else if (op == kOpTypePointer) {
                pointee[a[0]] = a[2];
            } else if (op == kOpVariable) {
                variables.emplace_back(a[1], a[2]);
                pointer_of[a[1]] = a[0];
            } else if (op == kOpExecutionMode && a[1] == kModeLocalSize) {
                local_size_x = a[2];
            }
            (void)kOpTypeStruct;
            i += n;
        }
        EXPECT_EQ(local_size_x, k.workgroup_size);
        int push_blocks = 0;
        std::set<uint32_t> bindings_seen;
        for (auto [id, storage] : variables) {
            if (storage == kStoragePushConstant) ++push_blocks;
            if (storage != kStorageUniform && storage != kStorageStorageBuffer) continue;
            // Storage buffers are Uniform + BufferBlock (SPIR-V 1.3) or StorageBuffer + Block; uniform buffers
            // (ConstantBuffer<T>) Uniform + Block. Either must have a binding of its own.
            const uint32_t block = pointee[pointer_of[id]];
            EXPECT_TRUE(decorations[block].count(kDecorationBufferBlock) || decorations[block].count(kDecorationBlock));
            EXPECT_TRUE(decorations[id].count(kDecorationBinding)) << "variable %" << id << " has no binding";
            EXPECT_EQ(set[id], 0u);
            EXPECT_TRUE(bindings_seen.insert(binding[id]).second) << "binding " << binding[id] << " used twice";
        }
        EXPECT_EQ(push_blocks, 1) << "push constants must be `[[vk::push_constant]] ConstantBuffer<Params> pc;`";
        // Bindings are 0..n-1, as the backend's descriptor set layout declares them.
        uint32_t expected = 0;
        for (uint32_t b : bindings_seen) EXPECT_EQ(b, expected++);
    }
}

}  // namespace
}  // namespace dmlgrad
