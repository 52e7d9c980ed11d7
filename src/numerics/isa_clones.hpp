// NOVA_ISA_CLONES: compile a function once per ISA (AVX-512, AVX2, baseline x86-64) and pick the
// version by cpuid when the library loads (GCC's function multi-versioning), for the harness's
// bulk loops that the compiler vectorizes. Only for code whose results do not depend on the ISA
// (integer and IEEE operations, no contraction). Elsewhere the baseline build alone. Private to
// src/numerics.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(NOVA_NO_TARGET_CLONES)
#define NOVA_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NOVA_ISA_CLONES
#endif
