#include "core/printable.h"

#include <fmt/format.h>

namespace dmlgrad {

std::string escape_controls(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7F)
            out += fmt::format("\\x{:02x}", u);
        else
            out += c;
    }
    return out;
}

}  // namespace dmlgrad
