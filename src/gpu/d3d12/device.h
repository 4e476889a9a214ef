#pragma once
// A D3D12 device on one adapter with its compute queue, a fence to wait on, and a command list reused from
// submission to submission.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gpu/d3d12/com.h"
#include "gpu/d3d12/runtime.h"

namespace dmlgrad::d3d12 {

// Where a buffer lives: device memory, host memory the device reads (upload) or writes (readback).
enum class HeapKind : uint8_t { device, upload, readback };

// A committed buffer resource and the state it is in (device buffers; staging buffers keep theirs).
struct Buffer {
    Com<ID3D12Resource> resource;
    uint64_t bytes = 0;
    HeapKind heap = HeapKind::device;
    D3D12_RESOURCE_STATES state = D3D12_RESOURCE_STATE_COMMON;
    uint8_t* mapped = nullptr;  // upload and readback buffers stay mapped

    D3D12_GPU_VIRTUAL_ADDRESS address() const { return resource->GetGPUVirtualAddress(); }
};

class Device;

// A command list with an allocator of its own: work submitted without waiting (an overlapped run) while the
// device's own list records the next.
class CommandList {
public:
    explicit CommandList(ID3D12Device* device);
    // Reset and open for recording (after its previous submission finished).
    ID3D12GraphicsCommandList* begin();
    ID3D12GraphicsCommandList* get() const { return list_.get(); }

private:
    Com<ID3D12CommandAllocator> allocator_;
    Com<ID3D12GraphicsCommandList> list_;
};

class Device {
public:
    explicit Device(int adapter);
    ~Device();  // waits for the queue
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    ID3D12Device* get() const { return device_.get(); }
    const std::string& name() const { return name_; }
    // Ticks per second of the queue's timestamps; nullopt where the queue has none.
    std::optional<uint64_t> timestamp_frequency() const { return timestamp_frequency_; }

    // `what` names the buffer in an out-of-memory error. `cap`: refuse allocations above it (tests; 0: none).
    Buffer make_buffer(uint64_t bytes, HeapKind heap, const std::string& what) const;
    void cap_allocation(uint64_t bytes) { allocation_cap_ = bytes; }

    // The command list, reset and open for recording (after the previous submission finished).
    ID3D12GraphicsCommandList* begin();
    // Closes the list and runs it `times` times, waiting for the end.
    void submit_and_wait(uint32_t times = 1);
    // Closes the list without running it; resubmit_and_wait() runs a closed list (again).
    void close();
    void resubmit_and_wait(uint32_t times);
    // Closes `list` and runs it without waiting: the fence value that says it finished, for wait().
    uint64_t submit(CommandList& list);
    void wait(uint64_t fence_value);
    void wait_idle() { wait_for_queue(); }

private:
    // Signals the fence after the work submitted so far: the value it will reach.
    uint64_t signal();
    void wait_for_queue() { wait(signal()); }

    Com<ID3D12Device> device_;
    Com<ID3D12CommandQueue> queue_;
    std::unique_ptr<CommandList> list_;
    Com<ID3D12Fence> fence_;
    FenceEvent fence_event_;
    uint64_t fence_value_ = 0;
    std::string name_;
    std::optional<uint64_t> timestamp_frequency_;
    uint64_t allocation_cap_ = 0;
};

// Records a transition of `buffer` to `state` (nothing when it is in it already).
void transition(ID3D12GraphicsCommandList* list, Buffer& buffer, D3D12_RESOURCE_STATES state);

}  // namespace dmlgrad::d3d12
