// Every embedded kernel's SPIR-V interface matches what the backend binds: buffers at distinct bindings 0..n-1
// of set 0, exactly one push-constant block, and the workgroup size the registry records. (glslang turns a bare
// `[[vk::push_constant]] Params pc;` into a uniform buffer at binding 0 without a warning, colliding with the
// first buffer; lavapipe ran such kernels, NVIDIA did not. This test catches it without a GPU.) And the
// push-constant block is the host's Params (kernels/interface/<kernel>.h) as the kernel compiled it: 32-bit
// scalars at offsets 0, 4, 8, ..., sizeof(Params) in all (HLSL pads vectors and arrays where C++ does not).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "gpu/kernel_registry.h"
#include "interface/clip_grad.h"
#include "interface/maxpool_grad.h"
#include "interface/relu_grad.h"
#include "interface/resample_grad.h"
#include "interface/slice_grad.h"
#include "interface/slice_grad_spans.h"
#include "interface/slice_grad_walk.h"

namespace dmlgrad {
namespace {

constexpr uint32_t kOpExecutionMode = 16, kOpTypeInt = 21, kOpTypeFloat = 22, kOpTypeStruct = 30, kOpTypePointer = 32,
                   kOpVariable = 59, kOpDecorate = 71, kOpMemberDecorate = 72;
constexpr uint32_t kModeLocalSize = 17;
constexpr uint32_t kDecorationBlock = 2, kDecorationBufferBlock = 3, kDecorationBinding = 33,
                   kDecorationDescriptorSet = 34, kDecorationOffset = 35;
constexpr uint32_t kStorageUniform = 2, kStoragePushConstant = 9, kStorageStorageBuffer = 12;

// sizeof the Params of each kernel, by name prefix (every compiled kernel must match one).
size_t expected_push_bytes(std::string_view kernel) {
    const std::pair<std::string_view, size_t> params[] = {
        {"relu_grad_", sizeof(kernels::relu_grad::Params)},
        {"clip_grad_", sizeof(kernels::clip_grad::Params)},
        {"slice_grad_walk_", sizeof(kernels::slice_grad_walk::WalkParams)},  // before slice_grad_
        {"slice_grad_spans_", sizeof(kernels::slice_grad_spans::SpansParams)},
        {"slice_grad_", sizeof(kernels::slice_grad::Params)},
        {"maxpool_grad_", sizeof(kernels::maxpool_grad::Params)},
        {"resample_grad_block_", sizeof(kernels::resample_grad::BlockParams)},  // before resample_grad_
        {"resample_grad_", sizeof(kernels::resample_grad::Params)},
    };
    for (auto [prefix, bytes] : params)
        if (kernel.starts_with(prefix)) return bytes;
    return 0;
}

// The parts of a SPIR-V module this test reads.
struct Module {
    std::map<uint32_t, std::set<uint32_t>> decorations;               // id -> decorations
    std::map<uint32_t, uint32_t> binding, set, pointee;               // id -> value
    std::vector<std::pair<uint32_t, uint32_t>> variables;             // (id, storage class)
    std::map<uint32_t, uint32_t> pointer_of;                          // variable id -> pointer type id
    std::map<uint32_t, std::vector<uint32_t>> struct_members;         // struct id -> member type ids
    std::map<uint32_t, std::map<uint32_t, uint32_t>> member_offsets;  // struct id -> member -> byte offset
    std::set<uint32_t> scalars32;                                     // 32-bit int and float types
    uint32_t local_size_x = 0;
};

Module parse(std::span<const uint32_t> w) {
    Module m;
    for (size_t i = 5; i < w.size();) {
        const uint32_t op = w[i] & 0xFFFF, n = w[i] >> 16;
        if (n == 0 || i + n > w.size()) throw std::runtime_error("malformed SPIR-V");
        const uint32_t* a = &w[i + 1];
        if (op == kOpDecorate) {
            m.decorations[a[0]].insert(a[1]);
            if (a[1] == kDecorationBinding) m.binding[a[0]] = a[2];
            if (a[1] == kDecorationDescriptorSet) m.set[a[0]] = a[2];
        } else if (op == kOpMemberDecorate && a[2] == kDecorationOffset) {
            m.member_offsets[a[0]][a[1]] = a[3];
        } else if ((op == kOpTypeInt || op == kOpTypeFloat) && a[1] == 32) {
            m.scalars32.insert(a[0]);
        } else if (op == kOpTypeStruct) {
            m.struct_members[a[0]].assign(a + 1, a + n - 1);
        } else if (op == kOpTypePointer) {
            m.pointee[a[0]] = a[2];
        } else if (op == kOpVariable) {
            m.variables.emplace_back(a[1], a[2]);
            m.pointer_of[a[1]] = a[0];
        } else if (op == kOpExecutionMode && a[1] == kModeLocalSize) {
            m.local_size_x = a[2];
        }
        i += n;
    }
    return m;
}

// The push-constant block: 32-bit scalars packed from offset 0, `bytes` in all.
void expect_push_block(Module& m, uint32_t block, size_t bytes) {
    const std::vector<uint32_t>& members = m.struct_members[block];
    EXPECT_EQ(members.size() * 4, bytes) << "the block has " << members.size() << " members";
    for (uint32_t i = 0; i < members.size(); ++i) {
        EXPECT_TRUE(m.scalars32.count(members[i])) << "member " << i << " is not a 32-bit scalar";
        EXPECT_EQ(m.member_offsets[block][i], 4 * i) << "member " << i;
    }
}

TEST(KernelInterface, EveryKernelHasDistinctBindingsAndOnePushConstantBlock) {
    ASSERT_FALSE(kernel_binaries().empty());
    for (const KernelBinary& k : kernel_binaries()) {
        SCOPED_TRACE(std::string(k.name));
        ASSERT_GT(k.code.size(), 5u);
        ASSERT_EQ(k.code[0], 0x07230203u);  // SPIR-V magic
        Module m = parse(k.code);
        EXPECT_EQ(m.local_size_x, k.workgroup_size);
        int push_blocks = 0;
        std::set<uint32_t> bindings_seen;
        for (auto [id, storage] : m.variables) {
            if (storage == kStoragePushConstant) {
                ++push_blocks;
                ASSERT_NE(expected_push_bytes(k.name), 0u) << "add the kernel's Params to expected_push_bytes";
                expect_push_block(m, m.pointee[m.pointer_of[id]], expected_push_bytes(k.name));
            }
            if (storage != kStorageUniform && storage != kStorageStorageBuffer) continue;
            // Storage buffers are Uniform + BufferBlock (SPIR-V 1.3) or StorageBuffer + Block; uniform buffers
            // (ConstantBuffer<T>) Uniform + Block. Either must have a binding of its own.
            const uint32_t block = m.pointee[m.pointer_of[id]];
            EXPECT_TRUE(m.decorations[block].count(kDecorationBufferBlock) ||
                        m.decorations[block].count(kDecorationBlock));
            EXPECT_TRUE(m.decorations[id].count(kDecorationBinding)) << "variable %" << id << " has no binding";
            EXPECT_EQ(m.set[id], 0u);
            EXPECT_TRUE(bindings_seen.insert(m.binding[id]).second) << "binding " << m.binding[id] << " used twice";
        }
        EXPECT_EQ(push_blocks, 1) << "push constants must be `[[vk::push_constant]] ConstantBuffer<Params> pc;`";
        // Bindings are 0..n-1, as the backend's descriptor set layout declares them.
        uint32_t expected = 0;
        for (uint32_t b : bindings_seen) EXPECT_EQ(b, expected++);
    }
}

}  // namespace
}  // namespace dmlgrad
