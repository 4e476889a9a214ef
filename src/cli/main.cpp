// dmlgrad's command line: CLI11 is bound straight to the option structs (cli/command_line.cpp defines the
// operator subcommands); each one becomes an OperatorCommand run by runner.cpp. Exit codes: 0 ok, 1 run-time
// failure, 2 usage error, 3 --check difference.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "cli/batch.h"
#include "cli/command_line.h"
#include "cli/devices.h"
#include "cli/error_line.h"
#include "cli/report.h"
#include "cli/runner.h"
#include "cli/version.h"
#include "core/error.h"
#include "io/standard_streams.h"

namespace {

using namespace dmlgrad;
using namespace dmlgrad::cli;

CLI::App* add_batch(CLI::App& app, BatchOptions& o) {
    auto* sub = app.add_subcommand("batch", "Run every job of a manifest (one operator command a line)");
    sub->add_option("manifest", o.manifest, "Manifest file, or - for standard input")->required();
    sub->add_flag("--cpu", o.cpu, "Run every job on the CPU reference");
    sub->add_option("--device", o.devices, "GPU indices, one worker each (0,1,3; repeats allowed), or all");
    add_api_option(*sub, o.api);
    sub->add_flag("--json", o.json, "One JSON object per job as it finishes, then a summary object");
    sub->add_option("--shard", o.shard, "I/N: run only the jobs whose 0-based index is I mod N");
    sub->add_flag("--skip-existing", o.skip_existing, "Skip jobs whose output exists (resumes a batch)");
    sub->add_flag("--fail-fast", o.fail_fast, "Stop taking jobs at the first failure");
    sub->add_option("--max-in-flight", o.max_in_flight, "Jobs read ahead, and results waiting to be saved (4)");
    sub->add_flag("-q,--quiet", o.quiet, "Print nothing but errors");
    sub->add_flag("-v,--verbose", o.verbose, "Log each job on stderr");
    return sub;
}

// Where an error goes besides its line on stderr: with --json, also one JSON object, on stdout (on stderr when
// the result was to go to stdout), so a script reading JSON learns of the failure too.
struct ErrorReport {
    bool json = false;
    std::FILE* stream = stdout;

    int fail(std::string_view message, int exit_code) const {
        print_error_line(message);
        if (json) {
            const std::string object = fmt::format(R"({{"version":{},"error":{},"exit_code":{}}})",
                                                   json_string(DMLGRAD_VERSION), json_string(message), exit_code);
            std::fputs((object + "\n").c_str(), stream);  // fputs, not fmt::print: it must not throw here
            std::fflush(stream);
        }
        return exit_code;
    }
};

bool has_flag(const std::vector<std::string>& args, std::string_view flag) {
    return std::find(args.begin(), args.end(), flag) != args.end();
}

// Whether the words send the result to standard output (`-o -`, `--output=-`), read before parsing: an error in
// the flags must not put its JSON object into the data.
bool result_to_standard_output(const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
        const bool flag = args[i] == "-o" || args[i] == "--output";
        if ((flag && i + 1 < args.size() && args[i + 1] == "-") || args[i] == "--output=-" || args[i] == "-o-")
            return true;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    hold_closed_standard_input();  // before any thread opens a file
    CLI::App app{"dmlgrad: DirectML gradient operators on .npy files, on the GPU (Vulkan) or the CPU", "dmlgrad"};
    app.set_version_flag("--version", std::function<std::string()>(version_text));
    app.require_subcommand(1);
    app.fallthrough(false);

    OperatorSubcommands operators(app);
    BatchOptions batch;
    auto* batch_cmd = add_batch(app, batch);
    bool devices_json = false;
    auto* devices_cmd = app.add_subcommand("devices", "List the GPU devices and their --device index");
    devices_cmd->add_flag("--json", devices_json, "Print the list as JSON");

    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {  // a bare `dmlgrad`: what it can do, rather than an error about what is missing
        fmt::print(stderr, "{}", app.help());
        return 2;
    }
    ErrorReport errors{has_flag(args, "--json"), result_to_standard_output(args) ? stderr : stdout};
    if (args[0].front() != '-' && !is_operator_name(args[0]) && args[0] != "batch" && args[0] != "devices")
        return errors.fail(unknown_subcommand_message(args[0]), 2);
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return errors.fail(parse_error_message(app, e, args), 2);
    }

    try {
        require_values(app);
        if (devices_cmd->parsed()) {
            configure_logging(Verbosity::normal);
            return list_devices(devices_json);
        }
        if (batch_cmd->parsed()) {
            configure_logging(batch.verbose ? Verbosity::verbose : Verbosity::normal);
            return run_batch(batch);
        }
        OperatorRequest request = *operators.parsed();
        request.common.command_words = args;
        configure_logging(request.common.verbosity);
        return run_operator(std::move(request.command), request.common);
    } catch (const UsageError& e) {
        return errors.fail(e.what(), 2);
    } catch (const RuntimeFailure& e) {
        return errors.fail(e.what(), 1);
    } catch (const std::bad_alloc&) {
        return errors.fail("out of host memory", 1);
    } catch (const std::exception& e) {
        return errors.fail(e.what(), 1);
    }
}
