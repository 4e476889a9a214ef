// What a person sees when the command line is incomplete or misspelt, and what --help teaches.
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_harness.h"

namespace dmlgrad::testing {
namespace {

int lines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

TEST(Usage, BareCommandPrintsTheUsageOnStderr) {
    CliHarness h;
    auto r = h.run({});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, "");
    for (const char* part : {"Usage: dmlgrad", "Subcommands:", "relu-grad", "resample-grad", "batch", "devices"})
        EXPECT_NE(r.err.find(part), std::string::npos) << part << " not in " << r.err;
}

TEST(Usage, MisspeltSubcommandSuggestsTheClosest) {
    CliHarness h;
    for (const auto& [typed, meant] : std::vector<std::pair<std::string, std::string>>{
             {"relu-gard", "relu-grad"}, {"maxpool", "maxpool-grad"}, {"batchh", "batch"}, {"device", "devices"}}) {
        auto r = h.run({typed, "-x", "x.npy"});
        EXPECT_EQ(r.exit_code, 2) << typed;
        EXPECT_EQ(lines(r.err), 1) << r.err;
        EXPECT_NE(r.err.find("'" + typed + "' is not a subcommand; did you mean " + meant + "?"), std::string::npos)
            << r.err;
    }
    auto far = h.run({"frobnicate"});
    EXPECT_EQ(far.exit_code, 2);
    EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(Usage, ManifestLineWithAMisspeltOperatorSuggestsToo) {
    CliHarness h;
    h.write_bytes("m.txt", "clip-gard -x x.npy -g dy.npy -o dx.npy --min 0 --max 1\n");
    auto r = h.run({"batch", "m.txt"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("m.txt line 1: 'clip-gard' is not an operator subcommand; did you mean clip-grad?"),
              std::string::npos)
        << r.err;
}

TEST(Usage, HelpShowsListTypesAndEndsWithExamples) {
    CliHarness h;
    auto slice = h.run({"slice-grad", "--help"});
    EXPECT_EQ(slice.exit_code, 0);
    EXPECT_NE(slice.out.find("--input-window-strides INT,..."), std::string::npos) << slice.out;
    EXPECT_NE(slice.out.rfind("\n  dmlgrad slice-grad -g dy.npy -o dx.npy --output-sizes"), std::string::npos);
    auto resample = h.run({"resample-grad", "--help"});
    EXPECT_NE(resample.out.find("--scales FLOAT,..."), std::string::npos) << resample.out;
    EXPECT_NE(resample.out.find("--output-sizes INT,..."), std::string::npos) << resample.out;
    for (const char* sub : {"relu-grad", "clip-grad", "maxpool-grad", "resample-grad"}) {
        auto r = h.run({sub, "--help"});
        EXPECT_NE(r.out.find(std::string("\n  dmlgrad ") + sub + " "), std::string::npos) << sub << ": " << r.out;
    }
}

}  // namespace
}  // namespace dmlgrad::testing
