// Process-wide settings of the C library's allocator for running nets.
#ifndef SCOPEFLOW_PLATFORM_HOST_MEMORY_H_
#define SCOPEFLOW_PLATFORM_HOST_MEMORY_H_

namespace scopeflow {

// Asks glibc's malloc to serve blocks up to 32 MiB (its largest setting)
// from its heap and not to return freed heap memory to the system, so that
// the buffers a net frees are reused by its next run instead of being
// mapped afresh. Freshly mapped memory costs a page fault per 4 KiB on
// first touch: on a CNN at batch 16 (8 MiB activations) that made runs
// about 5x slower (docs/PERFORMANCE.md). The setting is process-wide, so
// the library leaves it to the program: the scopeflow command and the
// benchmarks call this at start; an embedding program may too. Returns
// false if glibc refused a setting.
bool KeepFreedHostMemoryForReuse();

}  // namespace scopeflow

#endif  // SCOPEFLOW_PLATFORM_HOST_MEMORY_H_
