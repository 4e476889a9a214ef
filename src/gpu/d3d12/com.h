#pragma once
// Owning COM references and HRESULT checks for the D3D12 backend.
#include <string>
#include <utility>

#include "gpu/d3d12/abi.h"

namespace dmlgrad::d3d12 {

// One owned reference to a COM object, released when the pointer goes (Microsoft::WRL::ComPtr's core).
template <class T>
class Com {
public:
    Com() = default;
    explicit Com(T* adopted) : ptr_(adopted) {}
    Com(Com&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
    Com& operator=(Com&& other) noexcept {
        if (this != &other) reset(std::exchange(other.ptr_, nullptr));
        return *this;
    }
    ~Com() { reset(); }
    Com(const Com&) = delete;
    Com& operator=(const Com&) = delete;

    T* get() const { return ptr_; }
    T* operator->() const { return ptr_; }
    explicit operator bool() const { return ptr_ != nullptr; }
    void reset(T* adopted = nullptr) {
        if (ptr_) ptr_->Release();
        ptr_ = adopted;
    }
    // For the creating call: the IID of T and the place it writes the new reference to.
    const IID& iid() const { return __uuidof(T); }
    void** put() {
        reset();
        return reinterpret_cast<void**>(&ptr_);
    }

private:
    T* ptr_ = nullptr;
};

// Throws RuntimeFailure naming `what` and the code when `result` is a failure (E_OUTOFMEMORY: out of memory).
void check(HRESULT result, const std::string& what);

}  // namespace dmlgrad::d3d12
