// validate() of gpu/dispatch.h: the API-free rules of a GpuProgram, checked once for every backend.
#include <fmt/format.h>

#include <stdexcept>

#include "gpu/dispatch.h"
#include "gpu/kernel_registry.h"

namespace dmlgrad {
namespace {

// The bytes of each slot's buffer: the plan's inputs, its output, then the program's constants (padded) and its
// scratch buffer.
std::vector<uint64_t> slot_bytes(const GpuProgram& program, const Plan& plan) {
    std::vector<uint64_t> bytes;
    for (const TensorInfo& info : plan_input_infos(plan)) bytes.push_back(padded_bytes(info.bytes()));
    bytes.push_back(padded_bytes(plan_output_info(plan).bytes()));
    for (const auto& words : program.constants) bytes.push_back(padded_bytes(4 * words.size()));
    if (program.scratch_bytes) bytes.push_back(program.scratch_bytes);
    return bytes;
}

// The rule a window breaks, or nullptr.
const char* broken_window_rule(const BufferWindow& w, bool uniform, const std::vector<uint64_t>& slots, size_t tensors,
                               size_t constants, const DeviceLimits& limits) {
    if (w.slot >= slots.size()) return "a slot the run does not have";
    if (uniform && (w.slot < tensors || w.slot >= tensors + constants)) return "a uniform binding not of constants";
    if (w.offset % limits.offset_alignment != 0) return "an offset off the alignment";
    if (w.range == 0 || w.range > limits.max_binding_bytes) return "a range of 0 or more than one binding";
    if (w.offset + w.range > slots[w.slot]) return "a window past its buffer";
    return nullptr;
}

void require(bool ok, const GpuProgram& program, std::string_view where, std::string_view rule) {
    if (!ok) throw std::logic_error(fmt::format("gpu program {}: {}{}", program.kernel, where, rule));
}

}  // namespace

void validate(const GpuProgram& program, const DeviceLimits& limits, const Plan& plan) {
    find_kernel(program.kernel);  // throws for a name the build did not compile
    require(program.binding_types.empty() || program.binding_types.size() == program.binding_count, program, "",
            "binding types for another number of bindings");
    require(program.push_bytes % 4 == 0 && program.push_bytes <= kMaxPushConstantBytes, program, "",
            "push constants of a size no API takes");
    require(program.scratch_bytes % 16 == 0, program, "", "a scratch buffer of partial uint4s");
    const std::vector<uint64_t> slots = slot_bytes(program, plan);
    const size_t tensors = plan_input_infos(plan).size() + 1;
    for (size_t s = 0; s < program.steps.size(); ++s) {
        const DispatchStep& step = program.steps[s];
        const std::string where = fmt::format("step {}: ", s);
        require(step.push.size() * 4 == program.push_bytes, program, where, "push constants of another size");
        require(step.bindings.size() == program.binding_count, program, where, "another number of bindings");
        require(step.groups >= 1 && step.groups <= limits.max_groups_x, program, where,
                "no workgroups, or more than a dispatch takes");
        for (size_t i = 0; i < step.bindings.size(); ++i) {
            const bool uniform = i < program.binding_types.size() && program.binding_types[i] == BindingType::uniform;
            const char* rule =
                broken_window_rule(step.bindings[i], uniform, slots, tensors, program.constants.size(), limits);
            require(rule == nullptr, program, fmt::format("{}binding {}: ", where, i), rule ? rule : "");
        }
    }
}

}  // namespace dmlgrad
