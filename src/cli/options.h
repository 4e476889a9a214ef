#pragma once
// What the user gave on the command line, bound straight to CLI11 in main.cpp. Lists stay text until
// list_parsing turns them into numbers, so a bad value gets a message naming its flag.
#include <optional>
#include <string>
#include <vector>

#include "gpu/gpu_api.h"

namespace dmlgrad::cli {

enum class Verbosity { quiet, normal, verbose };

// --repeat's limit: the timings of every execution are kept for the exact median, so this bounds their memory
// (800 KB) and the run's length.
inline constexpr int kMaxRepeat = 100000;

// Flags every operator subcommand takes.
struct CommonOptions {
    bool cpu = false;
    std::string api;  // --api: "vulkan", "d3d12", or "" (Vulkan; on a manifest line, the batch's --api)
    std::optional<int> device;
    int repeat = 1;  // 1 to kMaxRepeat
    bool check = false;
    std::string compare;         // --compare REF.npy ("" = none)
    std::string rtol, atol;      // --rtol/--atol for --check and --compare ("" = the operator's default)
    std::string save_diff;       // --save-diff PREFIX: on a failed comparison, the result and error maps ("" = none)
    bool deterministic = false;  // --deterministic: every repeat's output bit-identical
    std::vector<std::string> command_words;  // the subcommand and its flags as typed, for the reproducer line
    bool explain = false;                    // --explain: print the kernel and the index mapping, run nothing
    bool json = false;
    Verbosity verbosity = Verbosity::normal;
};

// The GPU API named by --api text ("" is Vulkan, the default).
inline GpuApi gpu_api_of(const std::string& api) { return api == "d3d12" ? GpuApi::d3d12 : GpuApi::vulkan; }

struct TensorPaths {
    std::string input;           // --input (X)
    std::string input_gradient;  // --input-gradient (dY)
    std::string output;          // --output (dX)
};

struct ClipOptions {
    std::string min, max;
};

struct SliceOptions {
    std::string output_sizes, offsets, sizes, strides;
    std::string slice;  // --slice: numpy's basic slicing, instead of offsets, sizes and strides
};

struct MaxPoolOptions {
    std::string window_size, strides, start_padding, end_padding, dilations;
};

// Three forms: raw DirectML parameters, ONNX Resize's attributes or PyTorch's interpolate arguments. Empty text
// and false mean "not given" (operator_command checks which form the given flags make).
struct ResampleOptions {
    std::string output_sizes;
    std::string interpolation_mode, rounding_direction, scales, input_pixel_offsets, output_pixel_offsets;  // raw
    std::string coordinate_transformation_mode, nearest_mode;                                               // ONNX
    std::string torch_mode, scale_factor;                                                                   // PyTorch
    bool align_corners = false, antialias = false;
};

}  // namespace dmlgrad::cli
