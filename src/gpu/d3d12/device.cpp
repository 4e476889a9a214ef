#include "gpu/d3d12/device.h"

#include "core/error.h"

namespace dmlgrad::d3d12 {

Device::Device(int adapter) : name_(list_adapters().at(size_t(adapter)).name) {
    device_.reset(static_cast<ID3D12Device*>(create_device(adapter, &__uuidof(ID3D12Device))));
    D3D12_COMMAND_QUEUE_DESC queue{};
    queue.Type = D3D12_COMMAND_LIST_TYPE_COMPUTE;
    check(device_->CreateCommandQueue(&queue, queue_.iid(), queue_.put()), "CreateCommandQueue");
    list_ = std::make_unique<CommandList>(device_.get());
    check(device_->CreateFence(0, D3D12_FENCE_FLAG_NONE, fence_.iid(), fence_.put()), "CreateFence");
    UINT64 frequency = 0;
    if (SUCCEEDED(queue_->GetTimestampFrequency(&frequency)) && frequency > 0) timestamp_frequency_ = frequency;
}

Device::~Device() { wait_for_queue(); }

Buffer Device::make_buffer(uint64_t bytes, HeapKind heap, const std::string& what) const {
    if (allocation_cap_ && bytes > allocation_cap_)
        throw RuntimeFailure("out of GPU memory: " + what + " needs " + std::to_string(bytes) + " bytes");
    D3D12_HEAP_PROPERTIES properties{};
    properties.Type = heap == HeapKind::device   ? D3D12_HEAP_TYPE_DEFAULT
                      : heap == HeapKind::upload ? D3D12_HEAP_TYPE_UPLOAD
                                                 : D3D12_HEAP_TYPE_READBACK;
    D3D12_RESOURCE_DESC desc{};
    desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
    desc.Width = bytes;
    desc.Height = 1;
    desc.DepthOrArraySize = 1;
    desc.MipLevels = 1;
    desc.SampleDesc.Count = 1;
    desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
    if (heap == HeapKind::device) desc.Flags = D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS;
    // Upload heaps must start (and stay) in GENERIC_READ, readback heaps in COPY_DEST.
    Buffer buffer;
    buffer.state = heap == HeapKind::device   ? D3D12_RESOURCE_STATE_COMMON
                   : heap == HeapKind::upload ? D3D12_RESOURCE_STATE_GENERIC_READ
                                              : D3D12_RESOURCE_STATE_COPY_DEST;
    buffer.bytes = bytes;
    buffer.heap = heap;
    check(device_->CreateCommittedResource(&properties, D3D12_HEAP_FLAG_NONE, &desc, buffer.state, nullptr,
                                           buffer.resource.iid(), buffer.resource.put()),
          "allocating " + what + " (" + std::to_string(bytes) + " bytes)");
    if (heap != HeapKind::device) {
        void* mapped = nullptr;
        check(buffer.resource->Map(0, nullptr, &mapped), "mapping " + what);
        buffer.mapped = static_cast<uint8_t*>(mapped);
    }
    return buffer;
}

CommandList::CommandList(ID3D12Device* device) {
    check(device->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_COMPUTE, allocator_.iid(), allocator_.put()),
          "CreateCommandAllocator");
    check(device->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_COMPUTE, allocator_.get(), nullptr, list_.iid(),
                                    list_.put()),
          "CreateCommandList");
    check(list_->Close(), "ID3D12GraphicsCommandList::Close");
}

ID3D12GraphicsCommandList* CommandList::begin() {
    check(allocator_->Reset(), "ID3D12CommandAllocator::Reset");
    check(list_->Reset(allocator_.get(), nullptr), "ID3D12GraphicsCommandList::Reset");
    return list_.get();
}

ID3D12GraphicsCommandList* Device::begin() { return list_->begin(); }

void Device::close() { check(list_->get()->Close(), "ID3D12GraphicsCommandList::Close"); }

void Device::submit_and_wait(uint32_t times) {
    close();
    resubmit_and_wait(times);
}

void Device::resubmit_and_wait(uint32_t times) {
    ID3D12CommandList* lists[] = {list_->get()};
    for (uint32_t i = 0; i < times; ++i) queue_->ExecuteCommandLists(1, lists);
    wait_for_queue();
}

uint64_t Device::submit(CommandList& list) {
    check(list.get()->Close(), "ID3D12GraphicsCommandList::Close");
    ID3D12CommandList* lists[] = {list.get()};
    queue_->ExecuteCommandLists(1, lists);
    return signal();
}

uint64_t Device::signal() {
    if (!queue_ || !fence_) return 0;
    check(queue_->Signal(fence_.get(), ++fence_value_), "ID3D12CommandQueue::Signal");
    return fence_value_;
}

void Device::wait(uint64_t fence_value) {
    if (!fence_ || fence_->GetCompletedValue() >= fence_value) return;
    check(fence_->SetEventOnCompletion(fence_value, fence_event_.handle()), "ID3D12Fence::SetEventOnCompletion");
    fence_event_.wait();
}

void transition(ID3D12GraphicsCommandList* list, Buffer& buffer, D3D12_RESOURCE_STATES state) {
    if (buffer.state == state) return;
    D3D12_RESOURCE_BARRIER barrier{};
    barrier.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
    barrier.Transition.pResource = buffer.resource.get();
    barrier.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
    barrier.Transition.StateBefore = buffer.state;
    barrier.Transition.StateAfter = state;
    list->ResourceBarrier(1, &barrier);
    buffer.state = state;
}

}  // namespace dmlgrad::d3d12
