// ovpool kernel core: what every header shares.
//
// The core is header-only C++17 with no Python, numpy or OpenMP in it: a
// front door (the Cython driver for Python, OpenVINO's parallel_for in the
// extension, a caller's own loop) builds a Plan once per shape and runs its
// work units, each into per-thread scratch the plan sizes. See ovpool.hpp for
// the table of contents.
//
// Vector code is selected at compile time: SSE2 on every x86-64 build, AVX2
// and F16C in the x86-64-v3 build, a scalar loop elsewhere. Every path is
// written so that all builds give the same bits (the same operations in the
// same order, no contraction into fused multiply-adds).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__)
#define OVPOOL_INLINE inline __attribute__((always_inline))
#define OVPOOL_NOINLINE __attribute__((noinline))
#define OVPOOL_INLINE_LAMBDA __attribute__((always_inline))
#else
#define OVPOOL_INLINE inline
#define OVPOOL_NOINLINE
#define OVPOOL_INLINE_LAMBDA
#endif

// Each instruction-set build of the core lives in an inline namespace of its
// own (ovpool::baseline, ovpool::x86_64_v3), so that one program may link
// both builds side by side and choose at run time without two definitions of
// one inline function; code names everything ovpool::... alike.
#if !defined(OVPOOL_ISA)
#if defined(__AVX2__)
#define OVPOOL_ISA x86_64_v3
#else
#define OVPOOL_ISA baseline
#endif
#endif
#define OVPOOL_BEGIN   \
    namespace ovpool { \
    inline namespace OVPOOL_ISA {
#define OVPOOL_END \
    }              \
    }

OVPOOL_BEGIN

// 1 where float16 is converted in vector registers (F16C: the x86-64-v3
// build); 0 where callers widen float16 rows into float32 scratch first.
#if defined(__F16C__)
constexpr bool kF16cRows = true;
#else
constexpr bool kF16cRows = false;
#endif

#if defined(__AVX2__)
constexpr bool kAvx2 = true;
#else
constexpr bool kAvx2 = false;
#endif

// Start of vector block b of width L over n >= L outputs: whole blocks, then
// the last one moved back to end at n (it overlaps the one before it).
inline ptrdiff_t block_start(ptrdiff_t b, ptrdiff_t L, ptrdiff_t n) {
    return b * L < n - L ? b * L : n - L;
}

// Read prefetches of one cache line: into L1, or into L2 only. gcc deleted a
// loop of nothing but prefetches as dead code; the empty asm taking the
// address keeps it.
OVPOOL_INLINE void prefetch_l1(const void *address) {
#if defined(__GNUC__)
    __builtin_prefetch(address, 0, 3);
#else
    (void)address;
#endif
}

OVPOOL_INLINE void prefetch_l2(const void *address) {
#if defined(__GNUC__)
    __builtin_prefetch(address, 0, 2);
    __asm__ __volatile__("" : : "r"(address));
#else
    (void)address;
#endif
}

// For writing: the line in the cache, owned, before the first store to it.
OVPOOL_INLINE void prefetch_write(const void *address) {
#if defined(__GNUC__)
    __builtin_prefetch(address, 1, 3);
#else
    (void)address;
#endif
}

// Prefetch into L1 the bytes [p, p + n) (n = 0: none): input read in address
// order, some way ahead. Prefetches never fault, past the end of an array too.
OVPOOL_INLINE void prefetch_span(const char *p, ptrdiff_t n) {
    for (ptrdiff_t b = 0; b < n; b += 64)
        prefetch_l1(p + b);
}

OVPOOL_END
