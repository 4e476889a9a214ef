#pragma once
// The CPU reference as a Backend: the --cpu path and the other side of --check.
#include <memory>

#include "ops/backend.h"

namespace dmlgrad {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace dmlgrad
