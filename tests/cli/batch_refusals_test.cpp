// What a batch refuses before any job runs (exit 2, one line naming the manifest line, the byte or the flag):
// colliding outputs, an output onto the manifest, NUL bytes, empty values, devices the machine lacks, a manifest that
// is a folder or closed. And what it no longer refuses: a byte-order mark, a job's own --device naming the default
// worker's device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "cli/batch_testing.h"
#include "support/tensor_testing.h"

namespace dmlgrad::testing {
namespace {

class BatchRefusals : public ::testing::Test {
protected:
    CliHarness h;
    SeededRng rng;

    void SetUp() override {
        h.write("x.npy", random_tensor(DType::f32, {64}, rng));
        h.write("dy.npy", random_tensor(DType::f32, {64}, rng));
        h.write_bytes("victim", "not touched");
    }

    // Runs `args`, expecting exit 2, one error line holding each of `needles`, and no job run (a.npy not made).
    void expect_refused(const Args& args, const std::vector<std::string>& needles, const std::string& shell = "") {
        const CommandResult r = shell.empty() ? h.run(args) : shell_run(shell);
        const std::string how = shell.empty() ? fmt::format("{}", fmt::join(args, " ")) : shell;
        EXPECT_EQ(r.exit_code, 2) << how << ": " << r.err;
        for (const std::string& needle : needles)
            EXPECT_NE(r.err.find(needle), std::string::npos) << how << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << how << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(h.dir() / "a.npy")) << how;
        EXPECT_EQ(h.read_bytes("victim"), "not touched") << how;
    }

    CommandResult shell_run(const std::string& command) const {
        const int status = std::system(fmt::format("cd '{}' && {} 2>err.txt", h.dir().string(), command).c_str());
        return {WEXITSTATUS(status), "", h.read_bytes("err.txt")};
    }
};

Args joined(Args a, const Args& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

const std::string kFirst = "relu-grad -x x.npy -g dy.npy -o a.npy";

TEST_F(BatchRefusals, TwoLinesWritingOneFileAreRefusedNamingBoth) {
    std::filesystem::create_directory(h.dir() / "sub");
    h.write("b.npy", random_tensor(DType::f32, {64}, rng));
    std::filesystem::create_symlink("b.npy", h.dir() / "link.npy");
    for (const auto& [first, second] : std::vector<std::pair<std::string, std::string>>{
             {"c.npy", "c.npy"}, {"c.npy", "./sub/../c.npy"}, {"b.npy", "link.npy"}}) {
        write_manifest(h, "m.txt",
                       {kFirst, "relu-grad -x x.npy -g dy.npy -o " + first, "# between",
                        "clip-grad -x x.npy -g dy.npy --min -1 --max 1 -o " + second});
        for (const char* workers : {"0", "0,0"})
            expect_refused({"batch", "m.txt", "--device", workers}, {"m.txt line 6: ", second, "line 4 writes"});
        expect_refused({"batch", "m.txt", "--cpu", "--shard", "1/2"}, {"m.txt line 6: ", "line 4 writes"});
    }
}

TEST_F(BatchRefusals, AJobWritingTheManifestIsRefused) {
    std::filesystem::create_symlink("m.txt", h.dir() / "alias.txt");
    for (const std::string output : {"m.txt", "./alias.txt"}) {
        const std::vector<std::string> lines{kFirst, "relu-grad -x x.npy -g dy.npy -o " + output};
        write_manifest(h, "m.txt", lines);
        const std::string before = h.read_bytes("m.txt");
        expect_refused({"batch", "m.txt", "--cpu"}, {"m.txt line 4: ", output, "the manifest itself"});
        EXPECT_EQ(h.read_bytes("m.txt"), before);
    }
}

TEST_F(BatchRefusals, ANulByteAnywhereInALineIsRefusedNamingItsColumn) {
    for (const std::string& line :
         {std::string("relu-grad -x x.npy -g dy.npy -o victim\0.npy", 44),
          std::string("relu-grad -x x.npy\0zzz -g dy.npy -o b.npy", 41), std::string("# a comment \0 too", 17)}) {
        h.write_bytes("m.txt", kFirst + "\n" + line + "\n");
        const size_t column = line.find('\0') + 1;
        expect_refused({"batch", "m.txt"}, {fmt::format("m.txt line 2: a NUL byte at column {}", column)});
    }
}

TEST_F(BatchRefusals, AByteOrderMarkIsSkipped) {
    h.write_bytes("m.txt", "\xEF\xBB\xBF" + kFirst + "\n");
    for (const Args& flags : std::vector<Args>{{"--cpu"}, {}}) {
        Args args = {"batch", "m.txt"};
        args.insert(args.end(), flags.begin(), flags.end());
        const CommandResult r = h.run(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        const auto x = to_doubles(h.read("x.npy")), dy = to_doubles(h.read("dy.npy")), a = to_doubles(h.read("a.npy"));
        for (size_t i = 0; i < x.size(); ++i) {
            if (std::isnan(dy[i])) continue;
            EXPECT_EQ(a[i], x[i] > 0 ? dy[i] : 0) << i;
        }
        std::filesystem::remove(h.dir() / "a.npy");
    }
}

TEST_F(BatchRefusals, AnEmptyValueIsRefusedNotTakenAsMissing) {
    write_manifest(h, "m.txt", {kFirst});
    expect_refused({"batch", "m.txt", "--shard", ""}, {"--shard: an empty value"});
    expect_refused({"batch", "m.txt", "--device", ""}, {"--device: an empty value"});
    expect_refused({"batch", ""}, {"manifest: an empty value"});
    write_manifest(h, "m.txt", {kFirst + " --rtol ''"});
    expect_refused({"batch", "m.txt", "--json"}, {"m.txt line 3: --rtol: an empty value"});
    const std::string resample = "resample-grad -g dy.npy -o a.npy --output-sizes 32";
    for (const std::string flag : {"--torch-mode", "--scale-factor", "--nearest-mode", "--scales"})
        expect_refused(joined(words(resample + " " + flag), {""}), {flag + ": an empty value"});
    expect_refused(joined(words(kFirst + " --rtol"), {"", "--check"}), {"--rtol: an empty value"});
    expect_refused(joined(words(kFirst + " --compare"), {""}), {"--compare: an empty value"});
}

TEST_F(BatchRefusals, DevicesTheMachineLacksAreRefusedNamingHowManyThereAre) {
    write_manifest(h, "m.txt", {kFirst});
    expect_refused({"batch", "m.txt", "--device", "0,1"}, {"--device 1: no such device", "1 device (index 0 to 0)"});
    expect_refused({"batch", "m.txt", "--device", "7"}, {"--device 7: no such device"});
}

TEST_F(BatchRefusals, AManifestThatIsAFolderOrClosedIsRefused) {
    std::filesystem::create_directory(h.dir() / "folder");
    expect_refused({"batch", "folder"}, {"folder: is a folder"});
#ifndef __SANITIZE_ADDRESS__
    // Not under AddressSanitizer: its run-time opens a file before main(), and with standard input closed that file
    // gets descriptor 0, so the binary reads it as its standard input. The release build runs this check.
    expect_refused({}, {"standard input is closed"}, fmt::format("'{}' batch - <&-", DMLGRAD_BINARY));
#endif
    expect_refused({"batch", "none.txt"}, {"none.txt: cannot open the manifest"});
}

// A job pinned to device 0 runs on the default worker, which is on device 0 (lavapipe is the only device).
TEST_F(BatchRefusals, AJobsOwnDeviceMatchesTheDefaultWorker) {
    write_manifest(h, "m.txt", {kFirst + " --device 0"});
    const CommandResult r = h.run({"batch", "m.txt"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(h.dir() / "a.npy"));
}

}  // namespace
}  // namespace dmlgrad::testing
