// The Direct3D 12 backend's own parts: the ABI header's struct returns (on a hand-made object and on vkd3d), and
// the reading of a kernel's resources from DXBC. The operators themselves run on Direct3D 12 through the whole
// suite's second run (gpu_testing.h's tested_api()).
#include <gtest/gtest.h>

#ifdef DMLGRAD_HAVE_D3D12

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/d3d12/abi.h"
#include "gpu/d3d12/device.h"
#include "gpu/d3d12/dxbc_reflection.h"
#include "gpu/d3d12/runtime.h"

namespace dmlgrad::d3d12 {
namespace {

// ---- abi.h ----

// A COM-like interface whose third method returns a struct, and an object made by hand the way Microsoft's ABI
// lays it out: a vtable of functions in that calling convention, the struct returned through a hidden pointer.
struct Pair {
    uint64_t first, second;
};
struct PairSource {
    virtual void STDMETHODCALLTYPE unused0() = 0;
    virtual void STDMETHODCALLTYPE unused1() = 0;
    virtual Pair STDMETHODCALLTYPE get() = 0;
};

struct HandMadeObject {
    const void* const* vtable;
    uint64_t value;
};

Pair* STDMETHODCALLTYPE hidden_pointer_get(HandMadeObject* self, Pair* result) {
    *result = {self->value, ~self->value};
    return result;
}

TEST(D3d12Abi, StructReturnsCallTheMethodsSlotThroughAHiddenPointer) {
    const void* const vtable[] = {nullptr, nullptr, reinterpret_cast<const void*>(&hidden_pointer_get)};
    HandMadeObject object{vtable, 0x0123456789ABCDEFull};
    const Pair pair = abi::struct_result<Pair>(reinterpret_cast<PairSource*>(&object), &PairSource::get);
    EXPECT_EQ(pair.first, 0x0123456789ABCDEFull);
    EXPECT_EQ(pair.second, ~0x0123456789ABCDEFull);
}

// On vkd3d: a buffer's description comes back whole (by value it would be garbage or a crash), and two heaps
// have distinct, non-null starts whose CPU and GPU handles are consistent.
TEST(D3d12Abi, VkdReturnsTheStructsOfResourcesAndHeaps) {
    Device device(choose_adapter(std::nullopt));
    const Buffer buffer = device.make_buffer(12345 * 16, HeapKind::device, "a test buffer");
    const D3D12_RESOURCE_DESC desc = resource_desc(buffer.resource.get());
    EXPECT_EQ(desc.Dimension, D3D12_RESOURCE_DIMENSION_BUFFER);
    EXPECT_EQ(desc.Width, 12345u * 16);
    EXPECT_EQ(desc.Height, 1u);
    EXPECT_EQ(desc.Flags, D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS);
    D3D12_DESCRIPTOR_HEAP_DESC heap_desc{};
    heap_desc.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
    heap_desc.NumDescriptors = 8;
    heap_desc.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
    Com<ID3D12DescriptorHeap> a, b;
    check(device.get()->CreateDescriptorHeap(&heap_desc, a.iid(), a.put()), "heap a");
    check(device.get()->CreateDescriptorHeap(&heap_desc, b.iid(), b.put()), "heap b");
    EXPECT_NE(cpu_heap_start(a.get()).ptr, 0u);
    EXPECT_NE(gpu_heap_start(a.get()).ptr, 0u);
    EXPECT_NE(cpu_heap_start(a.get()).ptr, cpu_heap_start(b.get()).ptr);
    EXPECT_NE(gpu_heap_start(a.get()).ptr, gpu_heap_start(b.get()).ptr);
}

// ---- dxbc_reflection.h ----

void put_word(std::vector<uint8_t>& bytes, size_t at, uint32_t value) {
    if (bytes.size() < at + 4) bytes.resize(at + 4);
    std::memcpy(bytes.data() + at, &value, 4);
}

// A DXBC container of one chunk besides RDEF (so the RDEF is found by its code, not by position), whose RDEF holds
// `records` (eight words each: name offset, type, return type, dimension, samples, register, count, flags) and the
// names they point to.
std::vector<uint8_t> dxbc_with(const std::vector<std::vector<uint32_t>>& records,
                               const std::vector<std::string>& names) {
    std::vector<uint8_t> rdef(24, 0);
    put_word(rdef, 8, uint32_t(records.size()));
    put_word(rdef, 12, 24);  // the records right after the header
    size_t name_at = 24 + 32 * records.size();
    for (size_t r = 0; r < records.size(); ++r) {
        std::vector<uint32_t> words = records[r];
        words[0] = uint32_t(name_at);
        for (size_t w = 0; w < 8; ++w) put_word(rdef, 24 + 32 * r + 4 * w, words[w]);
        rdef.resize(name_at);
        rdef.insert(rdef.end(), names[r].begin(), names[r].end());
        rdef.push_back(0);
        name_at = rdef.size();
    }
    std::vector<uint8_t> dxbc = {'D', 'X', 'B', 'C'};
    dxbc.resize(40);
    put_word(dxbc, 28, 2);   // chunks
    put_word(dxbc, 32, 40);  // SHEX-like filler chunk
    dxbc.insert(dxbc.end(), {'S', 'H', 'E', 'X', 4, 0, 0, 0, 1, 2, 3, 4});
    put_word(dxbc, 36, uint32_t(dxbc.size()));
    dxbc.insert(dxbc.end(), {'R', 'D', 'E', 'F'});
    const size_t size_at = dxbc.size();
    put_word(dxbc, size_at, uint32_t(rdef.size()));
    dxbc.insert(dxbc.end(), rdef.begin(), rdef.end());
    put_word(dxbc, 24, uint32_t(dxbc.size()));
    return dxbc;
}

TEST(D3d12Reflection, ReadsEveryBufferKindAndRegister) {
    const std::vector<uint8_t> dxbc =
        dxbc_with({{0, 0, 0, 0, 0, 0, 1, 0},    // cbuffer Params : b0
                   {0, 5, 6, 1, 16, 0, 1, 0},   // StructuredBuffer<uint4> : t0 (stride 16)
                   {0, 7, 6, 1, 0, 1, 1, 0},    // ByteAddressBuffer : t1
                   {0, 4, 4, 1, 1, 2, 1, 0xC},  // RWBuffer<uint4> : u2 (4 components: flags 0xC)
                   {0, 2, 4, 1, 1, 3, 1, 0x0},  // Buffer<uint> : t3 (one component)
                   {0, 8, 6, 1, 0, 4, 1, 0},    // RWByteAddressBuffer : u4
                   {0, 6, 6, 1, 8, 5, 1, 0}},   // RWStructuredBuffer<uint2> : u5 (stride 8)
                  {"Params", "x_buf", "raw_in", "dx_buf", "small", "raw_out", "pairs"});
    const std::vector<ShaderResource> r = reflect_dxbc(dxbc);
    ASSERT_EQ(r.size(), 7u);
    const auto expect = [&](size_t i, const char* name, BufferView view, bool writable, uint32_t reg,
                            uint32_t element_bytes) {
        SCOPED_TRACE(name);
        EXPECT_EQ(r[i].name, name);
        EXPECT_EQ(r[i].view, view);
        EXPECT_EQ(r[i].writable, writable);
        EXPECT_EQ(r[i].reg, reg);
        if (view != BufferView::constant) {
            EXPECT_EQ(r[i].element_bytes, element_bytes);
        }
    };
    expect(0, "Params", BufferView::constant, false, 0, 0);
    expect(1, "x_buf", BufferView::structured, false, 0, 16);
    expect(2, "raw_in", BufferView::raw, false, 1, 4);
    expect(3, "dx_buf", BufferView::typed, true, 2, 16);
    expect(4, "small", BufferView::typed, false, 3, 4);
    expect(5, "raw_out", BufferView::raw, true, 4, 4);
    expect(6, "pairs", BufferView::structured, true, 5, 8);
}

TEST(D3d12Reflection, RefusesWhatNoKernelBinds) {
    EXPECT_THROW(reflect_dxbc(std::vector<uint8_t>(64, 0)), std::invalid_argument);  // not DXBC
    std::vector<uint8_t> no_rdef = dxbc_with({}, {});
    std::memcpy(no_rdef.data() + no_rdef.size() - 24 - 8, "STAT", 4);  // the RDEF chunk renamed
    EXPECT_THROW(reflect_dxbc(no_rdef), std::invalid_argument);
    EXPECT_THROW(reflect_dxbc(dxbc_with({{0, 3, 0, 0, 0, 0, 1, 0}}, {"sampler"})), std::invalid_argument);
    EXPECT_THROW(reflect_dxbc(dxbc_with({{0, 2, 5, 4, 1, 0, 1, 0xC}}, {"texture2d"})), std::invalid_argument);
    EXPECT_THROW(reflect_dxbc(dxbc_with({{0, 5, 6, 1, 16, 0, 4, 0}}, {"array"})), std::invalid_argument);
    std::vector<uint8_t> truncated = dxbc_with({{0, 5, 6, 1, 16, 0, 1, 0}}, {"x"});
    truncated.resize(truncated.size() - 12);
    EXPECT_THROW(reflect_dxbc(truncated), std::invalid_argument);
}

}  // namespace
}  // namespace dmlgrad::d3d12

#endif  // DMLGRAD_HAVE_D3D12
