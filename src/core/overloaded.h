#pragma once
// std::visit over a set of lambdas, one per alternative.

namespace dmlgrad {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;  // clang before 17 deduces no aggregate template arguments (the fuzz build)

}  // namespace dmlgrad
