#pragma once
// The CPU reference's hot loop nests are compiled twice, for AVX2 and for the x86-64 baseline (SSE2), and the
// loader picks one by the CPU it runs on (target_clones), so the binary stays portable. AVX2 doubles the vector
// width. It brings no fused multiply-add (and the build has -ffp-contract=off), so every float operation rounds
// as in the baseline version and both give the same bits. `flatten` inlines the whole nest into each version, so
// the templates it calls are compiled for that target too.
#if defined(__x86_64__)
#define DMLGRAD_VECTOR_CLONES __attribute__((target_clones("avx2", "default"), flatten))
#else
#define DMLGRAD_VECTOR_CLONES
#endif
