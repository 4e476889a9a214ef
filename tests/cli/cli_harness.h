#pragma once
// Runs the built dmlgrad binary in a scratch folder and captures its exit code, stdout and stderr.
#include <filesystem>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace dmlgrad::testing {

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

class CliHarness {
public:
    CliHarness();   // a fresh, empty scratch folder
    ~CliHarness();  // removes it

    const std::filesystem::path& dir() const { return dir_; }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    // `args` are passed to dmlgrad, each quoted for the shell; `env` is prefixed as VAR=value pairs.
    CommandResult run(const std::vector<std::string>& args, const std::string& env = "") const;
    // The same with dmlgrad_test_hooks, the binary that reads the test hooks from `env` (test_hooks.h).
    CommandResult run_with_hooks(const std::vector<std::string>& args, const std::string& env) const;

    void write(const std::string& name, const Tensor& t) const;
    void write_bytes(const std::string& name, const std::string& bytes) const;
    Tensor read(const std::string& name) const;
    std::string read_bytes(const std::string& name) const;
    // Names of every entry in the scratch folder, sorted.
    std::vector<std::string> listing() const;

private:
    std::filesystem::path dir_;
    CommandResult run_binary(const char* binary, const std::vector<std::string>& args, const std::string& env) const;
};

}  // namespace dmlgrad::testing
