#pragma once
// The planes kernel's geometry (kernels/resample_grad_planes.hlsl): the view's resampled axes as planes, dX plane p
// made from dY plane p alone, and the runs of dY offsets (linear: the terms) that each element of a plane sums (the
// same in every plane).
#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/ops/resample_geometry.h"

namespace dmlgrad::resample_gpu {

// The view's axes from its first axis with a table on (those before it are identities: whole planes follow each
// other in dX and in dY), their elements in dX and dY, and the terms of a plane: every element's, the product over
// the plane's axes of their taps (a linear plan's terms, a nearest plan's dY offsets).
struct Planes {
    size_t first_axis = 0;
    uint64_t dx = 1;
    uint64_t dy = 1;
    uint64_t terms = 1;
};

// The view's planes; none where every axis is an identity.
std::optional<Planes> planes_of(const View& view);

// The kernel's words (interface/resample_grad.h's PLANE_*), to be placed at word `at` of the tables (the run starts
// are word indices of the tables): P, Q, each element's first run, then the runs, each element's dY offsets in the
// CPU's order merged into runs of consecutive offsets.
std::vector<uint32_t> plane_runs(const View& view, const Planes& planes, uint32_t at);

// The same for linear plans, with terms (PLANE_TERM_WORDS each: a dY offset and its weight product) for runs.
std::vector<uint32_t> plane_terms(const View& view, const Planes& planes, uint32_t at);

}  // namespace dmlgrad::resample_gpu
