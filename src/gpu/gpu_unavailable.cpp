#include "core/error.h"
#include "gpu/gpu.h"

namespace dmlgrad {

std::vector<GpuDeviceInfo> list_gpu_devices() {
    throw RuntimeFailure("the GPU backend is not built yet; run with --cpu");
}

std::unique_ptr<Backend> make_gpu_backend(std::optional<int>) {
    throw RuntimeFailure("the GPU backend is not built yet; run with --cpu");
}

}  // namespace dmlgrad
