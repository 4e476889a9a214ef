#pragma once
// `dmlgrad devices`: the GPU devices the tool can run on, with the index --device takes.

namespace dmlgrad::cli {

int list_devices(bool json);

}  // namespace dmlgrad::cli
