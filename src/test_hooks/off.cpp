// The test hooks of the binary users run: all off, nothing read from the environment (see test_hooks.h).
#include "test_hooks/test_hooks.h"

namespace dmlgrad::test_hooks {

bool corrupt_check() { return false; }
int corrupt_repeat() { return 0; }
uint64_t gpu_allocation_cap() { return 0; }
uint64_t first_read_delay_ms() { return 0; }

}  // namespace dmlgrad::test_hooks
