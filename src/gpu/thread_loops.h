#pragma once
// A guard for devices that cut long loops short. llvmpipe (Mesa's software rasterizer: lavapipe, and vkd3d over
// it) gives each shader invocation a budget of 65535 loop iterations, shared by all its loops, and then leaves the
// loops silently: a kernel thread that sums more dY values than that writes a partial sum. A real GPU has no such
// budget. Where a plan could need more, the GPU refuses it (run it with --cpu) rather than write a wrong result.
#include <cstdint>
#include <string_view>

#include "gpu/dispatch.h"

namespace dmlgrad {

// The loop iterations a thread may run on the device of this name: 65535 on llvmpipe, 0 (no limit) elsewhere.
uint32_t thread_loop_limit(std::string_view device_name);

// The most input values one output element's thread reads in its loops: for resample grad the dY taps of a dX
// element (the product of each axis's most taps), for max-pool grad the taps of a window or the windows over an
// element, whichever is more; 1 for the element-wise and slice operators.
uint64_t most_values_an_element_reads(const Plan& plan);

// Throws RuntimeFailure (run it with --cpu) where limits.thread_loop_limit is set and the plan's
// most_values_an_element_reads, at the kernels' most loop iterations a value (resample 32, max-pool 8, twice what
// was measured), could exceed it.
void check_thread_loops(const Plan& plan, const DeviceLimits& limits);

}  // namespace dmlgrad
