#include "gpu_testing.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <tuple>

#include "core/overloaded.h"
#include "cpu/cpu_backend.h"

namespace dmlgrad::testing {
namespace {

template <class List>
void append_list(std::ostringstream& s, const char* name, const List& values) {
    s << ' ' << name;
    for (const auto& v : values) s << ' ' << v;
}

// A backend of the tested API on the default device, its outputs poisoned.
std::unique_ptr<Backend> poisoning_backend(GpuBackendOptions options) {
    options.poison_output = true;
    return make_gpu_backend(std::nullopt, tested_api(), options);
}

}  // namespace

GpuApi tested_api() {
    static const GpuApi api = [] {
        const char* name = std::getenv("DMLGRAD_TEST_GPU_API");
        return name && std::string(name) == gpu_api_name(GpuApi::d3d12) ? GpuApi::d3d12 : GpuApi::vulkan;
    }();
    return api;
}

Backend& gpu() {
    static std::unique_ptr<Backend> backend = poisoning_backend({});
    return *backend;
}

Backend& gpu_with_limits(const DeviceLimits& cap) {
    static std::map<std::tuple<uint64_t, uint64_t, uint32_t>, std::unique_ptr<Backend>> backends;
    auto& slot = backends[{cap.max_binding_bytes, cap.offset_alignment, cap.max_groups_x}];
    if (!slot) {
        GpuBackendOptions options;
        options.limits_cap = cap;
        slot = poisoning_backend(options);
    }
    return *slot;
}

Backend& gpu_with_staging() {
    static std::unique_ptr<Backend> backend = [] {
        GpuBackendOptions options;
        options.force_staging = true;
        return poisoning_backend(options);
    }();
    return *backend;
}

Backend& cpu() {
    static std::unique_ptr<Backend> backend = make_cpu_backend();
    return *backend;
}

Tensor run_on(Backend& backend, const Plan& plan, const std::vector<const Tensor*>& inputs, ExecutionStats* stats,
              int repeat) {
    Tensor out(plan_output_info(plan));
    poison(out);
    RunOptions options;
    options.repeat = repeat;
    ExecutionStats s = backend.run(plan, inputs, out, options);
    if (stats) *stats = s;
    return out;
}

Tensor run_cpu(const Plan& plan, const std::vector<const Tensor*>& inputs) { return run_on(cpu(), plan, inputs); }

void expect_gpu_matches_cpu(const Plan& plan, const std::vector<const Tensor*>& inputs, Backend& backend, int repeat) {
    SCOPED_TRACE(describe(plan));
    ASSERT_EQ(inputs.size(), plan_input_infos(plan).size());
    EXPECT_TRUE(bitwise_equal(run_cpu(plan, inputs), run_on(backend, plan, inputs, nullptr, repeat)));
}

void expect_gpu_matches_cpu(const Plan& plan, const Tensor& dy, Backend& backend, int repeat) {
    expect_gpu_matches_cpu(plan, std::vector<const Tensor*>{&dy}, backend, repeat);
}

void expect_gpu_matches_cpu(const Plan& plan, const Tensor& x, const Tensor& dy, Backend& backend, int repeat) {
    expect_gpu_matches_cpu(plan, std::vector<const Tensor*>{&x, &dy}, backend, repeat);
}

std::string describe(const Plan& plan) {
    std::ostringstream s;
    s << plan_op_name(plan) << ' ' << dtype_name(plan_dtype(plan));
    std::visit(Overloaded{[&](const ReluGradPlan& p) { s << ' ' << shape_string(p.shape); },
                          [&](const ClipGradPlan& p) {
                              s << ' ' << shape_string(p.shape) << std::hex << " min bits 0x" << p.min_bits
                                << " max bits 0x" << p.max_bits;
                          },
                          [&](const SliceGradPlan& p) {
                              s << " dX " << shape_string(p.dx_shape) << " dY " << shape_string(p.dy_shape);
                              append_list(s, "start", p.start);
                              append_list(s, "stride", p.stride);
                          },
                          [&](const MaxPoolGradPlan& p) {
                              s << " X " << shape_string(p.x_shape) << " dY " << shape_string(p.dy_shape);
                              append_list(s, "window", p.window);
                              append_list(s, "stride", p.stride);
                              append_list(s, "start", p.start_padding);
                              append_list(s, "dilation", p.dilation);
                          },
                          [&](const ResampleGradPlan& p) {
                              s << (p.mode == InterpolationMode::linear ? " linear" : " nearest") << " dX "
                                << shape_string(p.dx_shape) << " dY " << shape_string(p.dy_shape);
                              append_list(s, "scales", p.scales);
                              append_list(s, "in-offsets", p.input_pixel_offsets);
                              append_list(s, "out-offsets", p.output_pixel_offsets);
                          }},
               plan);
    return s.str();
}

Tensor random_bits(DType type, const Shape& shape, std::mt19937_64& rng) {
    Tensor t(TensorInfo{type, shape});
    const size_t bytes = t.bytes();
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        const uint64_t r = rng();
        std::memcpy(t.buffer.data() + i, &r, 8);
    }
    const uint64_t r = rng();
    std::memcpy(t.buffer.data() + i, &r, bytes - i);
    return t;
}

}  // namespace dmlgrad::testing
