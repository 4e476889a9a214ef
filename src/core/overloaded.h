#pragma once
// std::visit over a set of lambdas, one per alternative.

namespace dmlgrad {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};

}  // namespace dmlgrad
