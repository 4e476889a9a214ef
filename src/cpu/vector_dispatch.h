#pragma once
// The CPU reference's hot loop nests are compiled twice, for AVX2 and for the x86-64 baseline (SSE2), and the
// CPU it runs on picks one, so the binary stays portable. AVX2 doubles the vector width. It brings no fused
// multiply-add (and the build has -ffp-contract=off), so every float operation rounds as in the baseline version
// and both give the same bits. `flatten` inlines the whole nest into each version, so the templates it calls are
// compiled for that target too. (GCC's target_clones would pick at load time, but Clang refuses it with flatten.)

#include <atomic>

namespace dmlgrad::cpu {

// Whether with_widest_vectors may pick a version wider than the baseline: always, except in the tests that
// compare the two versions bit for bit.
inline std::atomic<bool>& wide_vectors_allowed() {
    static std::atomic<bool> allowed{true};
    return allowed;
}

#if defined(__x86_64__)
template <class Body>
__attribute__((target("avx2"), flatten)) void run_avx2(const Body& body) {
    body();
}

template <class Body>
__attribute__((flatten)) void run_baseline(const Body& body) {
    body();
}

// body() in the AVX2 version where the CPU has AVX2, else in the baseline one.
template <class Body>
void with_widest_vectors(const Body& body) {
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2 && wide_vectors_allowed().load(std::memory_order_relaxed))
        run_avx2(body);
    else
        run_baseline(body);
}
#else
template <class Body>
void with_widest_vectors(const Body& body) {
    body();
}
#endif

}  // namespace dmlgrad::cpu
