#include "gpu/vulkan/backend.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/parallel.h"
#include "gpu/gpu.h"
#include "gpu/kept_outputs.h"
#include "gpu/kernel_registry.h"
#include "gpu/overlapped_run.h"
#include "gpu/thread_loops.h"
#include "gpu/vulkan/buffer.h"
#include "gpu/vulkan/check.h"
#include "gpu/vulkan/commands.h"
#include "gpu/vulkan/descriptors.h"
#include "gpu/vulkan/device.h"
#include "gpu/vulkan/instance.h"
#include "gpu/vulkan/pipeline.h"
#include "gpu/vulkan/timer.h"
#include "gpu/vulkan/transfer.h"
#include "gpu/warm_up.h"

namespace dmlgrad::vk {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

DeviceLimits effective_limits(const VkPhysicalDeviceLimits& device, const DeviceLimits& cap) {
    DeviceLimits limits;
    limits.offset_alignment = std::max<uint64_t>({16, device.minStorageBufferOffsetAlignment, cap.offset_alignment});
    uint64_t range = device.maxStorageBufferRange;
    if (cap.max_binding_bytes) range = std::min(range, cap.max_binding_bytes);
    limits.max_binding_bytes = range / limits.offset_alignment * limits.offset_alignment;
    limits.max_groups_x = device.maxComputeWorkGroupCount[0];
    if (cap.max_groups_x) limits.max_groups_x = std::min(limits.max_groups_x, cap.max_groups_x);
    return limits;
}

// Staging chunks of 16 MiB: big enough that per-chunk overhead vanishes, small enough to pin quickly.
constexpr uint64_t kStagingChunk = uint64_t(16) << 20;

// One run on the device: the program, its pipeline, a buffer per slot (inputs, output, constants, scratch) and a
// descriptor set per dispatch step. The pool is the sets' memory.
struct DeviceRun {
    GpuProgram program;
    const ComputePipeline* pipe = nullptr;
    bool unified = false;  // buffers are host-mapped device memory: no staging copies
    // The output's copy to the staging ring is recorded after the timed executions, in their submission (outputs
    // of one staging chunk on discrete GPUs with timestamps: small jobs, where a submission's wait counts).
    bool download_in_kernel_submission = false;
    std::vector<const Buffer*> buffers;
    size_t output_slot = 0;
    std::unique_ptr<DescriptorPool> pool;
    std::vector<VkDescriptorSet> sets;
};

// A run's buffer of one slot (inputs, output, constants, scratch in order), kept from run to run.
struct SlotBuffer {
    std::unique_ptr<Buffer> buffer;
    VkBufferUsageFlags usage = 0;
    MemoryUse use = MemoryUse::device;
};

// What one overlapped run needs, kept and reused: while the device runs one frame's job, the host fills the
// other frame's staging memory. Each frame has buffers of its own, so no run writes what another may still read.
struct Frame {
    std::vector<SlotBuffer> slots;
    SlotBuffer upload, download;  // staging, where memory is not unified
    std::unique_ptr<CommandStream> stream;
    std::unique_ptr<TimestampTimer> timer;
    DeviceRun run;  // of the started run: its descriptor sets live until it finishes
    Tensor* output = nullptr;
    ExecutionStats stats;
};

class VulkanBackend final : public Backend, public OverlappedRuns, public ReservedRuns, public ResidentTensors {
public:
    VulkanBackend(std::optional<int> device_index, const VulkanOptions& options) : options_(options) {
        const auto start = Clock::now();
        instance_ = std::make_unique<Instance>();
        const double instance_ms = ms_since(start);
        const std::vector<PhysicalDevice> devices = instance_->physical_devices();
        const int chosen = choose_device(devices, device_index);
        const double enumerated_ms = ms_since(start);
        device_ = std::make_unique<Device>(*instance_, devices[size_t(chosen)]);
        if (options.max_allocation_cap) device_->cap_max_allocation(options.max_allocation_cap);
        limits_ = effective_limits(device_->limits(), options.limits_cap);
        limits_.shader_int64 = device_->shader_int64();
        limits_.thread_loop_limit = thread_loop_limit(device_->name());
        pending_setup_ms_ = ms_since(start);
        spdlog::debug("vulkan: instance {:.1f} ms, device enumeration {:.1f} ms, device {:.1f} ms", instance_ms,
                      enumerated_ms - instance_ms, pending_setup_ms_ - enumerated_ms);
    }

    // The staging ring (pinned host memory, unpinned by the kernel) and the slots' device memory (freed by the
    // driver) side by side, once the device is idle: on the H100 machine, for 2 x 1 GiB in and 1 GiB out, ~30 and
    // ~80 ms one after the other (the single command frees its backend while it commits: cli/runner.cpp).
    ~VulkanBackend() override {
        device_->fns().vkDeviceWaitIdle(device_->handle());
        parallel_for(2, 1, [this](uint64_t begin, uint64_t end) {
            for (uint64_t part = begin; part < end; ++part)
                if (part == 0)
                    transfer_ring_.reset();
                else
                    slots_.clear();
        });
    }

    std::string kind() const override { return "gpu"; }
    std::string device_name() const override { return device_->name(); }

    bool can_start(const Plan& plan, std::span<const Tensor* const> inputs, const Tensor& output,
                   const RunOptions& options) const override;
    void start(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output) override;
    ExecutionStats finish() override;
    ReservedRuns* reserved_runs() override { return this; }
    OverlappedRuns* overlapped_runs() override { return this; }
    ResidentTensors* resident_tensors() override { return this; }
    void reserve(const Plan& plan) override;
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
    void bind_buffers(DeviceRun& run, std::vector<SlotBuffer>& slots, std::span<const Tensor* const> inputs,
                      const Tensor& output);
    void poison_output(const DeviceRun& run);
    void upload_inputs(const DeviceRun& run, std::span<const Tensor* const> inputs, const std::vector<bool>& resident);
    // ResidentTensors: binds the kept outputs the next run's keys name (returns which inputs).
    std::vector<bool> bind_kept_inputs(DeviceRun& run, std::span<const Tensor* const> inputs);
    void make_descriptor_sets(DeviceRun& run);
    void warm_up(const DeviceRun& run, CommandStream& stream);
    std::vector<double> time_executions(const DeviceRun& run, CommandStream& stream, int repeat, const Tensor& output);
    void download_output(const DeviceRun& run, Tensor& output);

    const ComputePipeline& pipeline(const GpuProgram& program);
    bool unified() const { return device_->unified_memory() && !options_.force_staging; }
    // The kernels' buffer of tensor `index` of a run with `count` tensors (its inputs, then its output), kept in
    // `slots` at the same index.
    const Buffer& tensor_buffer(std::vector<SlotBuffer>& slots, size_t index, size_t count, uint64_t bytes,
                                bool unified);
    // The buffer of slot `slot` of `slots`, kept from earlier runs when it is large enough: a batch of many jobs
    // allocates device memory for its largest job only.
    const Buffer& slot_buffer(std::vector<SlotBuffer>& slots, size_t slot, uint64_t bytes, VkBufferUsageFlags usage,
                              MemoryUse use, const std::string& what);
    // `kept`'s buffer, replaced (contents not kept) when it is smaller than `bytes` or made for another use.
    const Buffer& kept_buffer(SlotBuffer& kept, uint64_t bytes, VkBufferUsageFlags usage, MemoryUse use,
                              const std::string& what);
    // A frame's staging buffer of at least `bytes` for `use` (MemoryUse::upload or download).
    const Buffer& staging_buffer(SlotBuffer& kept, uint64_t bytes, MemoryUse use);
    // The overlapped runs' steps (start, finish).
    Frame& free_frame();
    void stage_inputs(Frame& frame, const DeviceRun& run, std::span<const Tensor* const> inputs);
    void record_frame(Frame& frame, const DeviceRun& run, std::span<const Tensor* const> inputs, const Tensor& output);
    // The staging ring for transfers of `bytes` either way (discrete GPUs), made or enlarged on first need.
    StagingRing& staging_ring(uint64_t bytes);
    void record_execution(CommandStream& stream, const GpuProgram& program, const ComputePipeline& pipe,
                          const std::vector<VkDescriptorSet>& sets);

    VulkanOptions options_;
    std::unique_ptr<Instance> instance_;
    std::unique_ptr<Device> device_;
    DeviceLimits limits_;
    std::map<std::string, std::unique_ptr<ComputePipeline>, std::less<>> pipelines_;
    std::vector<SlotBuffer> slots_;  // declared before the ring: destroyed after its pending copies finish
    // One ring for uploads and downloads, kept: pinning host memory is slow (and unpinning it). A run's downloads
    // come after its uploads, so one ring serves both at the cost of one (the 2 x 1 GiB command: 30 ms less to
    // make and to free on the H100 machine, uploads as fast from host-cached memory as from write-combined).
    std::unique_ptr<StagingRing> transfer_ring_;
    std::array<Frame, OverlappedRuns::kMaxStarted> frames_;  // made on first start()
    size_t started_ = 0, finished_ = 0;                      // runs so far; frame i % kMaxStarted holds run i
    double pending_setup_ms_ = 0;   // instance and device creation (and reserve()), reported by the first run
    KeptOutputs<SlotBuffer> kept_;  // declared after the ring, freed before it
};

StagingRing& VulkanBackend::staging_ring(uint64_t bytes) {
    const uint64_t chunk = std::min<uint64_t>(kStagingChunk, padded_bytes(bytes));
    if (!transfer_ring_ || transfer_ring_->chunk_bytes() < chunk) {
        transfer_ring_.reset();  // its destruction waits for its copies in flight
        transfer_ring_ = std::make_unique<StagingRing>(*device_, chunk);
    }
    return *transfer_ring_;
}

const Buffer& VulkanBackend::slot_buffer(std::vector<SlotBuffer>& slots, size_t slot, uint64_t bytes,
                                         VkBufferUsageFlags usage, MemoryUse use, const std::string& what) {
    if (slots.size() <= slot) slots.resize(slot + 1);
    return kept_buffer(slots[slot], bytes, usage, use, what);
}

const Buffer& VulkanBackend::kept_buffer(SlotBuffer& s, uint64_t bytes, VkBufferUsageFlags usage, MemoryUse use,
                                         const std::string& what) {
    if (!s.buffer || s.buffer->size() < bytes || s.usage != usage || s.use != use) {
        s.buffer.reset();  // freed first, so a larger one does not need room for both
        s.buffer = std::make_unique<Buffer>(*device_, bytes, usage, use, what);
        s.usage = usage;
        s.use = use;
    }
    return *s.buffer;
}

// The descriptor type of each binding of the program.
std::vector<VkDescriptorType> descriptor_types(const GpuProgram& program) {
    std::vector<VkDescriptorType> types(program.binding_count, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER);
    for (size_t i = 0; i < program.binding_types.size() && i < types.size(); ++i)
        if (program.binding_types[i] == BindingType::uniform) types[i] = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    return types;
}

const ComputePipeline& VulkanBackend::pipeline(const GpuProgram& program) {
    auto it = pipelines_.find(program.kernel);
    if (it == pipelines_.end()) {
        const auto start = Clock::now();
        it = pipelines_
                 .emplace(program.kernel,
                          std::make_unique<ComputePipeline>(*device_, find_kernel(program.kernel),
                                                            descriptor_types(program), program.push_bytes))
                 .first;
        spdlog::debug("vulkan: pipeline {} created in {:.1f} ms", program.kernel, ms_since(start));
    }
    return *it->second;
}

void VulkanBackend::record_execution(CommandStream& stream, const GpuProgram& program, const ComputePipeline& pipe,
                                     const std::vector<VkDescriptorSet>& sets) {
    const DeviceFunctions& f = device_->fns();
    const VkCommandBuffer cmd = stream.handle();
    // Earlier executions (and uploads) write what this one reads and writes.
    stream.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    f.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.handle());
    VkDescriptorSet bound = VK_NULL_HANDLE;
    for (size_t s = 0; s < program.steps.size(); ++s) {
        const DispatchStep& step = program.steps[s];
        if (step.barrier_before) stream.barrier();
        if (sets[s] != bound) {
            f.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe.layout(), 0, 1, &sets[s], 0, nullptr);
            bound = sets[s];
        }
        f.vkCmdPushConstants(cmd, pipe.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, program.push_bytes, step.push.data());
        f.vkCmdDispatch(cmd, step.groups, 1, 1);
    }
}

DeviceRun VulkanBackend::prepare_program(const Plan& plan) {
    DeviceRun run;
    run.program = build_program(plan, limits_);
    validate(run.program, limits_, plan);
    run.pipe = &pipeline(run.program);
    run.unified = unified();
    return run;
}

// Device buffers, one per slot: inputs, output, constants (written here: they are small and host-visible), scratch.
const Buffer& VulkanBackend::tensor_buffer(std::vector<SlotBuffer>& slots, size_t index, size_t count, uint64_t bytes,
                                           bool unified) {
    constexpr VkBufferUsageFlags kUsage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    const char* input_names[] = {"the first input", "the second input"};
    const char* what = index + 1 == count ? "the output gradient"
                       : count == 2       ? "the input gradient"
                                          : input_names[std::min<size_t>(index, 1)];
    return slot_buffer(slots, index, padded_bytes(bytes), kUsage, unified ? MemoryUse::shared : MemoryUse::device,
                       what);
}

void VulkanBackend::bind_buffers(DeviceRun& run, std::vector<SlotBuffer>& slots, std::span<const Tensor* const> inputs,
                                 const Tensor& output) {
    const size_t count = inputs.size() + 1;
    for (size_t i = 0; i < inputs.size(); ++i)
        run.buffers.push_back(&tensor_buffer(slots, i, count, inputs[i]->bytes(), run.unified));
    run.output_slot = run.buffers.size();
    run.buffers.push_back(&tensor_buffer(slots, run.output_slot, count, output.bytes(), run.unified));
    for (const auto& words : run.program.constants) {
        const Buffer& b = slot_buffer(slots, run.buffers.size(), padded_bytes(4 * words.size()),
                                      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT,
                                      MemoryUse::constants, "operator constants");
        std::memcpy(b.mapped(), words.data(), 4 * words.size());
        b.flush();
        run.buffers.push_back(&b);
    }
    if (run.program.scratch_bytes)
        run.buffers.push_back(&slot_buffer(slots, run.buffers.size(), run.program.scratch_bytes,
                                           VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, MemoryUse::device, "operator scratch"));
}

void VulkanBackend::poison_output(const DeviceRun& run) {
    CommandStream stream(*device_);
    const VkCommandBuffer cmd = stream.begin();
    device_->fns().vkCmdFillBuffer(cmd, run.buffers[run.output_slot]->handle(), 0, VK_WHOLE_SIZE, 0xA5A5A5A5u);
    stream.end();
    stream.submit_and_wait();
}

// Straight into mapped device memory where it is unified, else through a staging ring. The ring does not wait
// for its copies: the barrier at the start of each execution orders them before the kernel.
void VulkanBackend::upload_inputs(const DeviceRun& run, std::span<const Tensor* const> inputs,
                                  const std::vector<bool>& resident) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (resident[i]) continue;  // on the device already (bind_kept_inputs)
        const Tensor& t = *inputs[i];
        if (run.unified) {
            parallel_copy(run.buffers[i]->mapped(), t.buffer.data(), t.bytes());
            run.buffers[i]->flush();
        } else {
            staging_ring(t.bytes()).upload(t.buffer.data(), t.bytes(), run.buffers[i]->handle());
        }
    }
}

// One descriptor set per distinct group of windows; consecutive steps with the same windows share one.
void VulkanBackend::make_descriptor_sets(DeviceRun& run) {
    const GpuProgram& program = run.program;
    const std::vector<VkDescriptorType>& types = run.pipe->binding_types();
    const auto uniforms = uint32_t(std::count(types.begin(), types.end(), VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER));
    const auto steps = uint32_t(program.steps.size());
    run.pool =
        std::make_unique<DescriptorPool>(*device_, steps, steps * (program.binding_count - uniforms), steps * uniforms);
    run.sets.resize(program.steps.size());
    for (size_t s = 0; s < program.steps.size(); ++s) {
        const auto& bindings = program.steps[s].bindings;
        if (s > 0 && bindings == program.steps[s - 1].bindings) {
            run.sets[s] = run.sets[s - 1];
            continue;
        }
        std::vector<VkDescriptorBufferInfo> infos;
        for (size_t i = 0; i < bindings.size(); ++i) {
            const BufferWindow& w = bindings[i];
            const Buffer& b = *run.buffers.at(w.slot);
            // validate() checked the windows against DeviceLimits; Vulkan's own limits of uniform buffers remain.
            if (types[i] == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER &&
                (w.offset % device_->limits().minUniformBufferOffsetAlignment ||
                 w.range > device_->limits().maxUniformBufferRange))
                throw std::logic_error("gpu run: a uniform buffer window beyond the device's limits in " +
                                       program.kernel);
            infos.push_back({b.handle(), w.offset, w.range});
        }
        run.sets[s] = run.pool->make_set(run.pipe->set_layout(), infos, types);
    }
}

// Back-to-back untimed executions for options_.warmup_seconds (the H100 idles at a low clock).
void VulkanBackend::warm_up(const DeviceRun& run, CommandStream& stream) {
    stream.begin(/*reusable=*/true);
    record_execution(stream, run.program, *run.pipe, run.sets);
    stream.end();
    warm_up_for(options_.warmup_seconds, [&](uint32_t copies) { stream.submit_and_wait(copies); });
}

// The timed executions back to back in one submission, timed by GPU timestamps; on a queue without timestamps,
// host time per submission (which includes the submission's overhead).
std::vector<double> VulkanBackend::time_executions(const DeviceRun& run, CommandStream& stream, int repeat,
                                                   const Tensor& output) {
    std::vector<double> kernel_ms;
    if (device_->timestamp_valid_bits() > 0) {
        TimestampTimer timer(*device_, uint32_t(repeat));
        const VkCommandBuffer cmd = stream.begin();
        timer.reset(cmd);
        for (int r = 0; r < repeat; ++r) {
            timer.start(cmd, uint32_t(r));
            record_execution(stream, run.program, *run.pipe, run.sets);
            timer.stop(cmd, uint32_t(r));
        }
        if (run.download_in_kernel_submission) {
            stream.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
            staging_ring(output.bytes()).record_download(cmd, run.buffers[run.output_slot]->handle(), output.bytes());
            stream.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT);
        } else {
            stream.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT);  // mapped reads below
        }
        stream.end();
        stream.submit_and_wait();
        return timer.intervals_ms();
    }
    stream.begin(/*reusable=*/true);
    record_execution(stream, run.program, *run.pipe, run.sets);
    stream.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT);
    stream.end();
    for (int r = 0; r < repeat; ++r) {
        const auto t = Clock::now();
        stream.submit_and_wait();
        kernel_ms.push_back(ms_since(t));
    }
    return kernel_ms;
}

void VulkanBackend::download_output(const DeviceRun& run, Tensor& output) {
    const Buffer& out = *run.buffers[run.output_slot];
    if (run.unified) {
        out.invalidate();
        parallel_copy(output.buffer.data(), out.mapped(), output.bytes());
    } else if (run.download_in_kernel_submission) {
        transfer_ring_->finish_download(output.buffer.data(), output.bytes());
    } else {
        staging_ring(output.bytes()).download(out.handle(), output.buffer.data(), output.bytes());
    }
}

ExecutionStats VulkanBackend::execute(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output,
                                      const RunOptions& options) {
    if (started_ != finished_) throw std::logic_error("gpu run: overlapped runs are still unfinished");
    const auto run_start = Clock::now();
    ExecutionStats stats;
    auto start = Clock::now();
    DeviceRun run = prepare_program(plan);
    stats.kernel = run.program.kernel;
    stats.setup_ms = std::exchange(pending_setup_ms_, 0.0) + ms_since(start);
    stats.kernel = run.program.kernel;

    start = Clock::now();
    bind_buffers(run, slots_, inputs, output);
    const std::vector<bool> resident = bind_kept_inputs(run, inputs);
    if (options_.poison_output) poison_output(run);
    upload_inputs(run, inputs, resident);
    stats.upload_ms = ms_since(start);

    start = Clock::now();
    make_descriptor_sets(run);
    stats.setup_ms += ms_since(start);

    const double before_kernel_ms = ms_since(run_start);
    const int repeat = std::max(1, options.repeat);
    CommandStream stream(*device_);
    if (repeat > 1 && options_.warmup_seconds > 0) warm_up(run, stream);
    run.download_in_kernel_submission =
        !run.unified && device_->timestamp_valid_bits() > 0 && padded_bytes(output.bytes()) <= kStagingChunk;
    stats.kernel_ms = time_executions(run, stream, repeat, output);

    start = Clock::now();
    download_output(run, output);
    stats.download_ms = ms_since(start);
    kept_.keep_output(slots_[run.output_slot], output.bytes());
    spdlog::debug(
        "vulkan: run {:.3f} ms: until the kernel {:.3f} (upload {:.3f}), kernel recorded, run and "
        "waited for {:.3f}, download {:.3f}",
        ms_since(run_start), before_kernel_ms, stats.upload_ms,
        ms_since(run_start) - before_kernel_ms - stats.download_ms, stats.download_ms);
    return stats;
}

std::vector<bool> VulkanBackend::bind_kept_inputs(DeviceRun& run, std::span<const Tensor* const> inputs) {
    const std::vector<SlotBuffer*> kept = kept_.take_inputs(inputs);
    std::vector<bool> resident(inputs.size(), false);
    for (size_t i = 0; i < inputs.size(); ++i)
        if (kept[i]) run.buffers[i] = kept[i]->buffer.get(), resident[i] = true;
    return resident;
}

const Buffer& VulkanBackend::staging_buffer(SlotBuffer& kept, uint64_t bytes, MemoryUse use) {
    return kept_buffer(kept, bytes, staging_usage(use), use, "a staging buffer");
}

// The overlap is for small runs (gpu/overlapped_run.h): tensors of at most one staging chunk each (larger ones go
// through the staging ring), and a queue with timestamps (the kernel time is taken from them while the host does
// other work).
bool VulkanBackend::can_start(const Plan&, std::span<const Tensor* const> inputs, const Tensor& output,
                              const RunOptions& options) const {
    return device_->timestamp_valid_bits() != 0 &&
           is_overlappable_run(inputs, output, options, kept_.has_next_run_keys(), kStagingChunk);
}

Frame& VulkanBackend::free_frame() {
    if (started_ - finished_ == frames_.size())
        throw std::logic_error("gpu run: more overlapped runs started than there are frames");
    Frame& frame = frames_[started_ % frames_.size()];
    if (!frame.stream) {
        frame.stream = std::make_unique<CommandStream>(*device_);
        frame.timer = std::make_unique<TimestampTimer>(*device_, 1);
    }
    return frame;
}

// Straight into the frame's mapped device buffers where memory is unified, else into its staging buffer: the
// inputs one after the other, each at a multiple of 16 bytes.
void VulkanBackend::stage_inputs(Frame& frame, const DeviceRun& run, std::span<const Tensor* const> inputs) {
    if (run.unified) return upload_inputs(run, inputs, std::vector<bool>(inputs.size(), false));
    uint64_t total = 0;
    for (const Tensor* t : inputs) total += padded_bytes(t->bytes());
    const Buffer& staging = staging_buffer(frame.upload, total, MemoryUse::upload);
    std::vector<CopyRegion> copies;
    uint64_t offset = 0;
    for (const Tensor* t : inputs) {
        copies.push_back({staging.mapped() + offset, t->buffer.data(), t->bytes()});
        offset += padded_bytes(t->bytes());
    }
    parallel_copy(copies);
    staging.flush();
}

// One submission per run: the inputs' copies from staging, the kernel between timestamps, the output's copy to
// staging. (The submission makes the host's staging writes visible to the device.)
void VulkanBackend::record_frame(Frame& frame, const DeviceRun& run, std::span<const Tensor* const> inputs,
                                 const Tensor& output) {
    const DeviceFunctions& f = device_->fns();
    CommandStream& stream = *frame.stream;
    const VkCommandBuffer cmd = stream.begin();
    const VkBuffer result = run.buffers[run.output_slot]->handle();
    if (options_.poison_output) f.vkCmdFillBuffer(cmd, result, 0, VK_WHOLE_SIZE, 0xA5A5A5A5u);
    uint64_t offset = 0;
    for (size_t i = 0; i < inputs.size() && !run.unified; ++i) {
        const VkBufferCopy region{offset, 0, inputs[i]->bytes()};
        if (region.size) f.vkCmdCopyBuffer(cmd, frame.upload.buffer->handle(), run.buffers[i]->handle(), 1, &region);
        offset += padded_bytes(region.size);
    }
    frame.timer->reset(cmd);
    frame.timer->start(cmd, 0);
    record_execution(stream, run.program, *run.pipe, run.sets);  // starts with a transfer -> compute barrier
    frame.timer->stop(cmd, 0);
    if (run.unified) {
        stream.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT);
    } else {
        stream.barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
        const VkBufferCopy region{0, 0, padded_bytes(output.bytes())};
        f.vkCmdCopyBuffer(cmd, result, frame.download.buffer->handle(), 1, &region);
        stream.barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT);
    }
    stream.end();
}

void VulkanBackend::start(const Plan& plan, std::span<const Tensor* const> inputs, Tensor& output) {
    require_tensors_match_plan(plan, inputs, output);
    Frame& frame = free_frame();  // finished: nothing of it is in flight
    ExecutionStats stats;
    auto begin = Clock::now();
    DeviceRun run = prepare_program(plan);
    stats.kernel = run.program.kernel;
    bind_buffers(run, frame.slots, inputs, output);
    if (!run.unified) staging_buffer(frame.download, padded_bytes(output.bytes()), MemoryUse::download);
    stats.setup_ms = ms_since(begin);

    begin = Clock::now();
    stage_inputs(frame, run, inputs);
    stats.upload_ms = ms_since(begin);

    begin = Clock::now();
    make_descriptor_sets(run);
    record_frame(frame, run, inputs, output);
    frame.stream->submit();
    stats.setup_ms += ms_since(begin) + std::exchange(pending_setup_ms_, 0.0);
    frame.run = std::move(run);
    frame.output = &output;
    frame.stats = std::move(stats);
    ++started_;
}

ExecutionStats VulkanBackend::finish() {
    if (finished_ == started_) throw std::logic_error("gpu run: no overlapped run to finish");
    Frame& frame = frames_[finished_++ % frames_.size()];
    frame.stream->wait();
    ExecutionStats stats = std::move(frame.stats);
    stats.kernel_ms = frame.timer->intervals_ms();
    const auto begin = Clock::now();
    const Buffer& source = frame.run.unified ? *frame.run.buffers[frame.run.output_slot] : *frame.download.buffer;
    source.invalidate();
    parallel_copy(frame.output->buffer.data(), source.mapped(), frame.output->bytes());
    stats.download_ms = ms_since(begin);
    frame.run = {};  // its descriptor sets
    frame.output = nullptr;
    return stats;
}

// Every allocation on a thread of its own (on the H100 machine ~20 ms per GiB of device memory and ~0.4 ms per
// MiB of pinned staging memory, 110-160 ms in all for 2 x 1 GiB in and 1 GiB out); run() then finds them made.
void VulkanBackend::reserve(const Plan& plan) {
    const auto start = Clock::now();
    // The program first: a plan this device refuses fails before any memory is taken, and the run finds the
    // program's pipeline made.
    prepare_program(plan);
    std::vector<uint64_t> bytes;  // of the tensors: the inputs, then the output
    for (const TensorInfo& info : plan_input_infos(plan)) bytes.push_back(info.bytes());
    bytes.push_back(plan_output_info(plan).bytes());
    const uint64_t largest = *std::max_element(bytes.begin(), bytes.end());
    const bool staged = !unified();
    if (slots_.size() < bytes.size()) slots_.resize(bytes.size());  // no part resizes the vector another one uses
    const size_t parts = bytes.size() + (staged ? 1 : 0);
    // Each part's error kept apart, so the one reported is the one run() would have met first.
    std::vector<std::exception_ptr> errors(parts);
    parallel_for(parts, 1, [&](uint64_t begin, uint64_t end) {
        for (uint64_t p = begin; p < end; ++p) try {
                if (p < bytes.size())
                    tensor_buffer(slots_, p, bytes.size(), bytes[p], !staged);
                else
                    staging_ring(largest);
            } catch (...) {
                errors[p] = std::current_exception();
            }
    });
    for (const std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
    const double reserve_ms = ms_since(start);
    pending_setup_ms_ += reserve_ms;
    spdlog::debug("vulkan: {} buffers{} reserved in {:.1f} ms", bytes.size(), staged ? " and staging" : "", reserve_ms);
}

}  // namespace

std::unique_ptr<Backend> make_vulkan_backend(std::optional<int> device_index, const VulkanOptions& options) {
    return std::make_unique<VulkanBackend>(device_index, options);
}

}  // namespace dmlgrad::vk
