#pragma once
// The operator subcommands' flags, defined once: a shell command line and a batch manifest line are both parsed
// by these definitions. CLI11 stays behind this header (it costs seconds of compile per translation unit).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/operator_command.h"
#include "cli/options.h"

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace dmlgrad::cli {

// --api vulkan|d3d12 on `sub`, bound to `api` (operator subcommands and batch).
void add_api_option(CLI::App& sub, std::string& api);

// One operator invocation as the user typed it: what to run and with which common flags.
struct OperatorRequest {
    OperatorCommand command;
    CommonOptions common;
};

// The five operator subcommands with their flags, added to `app` and bound to option structs owned here.
class OperatorSubcommands {
public:
    explicit OperatorSubcommands(CLI::App& app);
    ~OperatorSubcommands();
    OperatorSubcommands(const OperatorSubcommands&) = delete;
    OperatorSubcommands& operator=(const OperatorSubcommands&) = delete;

    // The request of the subcommand CLI11 parsed, or nothing if none was. Throws UsageError on bad list values.
    std::optional<OperatorRequest> parsed() const;

    struct Bindings;  // the option structs and subcommands, defined in the .cpp

private:
    std::unique_ptr<Bindings> bindings_;
};

bool is_operator_name(std::string_view word);

// "'relu-gard' is not a subcommand; did you mean relu-grad?" (the suggestion only when one is close).
std::string unknown_subcommand_message(std::string_view word, bool operators_only = false);

// Throws UsageError for an option given an empty value (`--shard ""`), which would otherwise read as not given:
// in `app` and its parsed subcommands.
void require_values(const CLI::App& app);

// Parses the words of one operator command without the program name ({"relu-grad", "-x", "a.npy", ...}).
// Throws UsageError with the message a shell command line would get.
OperatorRequest parse_operator_words(const std::vector<std::string>& words);

// A CLI11 parse error as one readable line; `args` are the words after the program name. CLI11 reports a
// missing required flag before an unknown one, so `relu-grad --inptu x.npy` would read "--input is required":
// naming the misspelt flag helps more.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error,
                                const std::vector<std::string>& args);

}  // namespace dmlgrad::cli
