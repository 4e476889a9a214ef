// libFuzzer target: any bytes as a .npy file, header and payload. It must load (then the tensor's size matches
// its header) or throw UsageError / RuntimeFailure; anything else (a crash, a sanitizer report) is a finding.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "io/npy.h"

namespace {

// One in-memory file, rewritten per input: /proc/self/fd/N opens it as a regular file.
int memory_file() {
    static int fd = ::memfd_create("fuzz.npy", 0);
    return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const int fd = memory_file();
    if (fd < 0 || ::ftruncate(fd, 0) != 0) std::abort();
    if (size > 0 && ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) std::abort();
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    for (auto access : {dmlgrad::PayloadAccess::copy, dmlgrad::PayloadAccess::map_read_only}) {
        try {
            dmlgrad::NpyHeader header = dmlgrad::read_npy_header(path);
            dmlgrad::Tensor t = dmlgrad::load_npy(path, access);
            if (t.bytes() != header.info.bytes() || header.payload_offset + t.bytes() > size) std::abort();
        } catch (const dmlgrad::UsageError&) {
        } catch (const dmlgrad::RuntimeFailure&) {
        }
    }
    return 0;
}
