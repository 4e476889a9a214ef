#pragma once
// Resample grad's kernel families and the names of their compiled variants. The family table (the chooser's
// order, each family's fit, program and APIs) lives in resample_grad_dispatch.cpp; kernel_name() is the one place
// a variant's name is spelled, read by the dispatch, the tests and the check that src/gpu/CMakeLists.txt compiles
// exactly compiled_variants() (tests/gpu/kernel_families_test.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "gpu/gpu_api.h"
#include "ops/resample_grad.h"

namespace dmlgrad::resample_gpu {

// In the order the chooser tries them: nearest fp16 blocks (kernels/resample_grad_block.hlsl), nearest rows where
// view axis 3 is an identity of whole uint4s, then of any long length (shifted; kernels/resample_grad_rows.hlsl),
// planes where the resampled axes make tiny planes or planes of short rows (nearest) or small planes of rows that read
// several dY rows (linear; kernels/resample_grad_planes.hlsl),
// nearest lines where every dX row reads one dY row at most (kernels/resample_grad_lines.hlsl), sparse walks of linear
// downscales of at most one tap an index (kernels/resample_grad_walk.hlsl, SPARSE), walks of nearest plans
// and linear fp16 plans where dX is one chunk and the strips or runs would not make them with their fast code
// (kernels/resample_grad_walk.hlsl), fractions of linear f32 plans whose rows read their own dY row, where axis 3's
// tap tables would be a large share of the bytes (kernels/resample_grad_fractions.hlsl), an element a thread for
// small linear f32 plans that the strips and runs would make element by element (kernels/resample_grad.hlsl,
// ONE_ELEMENT), strips of rows where dX is one chunk (those of one-tap plans first;
// kernels/resample_grad_strips_{f32,f16}.hlsl), and runs (kernels/resample_grad.hlsl; the thread mappings of
// interface/resample_grad.h).
enum class Family : uint8_t {
    block,
    rows,
    shifted_rows,
    planes,
    lines,
    sparse_walk,
    walk,
    fractions,
    elements,
    one_tap_strips,
    strips,
    runs
};

// A compiled variant: its family and the parameters its name carries.
struct Variant {
    Family family = Family::runs;
    InterpolationMode mode = InterpolationMode::nearest;
    DType dtype = DType::f32;
    uint32_t columns = 0;  // block: dY columns per dX column
    uint32_t taps = 0;     // strips: linear fp32 lists of view axes 2 and 3 of at most this many taps (fixed), or 0;
                           // lines: the most taps an element has (LINE_TAPS; 0: the bounds, any); fractions: steps
                           // written out; walk: steps a pass (AHEAD_STEPS: "_ahead"), or 0 (one)
    bool words = false;    // walk (linear fp16), lines (fp16 of 4 taps): one 32-bit word a thread, not a uint4
    bool operator==(const Variant&) const = default;
};

// "resample_grad_linear_f32_strips_taps3", "resample_grad_block_x2_f16", ...
std::string kernel_name(const Variant& variant);

// Every variant the families can choose, in the table's order.
std::vector<Variant> compiled_variants();

// The APIs that can run a family.
ApiSet family_apis(Family family);

}  // namespace dmlgrad::resample_gpu
