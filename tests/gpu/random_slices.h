#pragma once
// Random slice-grad plans for the slice kernels' GPU tests (each test says which sizes and steps it draws).
#include <cstdint>
#include <random>
#include <vector>

#include "slice_visit.h"

namespace dmlgrad::testing {

// How random_slice draws each axis: sizes, and steps of either sign.
struct SliceDraw {
    int64_t row_min, row_max;    // the innermost axis' size, in [row_min, row_max]
    int64_t outer_max;           // each outer axis' size, in [1, outer_max]
    int64_t outer_step_min = 1;  // an outer axis' |step| in [outer_step_min, 4]; the innermost's in [1, 4]
    bool sparse = false;         // true: a random number of the indices a step reaches; false: 1 in 8 steps one
                                 // past the axis (one element), and 3 in 4 axes visited as far as the step goes
};

inline SliceGradPlan random_slice(DType type, size_t rank, const SliceDraw& draw, std::mt19937_64& rng) {
    std::vector<Visit> axes;
    for (size_t a = 0; a < rank; ++a) {
        const bool inner = a + 1 == rank;
        const int64_t n = inner ? draw.row_min + int64_t(rng() % uint64_t(draw.row_max - draw.row_min + 1))
                                : 1 + int64_t(rng() % uint64_t(draw.outer_max));
        const int64_t step_min = inner ? 1 : draw.outer_step_min;
        int64_t step = step_min + int64_t(rng() % uint64_t(5 - step_min));
        if (!draw.sparse && rng() % 8 == 0) step = n + 1;
        if (rng() % 2) step = -step;
        axes.push_back(random_visit(n, step, !draw.sparse && rng() % 4 != 0, rng));
    }
    return visit_plan(type, axes);
}

}  // namespace dmlgrad::testing
