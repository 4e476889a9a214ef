#include "cli/cli_harness.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "io/npy.h"

namespace dmlgrad::testing {
namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

CliHarness::CliHarness() {
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("dmlgrad-cli-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir_);
}

CliHarness::~CliHarness() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
}

CommandResult CliHarness::run(const std::vector<std::string>& args, const std::string& env) const {
    return run_binary(DMLGRAD_BINARY, args, env);
}

CommandResult CliHarness::run_with_hooks(const std::vector<std::string>& args, const std::string& env) const {
    return run_binary(DMLGRAD_HOOKED_BINARY, args, env);
}

CommandResult CliHarness::run_binary(const char* binary, const std::vector<std::string>& args,
                                     const std::string& env) const {
    const fs::path out = dir_.parent_path() / (dir_.filename().string() + ".stdout");
    const fs::path err = dir_.parent_path() / (dir_.filename().string() + ".stderr");
    // Built with fmt: GCC 12 warns falsely (-Wrestrict) on the equivalent chain of std::string operator+.
    std::string command = fmt::format("cd {} && {} {}", shell_quote(dir_.string()), env, shell_quote(binary));
    for (const auto& a : args) command += fmt::format(" {}", shell_quote(a));
    command += fmt::format(" >{} 2>{}", shell_quote(out.string()), shell_quote(err.string()));
    int status = std::system(command.c_str());
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    fs::remove(out);
    fs::remove(err);
    return r;
}

void CliHarness::write(const std::string& name, const Tensor& t) const { save_npy(dir_ / name, t); }

void CliHarness::write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
}

Tensor CliHarness::read(const std::string& name) const { return load_npy(dir_ / name); }

std::string CliHarness::read_bytes(const std::string& name) const { return slurp(dir_ / name); }

std::vector<std::string> CliHarness::listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace dmlgrad::testing
