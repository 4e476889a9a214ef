#pragma once
// A tensor argument as the user named it, so validation messages can say which flag and file broke a rule.
#include <string>

#include "core/tensor.h"

namespace dmlgrad {

struct Operand {
    std::string flag;  // "--input", "--input-gradient", "--output"
    std::string path;  // the file given with the flag
    TensorInfo info;

    // "--input-gradient dy.npy"
    std::string label() const { return flag + " " + path; }
};

}  // namespace dmlgrad
