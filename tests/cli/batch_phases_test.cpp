// The batch summary's timers (--json "workers" and "phases", -v): each worker's phases within its busy time, and
// the readers' and the saving's time.
#include <gtest/gtest.h>

#include "cli/batch_testing.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

double number(const std::string& json, const std::string& key) {
    const size_t at = json.rfind("\"" + key + "\":");
    EXPECT_NE(at, std::string::npos) << key;
    return at == std::string::npos ? -1.0 : std::stod(json.substr(at + key.size() + 3));
}

TEST(BatchPhases, WorkerPhasesFitItsBusyTime) {
    CliHarness h;
    SeededRng rng;
    // 20 MiB of float32: beyond the overlapped jobs' 16 MiB, whose kernels (timed by the GPU) run beside the
    // worker's other work, so that the phases add up within the busy time; a kernel of measurable length.
    const Shape shape{int64_t(5) << 20};
    h.write("x.npy", random_tensor(DType::f32, shape, rng));
    h.write("dy.npy", random_tensor(DType::f32, shape, rng));
    write_manifest(h, "jobs.txt", {"relu-grad -x x.npy -g dy.npy -o a.npy", "relu-grad -x dy.npy -g x.npy -o b.npy"});
    const CommandResult r = h.run({"batch", "jobs.txt", "--json", "-v"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const double busy = number(r.out, "busy_s"), upload = number(r.out, "upload_s"), kernel = number(r.out, "kernel_s");
    EXPECT_GT(upload, 0);
    EXPECT_GT(kernel, 0);
    EXPECT_LE(upload + kernel + number(r.out, "download_s"), busy + 0.003);  // rounded to ms each
    EXPECT_GE(number(r.out, "waiting_s"), 0);
    EXPECT_EQ(number(r.out, "readers"), 3);
    EXPECT_GE(number(r.out, "read_s"), 0);
    EXPECT_GE(number(r.out, "output_s"), 0);
    EXPECT_GE(number(r.out, "save_s"), 0);
    EXPECT_NE(r.err.find("busy"), std::string::npos) << r.err;  // the -v line
}

}  // namespace
}  // namespace dmlgrad::testing
