#pragma once
// Text from the user (paths, header bytes) quoted in a message: control characters and DEL escaped as \xNN, so an
// error message is always one line.
#include <filesystem>
#include <string>
#include <string_view>

namespace dmlgrad {

std::string escape_controls(std::string_view text);
inline std::string printable_path(const std::filesystem::path& path) { return escape_controls(path.native()); }

}  // namespace dmlgrad
