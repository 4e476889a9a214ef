#include "gpu/d3d12/backend.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/parallel_copy.h"
#include "gpu/d3d12/device.h"
#include "gpu/d3d12/pipeline.h"
#include "gpu/d3d12/views.h"
#include "gpu/dispatch.h"
#include "gpu/kept_outputs.h"
#include "gpu/kernel_registry.h"
#include "gpu/overlapped_run.h"
#include "gpu/thread_loops.h"
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

// The largest tensor an overlapped run takes, as the Vulkan backend's staging chunk: larger runs are not latency
// bound, and each frame keeps buffers of this size.
constexpr uint64_t kMaxOverlappedBytes = uint64_t(16) << 20;

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

// The `count` intervals between the timestamp pairs resolved into `times`.
std::vector<double> intervals_ms(const Buffer& times, int count, uint64_t frequency) {
    std::vector<uint64_t> ticks(size_t(2 * count));
    std::memcpy(ticks.data(), times.mapped, ticks.size() * sizeof(uint64_t));
    std::vector<double> ms;
    for (size_t r = 0; r < size_t(count); ++r)
        ms.push_back(double(ticks[2 * r + 1] - ticks[2 * r]) * 1e3 / double(frequency));
    return ms;
}

constexpr D3D12_RESOURCE_STATES kReadStates =
    D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE | D3D12_RESOURCE_STATE_VERTEX_AND_CONSTANT_BUFFER;

// One run on the device: its program and pipeline, a buffer per slot (inputs, output, constants, scratch), the state
// each is in while the kernel runs, and the descriptor table of each step (consecutive steps with the same windows
// share one).
struct DeviceRun {
    GpuProgram program;
    const Pipeline* pipe = nullptr;
    std::vector<Buffer*> buffers;
    size_t output_slot = 0;
    std::vector<D3D12_RESOURCE_STATES> kernel_states;
    std::vector<uint32_t> step_tables;
};

// What one overlapped run needs, kept and reused, as the Vulkan backend's frames: while the device runs one frame's
// job, the host fills the other frame's upload buffer. Each frame has buffers of its own, so no run writes what
// another may still read.
struct Frame {
    std::vector<Buffer> slots;
    Buffer upload, readback, times;
    std::unique_ptr<CommandList> list;
    DescriptorTables tables;
    Com<ID3D12QueryHeap> queries;  // two timestamps
    uint64_t fence_value = 0;
    Tensor* output = nullptr;
    ExecutionStats stats;
};

// Where a run's inputs, constants and poison lie in its upload buffer.
struct StagedPiece {
    size_t slot;
    uint64_t offset, bytes;
};

class D3D12Backend final : public Backend, public OverlappedRuns, public ReservedRuns, public ResidentTensors {
public:
    D3D12Backend(std::optional<int> adapter, const GpuBackendOptions& options) : options_(options) {
        const auto start = Clock::now();
        device_ = std::make_unique<Device>(choose_adapter(adapter));
        if (options.max_allocation_cap) device_->cap_allocation(options.max_allocation_cap);
        limits_ = effective_limits(options.limits_cap);
        limits_.thread_loop_limit = thread_loop_limit(device_->name());
        pending_setup_ms_ = ms_since(start);
        spdlog::debug("d3d12: device {:.1f} ms", pending_setup_ms_);
    }

    // The frames' and kept buffers are freed after the work that uses them (a batch may stop with runs started).
    ~D3D12Backend() override { device_->wait_idle(); }

    std::string kind() const override { return "gpu"; }
    std::string device_name() const override { return device_->name(); }
    ReservedRuns* reserved_runs() override { return this; }
    OverlappedRuns* overlapped_runs() override { return this; }
    ResidentTensors* resident_tensors() override { return this; }
    void reserve(const Plan& plan) override;

    bool can_start(const Plan& plan, std::span<const Tensor* const> inputs, const Tensor& output,
                   const RunOptions& options) const override;
    void start(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output) override;
    ExecutionStats finish() override;

    void set_next_run_keys(std::vector<std::string> input_keys, std::string output_key) override {
        kept_.set_next_run_keys(std::move(input_keys), std::move(output_key));
    }
    size_t resident_inputs_of_last_run() const override { return kept_.resident_inputs_of_last_run(); }

protected:
    ExecutionStats execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                           const RunOptions& options) override;

private:
    // The phases of execute(), in order.
    DeviceRun prepare_program(const Plan& plan);
    void bind_buffers(DeviceRun& run, std::vector<Buffer>& slots, std::span<const Tensor* const> inputs,
                      const Tensor& output);
    // ResidentTensors: binds the kept outputs the next run's keys name (returns which inputs).
    std::vector<bool> bind_kept_inputs(DeviceRun& run, std::span<const Tensor* const> inputs);
    void upload_inputs(const DeviceRun& run, std::span<const Tensor* const> inputs, const std::vector<bool>& resident);
    void make_descriptor_tables(DeviceRun& run, DescriptorTables& tables);
    void warm_up(const DeviceRun& run);
    std::vector<double> time_executions(const DeviceRun& run, int repeat, const Tensor& output);
    void download_output(Tensor& output) const;

    // Copies the inputs not on the device, the constants and (for tests) the poison into `upload`, grown to fit.
    std::vector<StagedPiece> stage(const DeviceRun& run, std::span<const Tensor* const> inputs,
                                   const std::vector<bool>& resident, Buffer& upload);
    // Records the staged pieces' copies into their slots and leaves every slot in its kernel state.
    void record_upload(ID3D12GraphicsCommandList* list, const DeviceRun& run, const std::vector<StagedPiece>& pieces,
                       const Buffer& upload);
    void record_download(ID3D12GraphicsCommandList* list, const DeviceRun& run, const Tensor& output,
                         const Buffer& readback);
    Frame& free_frame();

    const Pipeline& pipeline(const GpuProgram& program);
    // `kept` replaced (contents not kept) when smaller than `bytes`.
    Buffer& kept_buffer(Buffer& kept, uint64_t bytes, HeapKind heap, const std::string& what);
    Buffer& slot_buffer(std::vector<Buffer>& slots, size_t slot, size_t tensors, uint64_t bytes);
    void record_execution(ID3D12GraphicsCommandList* list, const DeviceRun& run, const DescriptorTables& tables);

    GpuBackendOptions options_;
    std::unique_ptr<Device> device_;
    DeviceLimits limits_;
    std::map<std::string, std::unique_ptr<Pipeline>, std::less<>> pipelines_;
    std::vector<Buffer> slots_;         // device buffers: inputs, output, constants, scratch; kept from run to run
    Buffer upload_, readback_, times_;  // staging and the timestamps' readback, kept likewise
    DescriptorTables tables_;
    Com<ID3D12QueryHeap> queries_;
    uint32_t query_count_ = 0;
    double pending_setup_ms_ = 0;  // device creation (and reserve()), reported by the first run
    std::array<Frame, OverlappedRuns::kMaxStarted> frames_;  // made on first start()
    size_t started_ = 0, finished_ = 0;                      // runs so far; frame i % kMaxStarted holds run i
    KeptOutputs<Buffer> kept_;
};

const Pipeline& D3D12Backend::pipeline(const GpuProgram& program) {
    auto it = pipelines_.find(program.kernel);
    if (it == pipelines_.end()) {
        const auto start = Clock::now();
        const std::span<const uint8_t> code = dxbc_kernel(program.kernel);
        if (code.empty())
            throw RuntimeFailure("this build has no DXBC of kernel " + program.kernel +
                                 " for Direct3D 12 (kernels/README.md lists the Vulkan-only kernels)");
        auto made =
            std::make_unique<Pipeline>(device_->get(), program.kernel, code, program.binding_count, program.push_bytes);
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

Buffer& D3D12Backend::slot_buffer(std::vector<Buffer>& slots, size_t slot, size_t tensors, uint64_t bytes) {
    const char* input_names[] = {"the first input", "the second input"};
    const std::string what = slot + 1 == tensors ? "the output gradient"
                             : slot < tensors    ? input_names[std::min<size_t>(slot, 1)]
                                                 : "a constant or scratch buffer";
    if (slots.size() <= slot) slots.resize(slot + 1);
    return kept_buffer(slots[slot], slot_bytes(bytes), HeapKind::device, what);
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
void D3D12Backend::bind_buffers(DeviceRun& run, std::vector<Buffer>& slots, std::span<const Tensor* const> inputs,
                                const Tensor& output) {
    run.output_slot = inputs.size();
    const size_t tensors = inputs.size() + 1;
    for (size_t i = 0; i < tensors; ++i)
        slot_buffer(slots, i, tensors, (i < inputs.size() ? *inputs[i] : output).bytes());
    for (size_t c = 0; c < run.program.constants.size(); ++c)
        slot_buffer(slots, tensors + c, tensors, run.program.constants[c].size() * 4);
    size_t count = tensors + run.program.constants.size();
    if (run.program.scratch_bytes) slot_buffer(slots, count++, tensors, run.program.scratch_bytes);
    for (size_t slot = 0; slot < count; ++slot) run.buffers.push_back(&slots[slot]);
    run.kernel_states.assign(count, kReadStates);
    for (const DispatchStep& step : run.program.steps)
        for (size_t i = 0; i < step.bindings.size(); ++i)
            if (const auto& r = run.pipe->binding(i); r && r->writable)
                run.kernel_states.at(step.bindings[i].slot) = D3D12_RESOURCE_STATE_UNORDERED_ACCESS;
}

// The inputs one after the other, each at a multiple of 16 bytes, after the poison.
std::vector<StagedPiece> D3D12Backend::stage(const DeviceRun& run, std::span<const Tensor* const> inputs,
                                             const std::vector<bool>& resident, Buffer& upload) {
    std::vector<std::pair<size_t, const void*>> sources;
    for (size_t i = 0; i < inputs.size(); ++i)
        if (!resident[i]) sources.emplace_back(i, inputs[i]->buffer.data());
    for (size_t c = 0; c < run.program.constants.size(); ++c)
        sources.emplace_back(run.output_slot + 1 + c, run.program.constants[c].data());
    const auto bytes_of = [&](size_t slot) {
        return slot < inputs.size() ? inputs[slot]->bytes()
                                    : run.program.constants[slot - run.output_slot - 1].size() * 4;
    };
    std::vector<StagedPiece> pieces;
    uint64_t offset = 0;
    if (options_.poison_output) {
        pieces.push_back({run.output_slot, 0, run.buffers[run.output_slot]->bytes});
        offset = pieces.back().bytes;
    }
    for (const auto& [slot, data] : sources) {
        pieces.push_back({slot, offset, bytes_of(slot)});
        offset += padded_bytes(pieces.back().bytes);
    }
    Buffer& staging = kept_buffer(upload, std::max<uint64_t>(offset, 16), HeapKind::upload, "the upload buffer");
    if (options_.poison_output) std::memset(staging.mapped, 0xA5, pieces.front().bytes);
    std::vector<CopyRegion> copies;
    for (size_t i = 0; i < sources.size(); ++i) {
        const StagedPiece& p = pieces[pieces.size() - sources.size() + i];
        copies.push_back({reinterpret_cast<std::byte*>(staging.mapped + p.offset),
                          static_cast<const std::byte*>(sources[i].second), p.bytes});
    }
    parallel_copy(copies);
    return pieces;
}

void D3D12Backend::record_upload(ID3D12GraphicsCommandList* list, const DeviceRun& run,
                                 const std::vector<StagedPiece>& pieces, const Buffer& upload) {
    for (const StagedPiece& p : pieces) {
        Buffer& target = *run.buffers[p.slot];
        transition(list, target, D3D12_RESOURCE_STATE_COPY_DEST);
        if (p.bytes) list->CopyBufferRegion(target.resource.get(), 0, upload.resource.get(), p.offset, p.bytes);
    }
    for (size_t slot = 0; slot < run.kernel_states.size(); ++slot)
        transition(list, *run.buffers[slot], run.kernel_states[slot]);
}

// Through one upload buffer, copied in one submission.
void D3D12Backend::upload_inputs(const DeviceRun& run, std::span<const Tensor* const> inputs,
                                 const std::vector<bool>& resident) {
    const std::vector<StagedPiece> pieces = stage(run, inputs, resident, upload_);
    record_upload(device_->begin(), run, pieces, upload_);
    device_->submit_and_wait();
}

void D3D12Backend::record_download(ID3D12GraphicsCommandList* list, const DeviceRun& run, const Tensor& output,
                                   const Buffer& readback) {
    Buffer& out = *run.buffers[run.output_slot];
    transition(list, out, D3D12_RESOURCE_STATE_COPY_SOURCE);
    list->CopyBufferRegion(readback.resource.get(), 0, out.resource.get(), 0, padded_bytes(output.bytes()));
}

void D3D12Backend::make_descriptor_tables(DeviceRun& run, DescriptorTables& tables) {
    const GpuProgram& program = run.program;
    tables.reset(device_->get(), uint32_t(program.steps.size()) * program.binding_count);
    // Kernels write their output and the program's scratch buffer (the slot after the constants) only.
    const size_t scratch_slot = run.output_slot + 1 + program.constants.size();
    const auto scratch = [&](size_t slot) { return program.scratch_bytes && slot == scratch_slot; };
    for (size_t s = 0; s < program.steps.size(); ++s) {
        const auto& bindings = program.steps[s].bindings;
        if (s > 0 && bindings == program.steps[s - 1].bindings) {
            run.step_tables.push_back(run.step_tables.back());
            continue;
        }
        const uint32_t table = tables.add(program.binding_count);
        for (size_t i = 0; i < bindings.size(); ++i) {
            const std::optional<ShaderResource>& resource = run.pipe->binding(i);
            if (!resource) continue;
            const BufferWindow& w = bindings[i];
            const Buffer& b = *run.buffers.at(w.slot);
            if (w.offset % limits_.offset_alignment || w.range > limits_.max_binding_bytes ||
                w.offset + w.range > b.bytes || (resource->writable && w.slot != run.output_slot && !scratch(w.slot)))
                throw std::logic_error("gpu run: bad buffer window in " + program.kernel);
            write_view(device_->get(), tables.cpu(table, uint32_t(i)), *resource, b.resource.get(), w.offset, w.range);
        }
        run.step_tables.push_back(table);
    }
}

void D3D12Backend::record_execution(ID3D12GraphicsCommandList* list, const DeviceRun& run,
                                    const DescriptorTables& tables) {
    const GpuProgram& program = run.program;
    // Earlier executions write what this one reads and writes.
    D3D12_RESOURCE_BARRIER all_writes{};
    all_writes.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
    list->ResourceBarrier(1, &all_writes);
    list->SetComputeRootSignature(run.pipe->root_signature());
    list->SetPipelineState(run.pipe->state());
    ID3D12DescriptorHeap* heaps[] = {tables.heap()};
    list->SetDescriptorHeaps(1, heaps);
    uint32_t bound = UINT32_MAX;
    for (size_t s = 0; s < program.steps.size(); ++s) {
        const DispatchStep& step = program.steps[s];
        if (step.barrier_before) list->ResourceBarrier(1, &all_writes);
        if (run.step_tables[s] != bound) {
            bound = run.step_tables[s];
            list->SetComputeRootDescriptorTable(Pipeline::kTableParameter, tables.gpu(bound));
        }
        list->SetComputeRoot32BitConstants(Pipeline::kConstantsParameter, UINT(step.push.size()), step.push.data(), 0);
        list->Dispatch(step.groups, 1, 1);
    }
}

// Back-to-back untimed executions for options_.warmup_seconds (the H100 idles at a low clock).
void D3D12Backend::warm_up(const DeviceRun& run) {
    record_execution(device_->begin(), run, tables_);
    device_->close();
    warm_up_for(options_.warmup_seconds, [&](uint32_t copies) { device_->resubmit_and_wait(copies); });
}

// The timed executions back to back in one submission, between timestamps, and the output's copy to the readback
// buffer; on a queue without timestamps, host time per submission.
std::vector<double> D3D12Backend::time_executions(const DeviceRun& run, int repeat, const Tensor& output) {
    Buffer& out = *run.buffers[run.output_slot];
    kept_buffer(readback_, padded_bytes(output.bytes()), HeapKind::readback, "the readback buffer");
    const std::optional<uint64_t> frequency = device_->timestamp_frequency();
    std::vector<double> kernel_ms;
    if (!frequency) {
        for (int r = 0; r < repeat; ++r) {
            ID3D12GraphicsCommandList* list = device_->begin();
            transition(list, out, run.kernel_states[run.output_slot]);
            record_execution(list, run, tables_);
            if (r + 1 == repeat) record_download(list, run, output, readback_);
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
        record_execution(list, run, tables_);
        list->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 2 * r + 1);
    }
    list->ResolveQueryData(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0, queries, times_.resource.get(), 0);
    record_download(list, run, output, readback_);
    device_->submit_and_wait();
    return intervals_ms(times_, repeat, *frequency);
}

void D3D12Backend::download_output(Tensor& output) const {
    parallel_copy(output.buffer.data(), reinterpret_cast<const std::byte*>(readback_.mapped), output.bytes());
}

ExecutionStats D3D12Backend::execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                                     const RunOptions& options) {
    if (started_ != finished_) throw std::logic_error("gpu run: overlapped runs are still unfinished");
    const auto run_start = Clock::now();
    ExecutionStats stats;
    auto start = Clock::now();
    DeviceRun run = prepare_program(plan);
    stats.kernel = run.program.kernel;
    bind_buffers(run, slots_, inputs, output);
    const std::vector<bool> resident = bind_kept_inputs(run, inputs);
    stats.setup_ms = std::exchange(pending_setup_ms_, 0.0) + ms_since(start);

    start = Clock::now();
    upload_inputs(run, inputs, resident);
    stats.upload_ms = ms_since(start);

    start = Clock::now();
    make_descriptor_tables(run, tables_);
    stats.setup_ms += ms_since(start);

    const int repeat = std::max(1, options.repeat);
    if (repeat > 1 && options_.warmup_seconds > 0) warm_up(run);
    stats.kernel_ms = time_executions(run, repeat, output);

    start = Clock::now();
    download_output(output);
    stats.download_ms = ms_since(start);
    kept_.keep_output(slots_[run.output_slot], output.bytes());
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
        slot_buffer(slots_, i, infos.size() + 1, infos[i].bytes());
        upload_bytes += padded_bytes(infos[i].bytes());
    }
    const uint64_t output_bytes = plan_output_info(plan).bytes();
    slot_buffer(slots_, infos.size(), infos.size() + 1, output_bytes);
    kept_buffer(upload_, std::max<uint64_t>(upload_bytes, 16), HeapKind::upload, "the upload buffer");
    kept_buffer(readback_, padded_bytes(output_bytes), HeapKind::readback, "the readback buffer");
    pending_setup_ms_ += ms_since(start);
}

std::vector<bool> D3D12Backend::bind_kept_inputs(DeviceRun& run, std::span<const Tensor* const> inputs) {
    const std::vector<Buffer*> kept = kept_.take_inputs(inputs);
    std::vector<bool> resident(inputs.size(), false);
    for (size_t i = 0; i < inputs.size(); ++i)
        if (kept[i]) run.buffers[i] = kept[i], resident[i] = true;
    return resident;
}

// As the Vulkan backend's: small runs (tensors of at most kMaxOverlappedBytes each), and a queue with timestamps.
bool D3D12Backend::can_start(const Plan&, std::span<const Tensor* const> inputs, const Tensor& output,
                             const RunOptions& options) const {
    return device_->timestamp_frequency() &&
           is_overlappable_run(inputs, output, options, kept_.has_next_run_keys(), kMaxOverlappedBytes);
}

Frame& D3D12Backend::free_frame() {
    if (started_ - finished_ == frames_.size())
        throw std::logic_error("gpu run: more overlapped runs started than there are frames");
    Frame& frame = frames_[started_ % frames_.size()];
    if (!frame.list) {
        frame.list = std::make_unique<CommandList>(device_->get());
        D3D12_QUERY_HEAP_DESC desc{};
        desc.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
        desc.Count = 2;
        check(device_->get()->CreateQueryHeap(&desc, frame.queries.iid(), frame.queries.put()), "CreateQueryHeap");
        frame.times = device_->make_buffer(2 * sizeof(uint64_t), HeapKind::readback, "the timestamps' buffer");
    }
    return frame;
}

// One submission per run: the inputs' copies from the frame's upload buffer, the kernel between timestamps, the
// output's copy to its readback buffer.
void D3D12Backend::start(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output) {
    require_tensors_match_plan(plan, inputs, output);
    Frame& frame = free_frame();  // finished: nothing of it is in flight
    ExecutionStats stats;
    auto begin = Clock::now();
    DeviceRun run = prepare_program(plan);
    stats.kernel = run.program.kernel;
    bind_buffers(run, frame.slots, inputs, output);
    kept_buffer(frame.readback, padded_bytes(output.bytes()), HeapKind::readback, "the readback buffer");
    stats.setup_ms = ms_since(begin);

    begin = Clock::now();
    const std::vector<StagedPiece> pieces = stage(run, inputs, std::vector<bool>(inputs.size(), false), frame.upload);
    stats.upload_ms = ms_since(begin);

    begin = Clock::now();
    make_descriptor_tables(run, frame.tables);
    ID3D12GraphicsCommandList* list = frame.list->begin();
    record_upload(list, run, pieces, frame.upload);
    list->EndQuery(frame.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0);
    record_execution(list, run, frame.tables);
    list->EndQuery(frame.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, 1);
    list->ResolveQueryData(frame.queries.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0, 2, frame.times.resource.get(), 0);
    record_download(list, run, output, frame.readback);
    frame.fence_value = device_->submit(*frame.list);
    stats.setup_ms += ms_since(begin) + std::exchange(pending_setup_ms_, 0.0);
    frame.output = &output;
    frame.stats = std::move(stats);
    ++started_;
}

ExecutionStats D3D12Backend::finish() {
    if (finished_ == started_) throw std::logic_error("gpu run: no overlapped run to finish");
    Frame& frame = frames_[finished_++ % frames_.size()];
    device_->wait(frame.fence_value);
    ExecutionStats stats = std::move(frame.stats);
    stats.kernel_ms = intervals_ms(frame.times, 1, *device_->timestamp_frequency());
    const auto begin = Clock::now();
    parallel_copy(frame.output->buffer.data(), reinterpret_cast<const std::byte*>(frame.readback.mapped),
                  frame.output->bytes());
    stats.download_ms = ms_since(begin);
    frame.output = nullptr;
    return stats;
}

}  // namespace

std::unique_ptr<Backend> make_d3d12_backend(std::optional<int> adapter, const GpuBackendOptions& options) {
    return std::make_unique<D3D12Backend>(adapter, options);
}

}  // namespace dmlgrad::d3d12
