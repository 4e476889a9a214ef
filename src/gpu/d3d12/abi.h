#pragma once
// DirectX-Headers' D3D12 API as this backend includes it: every file of src/gpu/d3d12/ that speaks D3D12 includes
// this header, never <directx/d3d12.h> itself. It owns the two facts of calling an implementation built with
// Microsoft's ABI (vkd3d, D3D12 on Vulkan) through DirectX-Headers' non-Windows declarations on x86-64 Linux:
//  1. vkd3d's COM methods and its exports (D3D12SerializeRootSignature...) use the Microsoft calling convention,
//     while DirectX-Headers' WSL stubs define STDMETHODCALLTYPE and WINAPI empty: they are redefined here, before
//     the D3D12 declarations are read.
//  2. A COM method that returns a struct returns it through a hidden pointer (MSVC's rule for methods), where the
//     non-Windows declarations return it by value: such methods are called only through the wrappers below.
// On Windows both facts are the compiler's own: the declarations and the wrappers are plain calls.
#ifdef _WIN32
#include <d3d12.h>
#else
// The stubs' basetsd.h defines the calling conventions (empty); it is read once (#pragma once), so redefining
// them right after it reaches every COM declaration that follows, IUnknown's included.
#include <basetsd.h>
#undef STDMETHODCALLTYPE
#undef WINAPI
#define STDMETHODCALLTYPE __attribute__((ms_abi))
#define WINAPI __attribute__((ms_abi))
// The order is the point: the stubs, then the declarations.
// clang-format off
#include <wsl/winadapter.h>  // the Windows types DirectX-Headers needs (its "WSL stubs")
#include <directx/d3d12.h>
#include <dxguids/dxguids.h>  // __uuidof(ID3D12Device)... (Windows compilers have it built in)
// clang-format on
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dmlgrad::d3d12 {

namespace abi {

#ifdef _WIN32
template <class Result, class Interface, class Method>
Result struct_result(Interface* self, Method method) {
    return (self->*method)();
}
#else
// Calls `method` (a virtual method of `self` taking no argument and returning Result) with the hidden result
// pointer of Microsoft's method ABI. The vtable slot comes from the method pointer (Itanium C++ ABI: a virtual
// method's pointer holds 1 + its byte offset in the vtable), so no slot number is written down here.
template <class Result, class Interface, class Method>
Result struct_result(Interface* self, Method method) {
    struct ItaniumMethodPointer {
        uintptr_t pointer;
        ptrdiff_t adjustment;
    };
    static_assert(sizeof(Method) == sizeof(ItaniumMethodPointer));
    ItaniumMethodPointer raw;
    std::memcpy(&raw, &method, sizeof raw);
    using HiddenPointerMethod = Result*(STDMETHODCALLTYPE*)(Interface*, Result*);
    void* const* vtable = *reinterpret_cast<void* const* const*>(self);
    const auto call = reinterpret_cast<HiddenPointerMethod>(vtable[(raw.pointer - 1) / sizeof(void*)]);
    Result result{};
    call(self, &result);
    return result;
}
#endif

}  // namespace abi

// The COM methods of D3D12 that return a struct, as the backend calls them.
inline D3D12_CPU_DESCRIPTOR_HANDLE cpu_heap_start(ID3D12DescriptorHeap* heap) {
    return abi::struct_result<D3D12_CPU_DESCRIPTOR_HANDLE>(heap,
                                                           &ID3D12DescriptorHeap::GetCPUDescriptorHandleForHeapStart);
}
inline D3D12_GPU_DESCRIPTOR_HANDLE gpu_heap_start(ID3D12DescriptorHeap* heap) {
    return abi::struct_result<D3D12_GPU_DESCRIPTOR_HANDLE>(heap,
                                                           &ID3D12DescriptorHeap::GetGPUDescriptorHandleForHeapStart);
}
inline D3D12_RESOURCE_DESC resource_desc(ID3D12Resource* resource) {
    return abi::struct_result<D3D12_RESOURCE_DESC>(resource, &ID3D12Resource::GetDesc);
}
inline LUID adapter_luid(ID3D12Device* device) {
    return abi::struct_result<LUID>(device, &ID3D12Device::GetAdapterLuid);
}

}  // namespace dmlgrad::d3d12
