// SF_WIDEST_VECTORS: marks a function whose loops should run on the widest
// vectors the CPU has.
#ifndef SCOPEFLOW_PLATFORM_VECTOR_CLONES_H_
#define SCOPEFLOW_PLATFORM_VECTOR_CLONES_H_

// The build targets the x86-64 baseline, whose vectors (SSE2) hold 4
// floats, so that its binaries run on any x86-64 CPU. GCC compiles a
// function marked SF_WIDEST_VECTORS three times, for AVX-512 (16 floats),
// AVX2 (8) and the baseline, and the program picks one version when it
// loads (function multiversioning, through an ifunc). Only the marked
// function's own body is cloned: what it calls runs as the baseline
// compiled it, so mark the function holding the loop. Elsewhere (other
// compilers and CPUs) it is an ordinary function; so it is under
// ThreadSanitizer, whose runtime is not yet set up when the loader calls
// the resolver that picks the version, and crashes there.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_THREAD__)
#define SF_WIDEST_VECTORS \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SF_WIDEST_VECTORS
#endif

#endif  // SCOPEFLOW_PLATFORM_VECTOR_CLONES_H_
