#pragma once
// The fractions kernel's column tables (kernels/resample_grad_fractions.hlsl): linear plans whose dX rows each read
// the dY row of their own index (view axes 0-2 identities) keep, in place of axis 3's tap tables (two words a dX
// column and a weight a tap), one word a dX column and one a dY column. Each dY column o of such an axis (the
// DirectML, PyTorch and ONNX rules alike) reaches at most two neighbouring dX columns, lower(o) and lower(o) + 1,
// with weights 1 - f and f, f its fraction; lower(o) never decreases with o. Column i then sums, in the CPU's dY
// order, f v over the dY columns whose lower column is i - 1 and (1 - f) v over those whose lower column is i.
#include <cstdint>
#include <optional>
#include <vector>

#include "gpu/ops/resample_geometry.h"

namespace dmlgrad::resample_gpu {

// Axis 3's fraction tables, dX size n and dY size m: n + 2 words `bounds`, bounds[i + 1] the first dY column whose
// lower column is i or more (bounds[0] = 0, bounds[n + 1] = m), then m words of fractions (float bits; 0 where a dY
// column reaches one dX column, with weight 1). None where view axes 0-2 are not identities, axis 3 is one, or a
// dY column's taps are not of that form (a weight other than 1 - f in float32, one tap of a weight other than 1,
// taps not neighbours, no tap, a lower column that decreases): the tables must give every dX column exactly the
// plan's taps, in order, with the plan's weights.
std::optional<std::vector<uint32_t>> fraction_tables(const View& view);

// The longest dY range [bounds[i], bounds[i + 2]) a dX column of `tables` (fraction_tables' for dX size n) steps over:
// the kernel's written-out steps.
uint64_t longest_fraction_range(const std::vector<uint32_t>& tables, uint64_t n);

}  // namespace dmlgrad::resample_gpu
