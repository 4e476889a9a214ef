#include "support/validation_testing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace dmlgrad::testing {

void expect_usage_error(const std::function<void()>& action, const std::vector<std::string>& parts) {
    try {
        action();
        ADD_FAILURE() << "no UsageError thrown";
    } catch (const UsageError& e) {
        const std::string message = e.what();
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
        for (const std::string& part : parts)
            EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
    }
}

}  // namespace dmlgrad::testing
