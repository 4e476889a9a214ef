#pragma once
// Max-pool grad's kernel families and the names of their compiled variants. The family table (the chooser's order,
// each family's fit, work items, threads and APIs) lives in maxpool_grad_dispatch.cpp; kernel_name() is the one
// place a variant's name is spelled, read by the dispatch, the tests and the check that src/gpu/CMakeLists.txt
// compiles exactly compiled_variants() (tests/gpu/kernel_families_test.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "gpu/gpu_api.h"

namespace dmlgrad::maxpool_gpu {

// The families in the order the chooser tries them, the most specialised first (maxpool_grad_dispatch.cpp says
// what each one takes).
enum class Family : uint8_t {
    select,
    k2s2,
    cellrows,
    cells,
    walk3d,
    walk3d_k2s1,
    walk2d,
    fast,
    cellwords,
    bands,
    twopass
};

// How a family's variant treats the depth: folded into the planes (planar, or narrow: the fast kernel's tiles for
// rows of up to FAST_NARROW_TILE_COLS elements), or pooled like the rows and columns (cube).
enum class Layout : uint8_t { planar, narrow, cube };

// A compiled variant: its family and the parameters its name carries.
struct Variant {
    Family family = Family::twopass;
    DType dtype = DType::f32;
    Layout layout = Layout::planar;   // k2s2: planar or cube; fast: any
    uint32_t window = 0, stride = 0;  // fast: both; walk2d: the stride; twopass: window = the choose's windows
                                      // per thread along the rows where more than one (the _rows variants)
    bool long_runs = false;           // twopass: the gather's TWOPASS_LONG_RUN elements a thread (the _long variants)
    bool scatter = false;             // twopass: a thread per window stores its choice's sum instead (_scatter)
    bool shared_words = false;        // cellwords: split words stored whole through groupshared memory (_shared)
    bool operator==(const Variant&) const = default;
};

// "maxpool_grad_fast_narrow_k3s2_f16", ...
std::string kernel_name(const Variant& variant);

// Every variant the families can choose, in the table's order.
std::vector<Variant> compiled_variants();

// The APIs that can run a family.
ApiSet family_apis(Family family);

}  // namespace dmlgrad::maxpool_gpu
