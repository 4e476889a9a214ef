#pragma once
// std::visit over a set of lambdas, one per alternative.

namespace dmlgrad {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
// Clang 14 does not deduce an aggregate's template arguments by itself.
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace dmlgrad
