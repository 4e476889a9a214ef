#include "gpu/d3d12/backend.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/parallel_copy.h"
#include "gpu/d3d12/device.h"
#include "gpu/d3d12/kernel_code.h"
#include "gpu/d3d12/pipeline.h"
#include "gpu/d3d12/views.h"
#include "gpu/dispatch.h"
#include "gpu/warm_up.h"

namespace dmlgrad::d3d12 {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The largest view: 2^27 elements (D3D12_REQ_BUFFER_RESOURCE_TEXEL_COUNT_2_TO_EXP) of 4 bytes, the smallest element
// a kernel's view has, so any view of a window fits.
constexpr uint64_t kMaxViewBytes = (uint64_t(1) << D3D12_REQ_BUFFER_RESOURCE_TEXEL_COUNT_2_TO_EXP) * 4;

DeviceLimits effective_limits(const DeviceLimits& cap) {
    DeviceLimits limits;
    limits.api = GpuApi::d3d12;
    // Constant-buffer views start at multiples of 256 bytes; the other views at multiples of their element.
    limits.offset_alignment = std::max<uint64_t>(D3D12_CONSTANT_BUFFER_DATA_PLACEMENT_ALIGNMENT, cap.offset_alignment);
    uint64_t range = kMaxViewBytes;
    if (cap.max_binding_bytes) range = std::min(range, cap.max_binding_bytes);
    limits.max_binding_bytes = align_down(range, limits.offset_alignment);
    limits.max_groups_x = D3D12_CS_DISPATCH_MAX_THREAD_GROUPS_PER_DIMENSION;
    if (cap.max_groups_x) limits.max_groups_x = std::min(limits.max_groups_x, cap.max_groups_x);
    return limits;
}

// A slot's buffer: whole 256-byte blocks, so a constant-buffer view of any window fits in it.
uint64_t slot_bytes(uint64_t bytes) {
    return ceil_div<uint64_t>(padded_bytes(bytes), D3D12_CONSTANT_BUFFER_DATA_PLACEMENT_ALIGNMENT) *
           D3D12_CONSTANT_BUFFER_DATA_PLACEMENT_ALIGNMENT;
}

constexpr D3D12_RESOURCE_STATES kReadStates =
    D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE | D3D12_RESOURCE_STATE_VERTEX_AND_CONSTANT_BUFFER;

// One run on the device: its program and pipeline, the state each slot's buffer is in while the kernel runs, and
// the descriptor table of each step (consecutive steps with the same windows share one).
struct DeviceRun {
    GpuProgram program;
    const Pipeline* pipe = nullptr;
    size_t output_slot = 0;
    std::vector<D3D12_RESOURCE_STATES> kernel_states;
    std::vector<uint32_t> step_tables;
};

class D3D12Backend final : public Backend, public ReservedRuns {
public:
    D3D12Backend(std::optional<int> adapter, const GpuBackendOptions& options) : options_(options) {
        const auto start = Clock::now();
        device_ = std::make_unique<Device>(choose_adapter(adapter));
        if (options.max_allocation_cap) device_->cap_allocation(options.max_allocation_cap);
        limits_ = effective_limits(options.limits_cap);
        pending_setup_ms_ = ms_since(start);
        spdlog::debug("d3d12: device {:.1f} ms", pending_setup_ms_);
    }

    std::string kind() const override { return "gpu"; }
    std::string device_name() const override { return device_->name(); }
    ReservedRuns* reserved_runs() override { return this; }
    void reserve(const Plan& plan) override;

protected:
    ExecutionStats execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                           const RunOptions& options) override;

private:
    // The phases of execute(), in order.
    DeviceRun prepare_program(const Plan& plan);
    void bind_buffers(DeviceRun& run, std::span<const Tensor* const> inputs, const Tensor& output);
    void upload_inputs(const DeviceRun& run, std::span<const Tensor* const> inputs);
    void make_descriptor_tables(DeviceRun& run);
    void warm_up(const DeviceRun& run);
    std::vector<double> time_executions(const DeviceRun& run, int repeat, const Tensor& output);
    void download_output(Tensor& output) const;

    const Pipeline& pipeline(const GpuProgram& program);
    // `kept` replaced (contents not kept) when smaller than `bytes`.
    Buffer& kept_buffer(Buffer& kept, uint64_t bytes, HeapKind heap, const std::string& what);
    Buffer& slot_buffer(size_t slot, size_t tensors, uint64_t bytes);
    void record_execution(ID3D12GraphicsCommandList* list, const DeviceRun& run);

    GpuBackendOptions options_;
    std::unique_ptr<Device> device_;
    DeviceLimits limits_;
    std::map<std::string, std::unique_ptr<Pipeline>, std::less<>> pipelines_;
    std::vector<Buffer> slots_;         // device buffers: inputs, output, constants; kept from run to run
    Buffer upload_, readback_, times_;  // staging and the timestamps' readback, kept likewise
    DescriptorTables tables_;
    Com<ID3D12QueryHeap> queries_;
    uint32_t query_count_ = 0;
    double pending_setup_ms_ = 0;  // device creation (and reserve()), reported by the first run
};

const Pipeline& D3D12Backend::pipeline(const GpuProgram& program) {
    auto it = pipelines_.find(program.kernel);
    if (it == pipelines_.end()) {
        const auto start = Clock::now();
        auto made = std::make_unique<Pipeline>(device_->get(), program.kernel, dxbc_kernel(program.kernel),
                                               program.binding_count, program.push_bytes);
        it = pipelines_.emplace(program.kernel, std::move(made)).first;
        spdlog::debug("d3d12: pipeline {} created in {:.1f} ms", program.kernel, ms_since(start));
    }
    return *it->second;
}

Buffer& D3D12Backend::kept_buffer(Buffer& kept, uint64_t bytes, HeapKind heap, const std::string& what) {
    if (!kept.resource || kept.bytes < bytes) {
        kept = Buffer{};  // freed first, so a larger one does not need room for both
        kept = device_->make_buffer(bytes, heap, what);
    }
    return kept;
}

Buffer& D3D12Backend::slot_buffer(size_t slot, size_t tensors, uint64_t bytes) {
    const char* input_names[] = {"the first input", "the second input"};
    const std::string what = slot + 1 == tensors ? "the output gradient"
                             : slot < tensors    ? input_names[std::min<size_t>(slot, 1)]
                                                 : "a constant buffer";
    if (slots_.size() <= slot) slots_.resize(slot + 1);
    return kept_buffer(slots_[slot], slot_bytes(bytes), HeapKind::device, what);
}

DeviceRun D3D12Backend::prepare_program(const Plan& plan) {
    DeviceRun run;
    run.program = build_program(plan, limits_);
    validate(run.program, limits_, plan);
    run.pipe = &pipeline(run.program);
    return run;
}

// A device buffer per slot, and the state each is in while the kernel runs: written by some binding (a UAV), or
// read only.
void D3D12Backend::bind_buffers(DeviceRun& run, std::span<const Tensor* const> inputs, const Tensor& output) {
    run.output_slot = inputs.size();
    const size_t tensors = inputs.size() + 1;
    for (size_t i = 0; i < tensors; ++i) slot_buffer(i, tensors, (i < inputs.size() ? *inputs[i] : output).bytes());
    for (size_t c = 0; c < run.program.constants.size(); ++c)
        slot_buffer(tensors + c, tensors, run.program.constants[c].size() * 4);
    run.kernel_states.assign(tensors + run.program.constants.size(), kReadStates);
    for (const DispatchStep& step : run.program.steps)
        for (size_t i = 0; i < step.bindings.size(); ++i)
            if (const auto& r = run.pipe->binding(i); r && r->writable)
                run.kernel_states.at(step.bindings[i].slot) = D3D12_RESOURCE_STATE_UNORDERED_ACCESS;
}

// The inputs and constants (and the poison, for tests) through one upload buffer, copied in one submission that
// leaves every slot in its kernel state.
void D3D12Backend::upload_inputs(const DeviceRun& run, std::span<const Tensor* const> inputs) {
    struct Piece {
        size_t slot;
        const void* data;
        uint64_t bytes;
    };
    std::vector<Piece> pieces;
    for (size_t i = 0; i < inputs.size(); ++i) pieces.push_back({i, inputs[i]->buffer.data(), inputs[i]->bytes()});
    for (size_t c = 0; c < run.program.constants.size(); ++c)
        pieces.push_back(
            {run.output_slot + 1 + c, run.program.constants[c].data(), run.program.constants[c].size() * 4});
    const uint64_t poison_bytes = options_.poison_output ? slots_[run.output_slot].bytes : 0;
    uint64_t total = poison_bytes;
    for (const Piece& p : pieces) total += padded_bytes(p.bytes);
    Buffer& staging = kept_buffer(upload_, std::max<uint64_t>(total, 16), HeapKind::upload, "the upload buffer");

    std::vector<CopyRegion> copies;
    std::vector<uint64_t> offsets;
    uint64_t offset = poison_bytes;
    for (const Piece& p : pieces) {
        copies.push_back(
            {reinterpret_cast<std::byte*>(staging.mapped + offset), static_cast<const std::byte*>(p.data), p.bytes});
        offsets.push_back(offset);
        offset += padded_bytes(p.bytes);
    }
    if (poison_bytes) std::memset(staging.mapped, 0xA5, poison_bytes);
    parallel_copy(copies);

    ID3D12GraphicsCommandList* list = device_->begin();
    for (size_t i = 0; i < pieces.size(); ++i) {
        Buffer& target = slots_[pieces[i].slot];
        transition(list, target, D3D12_RESOURCE_STATE_COPY_DEST);
        if (pieces[i].bytes)
            list->CopyBufferRegion(target.resource.get(), 0, staging.resource.get(), offsets[i], pieces[i].bytes);
    }
    if (poison_bytes) {
        Buffer& out = slots_[run.output_slot];
        transition(list, out, D3D12_RESOURCE_STATE_COPY_DEST);
        list->CopyBufferRegion(out.resource.get(), 0, staging.resource.get(), 0, poison_bytes);
    }
    for (size_t slot = 0; slot < run.kernel_states.size(); ++slot)
        transition(list, slots_[slot], run.kernel_states[slot]);
    device_->submit_and_wait();
}

void D3D12Backend::make_descriptor_tables(DeviceRun& run) {
    const GpuProgram& program = run.program;
    tables_.reset(device_->get(), uint32_t(program.steps.size()) * program.binding_count);
    for (size_t s = 0; s < program.steps.size(); ++s) {
        const auto& bindings = program.steps[s].bindings;
        if (s > 0 && bindings == program.steps[s - 1].bindings) {
            run.step_tables.push_back(run.step_tables.back());
            continue;
        }
        const uint32_t table = tables_.add(program.binding_count);
        for (size_t i = 0; i < bindings.size(); ++i) {
            const std::optional<ShaderResource>& resource = run.pipe->binding(i);
            if (!resource) continue;
            const BufferWindow& w = bindings[i];
            const Buffer& b = slots_.at(w.slot);
            if (w.offset % limits_.offset_alignment || w.range > limits_.max_binding_bytes ||
                w.offset + w.range > b.bytes || (resource->writable && w.slot != run.output_slot))
                throw std::logic_error("gpu run: bad buffer window in " + program.kernel);
            write_view(device_->get(), tables_.cpu(table, uint32_t(i)), *resource, b.resource.get(), w.offset, w.range);
        }
        run.step_tables.push_back(table);
    }
}

void D3D12Backend::record_execution(ID3D12GraphicsCommandList* list, const DeviceRun& run) {
    const GpuProgram& program = run.program;
    // Earlier executions write what this one reads and writes.
    D3D12_RESOURCE_BARRIER all_writes{};
    all_writes.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
    list->ResourceBarrier(1, &all_writes);
    list->SetComputeRootSignature(run.pipe->root_signature());
    list->SetPipelineState(run.pipe->state());
    ID3D12DescriptorHeap* heaps[] = {tables_.heap()};
    list->SetDescriptorHeaps(1, heaps);
    uint32_t bound = UINT32_MAX;
    for (size_t s = 0; s < program.steps.size(); ++s) {
        const DispatchStep& step = program.steps[s];
        if (step.barrier_before) list->ResourceBarrier(1, &all_writes);
        if (run.step_tables[s] != bound) {
            bound = run.step_tables[s];
            list->SetComputeRootDescriptorTable(Pipeline::kTableParameter, tables_.gpu(bound));
        }
        list->SetComputeRoot32BitConstants(Pipeline::kConstantsParameter, UINT(step.push.size()), step.push.data(), 0);
        list->Dispatch(step.groups, 1, 1);
    }
}

// Back-to-back untimed executions for options_.warmup_seconds (the H100 idles at a low clock).
void D3D12Backend::warm_up(const DeviceRun& run) {
    record_execution(device_->begin(), run);
    device_->close();
    warm_up_for(options_.warmup_seconds, [&](uint32_t copies) { device_->resubmit_and_wait(copies); });
}

// The timed executions back to back in one submission, between timestamps, and the output's copy to the readback
// buffer; on a queue without timestamps, host time per submission.
std::vector<double> D3D12Backend::time_executions(const DeviceRun& run, int repeat, const Tensor& output) {
    Buffer& out = slots_[run.output_slot];
    const uint64_t out_bytes = padded_bytes(output.bytes());
    kept_buffer(readback_, out_bytes, HeapKind::readback, "the readback buffer");
    const auto record_download = [&](ID3D12GraphicsCommandList* list) {
        transition(list, out, D3D12_RESOURCE_STATE_COPY_SOURCE);
        list->CopyBufferRegion(readback_.resource.get(), 0, out.resource.get(), 0, out_bytes);
    };
    const std::optional<uint64_t> frequency = device_->timestamp_frequency();
    std::vector<double> kernel_ms;
    if (!frequency) {
        for (int r = 0; r < repeat; ++r) {
            ID3D12GraphicsCommandList* list = device_->begin();
            transition(list, out, run.kernel_states[run.output_slot]);
            record_execution(list, run);
            if (r + 1 == repeat) record_download(list);
            const auto t = Clock::now();
            device_->submit_and_wait();
            kernel_ms.push_back(ms_since(t));
        }
        return kernel_ms;
    }
    const auto queries = uint32_t(2 * repeat);
    if (query_count_ < queries) {
        D3D12_QUERY_HEAP_DESC desc{};
        desc.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
        desc.Count = queries;
        check(device_->get()->CreateQueryHeap(&desc, queries_.iid(), queries_.put()), "CreateQueryHeap");
        query_count_ = queries;
    }
    kept_buffer(times_, uint64_t(queries) * 8, HeapKind::readback, "the timestamps' buffer");
    ID3D12GraphicsCommandList* list = device_->begin();
    transition(list, out, run.kernel_states[run.output_slot]);
    for (uint32_t r = 0; r < uint32_t(repeat); ++r) {
        list->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 2 * r);
        record_execution(list, run);
        list->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 2 * r + 1);
    }
    list->ResolveQueryData(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0, queries, times_.resource.get(), 0);
    record_download(list);
    device_->submit_and_wait();
    std::vector<uint64_t> ticks(queries);
    std::memcpy(ticks.data(), times_.mapped, queries * sizeof(uint64_t));
    for (int r = 0; r < repeat; ++r)
        kernel_ms.push_back(double(ticks[2 * r + 1] - ticks[2 * r]) * 1e3 / double(*frequency));
    return kernel_ms;
}

void D3D12Backend::download_output(Tensor& output) const {
    parallel_copy(output.buffer.data(), reinterpret_cast<const std::byte*>(readback_.mapped), output.bytes());
}

ExecutionStats D3D12Backend::execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                                     const RunOptions& options) {
    const auto run_start = Clock::now();
    ExecutionStats stats;
    auto start = Clock::now();
    DeviceRun run = prepare_program(plan);
    stats.kernel = run.program.kernel;
    bind_buffers(run, inputs, output);
    stats.setup_ms = std::exchange(pending_setup_ms_, 0.0) + ms_since(start);

    start = Clock::now();
    upload_inputs(run, inputs);
    stats.upload_ms = ms_since(start);

    start = Clock::now();
    make_descriptor_tables(run);
    stats.setup_ms += ms_since(start);

    const int repeat = std::max(1, options.repeat);
    if (repeat > 1 && options_.warmup_seconds > 0) warm_up(run);
    stats.kernel_ms = time_executions(run, repeat, output);

    start = Clock::now();
    download_output(output);
    stats.download_ms = ms_since(start);
    spdlog::debug("d3d12: run {:.3f} ms (upload {:.3f}, download {:.3f})", ms_since(run_start), stats.upload_ms,
                  stats.download_ms);
    return stats;
}

// The device buffers and the staging buffers run() will use, made now.
void D3D12Backend::reserve(const Plan& plan) {
    const auto start = Clock::now();
    // The program first, as the Vulkan backend does: a refused plan fails before any memory is taken.
    prepare_program(plan);
    const std::vector<TensorInfo> infos = plan_input_infos(plan);
    uint64_t upload_bytes = 0;
    for (size_t i = 0; i < infos.size(); ++i) {
        slot_buffer(i, infos.size() + 1, infos[i].bytes());
        upload_bytes += padded_bytes(infos[i].bytes());
    }
    const uint64_t output_bytes = plan_output_info(plan).bytes();
    slot_buffer(infos.size(), infos.size() + 1, output_bytes);
    kept_buffer(upload_, std::max<uint64_t>(upload_bytes, 16), HeapKind::upload, "the upload buffer");
    kept_buffer(readback_, padded_bytes(output_bytes), HeapKind::readback, "the readback buffer");
    pending_setup_ms_ += ms_since(start);
}

}  // namespace

std::unique_ptr<Backend> make_d3d12_backend(std::optional<int> adapter, const GpuBackendOptions& options) {
    return std::make_unique<D3D12Backend>(adapter, options);
}

}  // namespace dmlgrad::d3d12
