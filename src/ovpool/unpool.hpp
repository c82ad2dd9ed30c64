// MaxUnpool: scatter x into a zero-filled output at flat indices.
#pragma once

#include <cstdint>

#include "common.hpp"

OVPOOL_BEGIN

// out[indices[i]] = x[i] for i < n, in order: later duplicates win, as in
// ONNX Runtime's sequential loop (hence serial: threads would race on
// duplicates). Returns -1, or the position of the first index outside
// [0, size); nothing is written from there on.
template <class T>
inline int64_t max_unpool(const T *x, const int64_t *indices, int64_t n, T *out, int64_t size) {
    for (int64_t i = 0; i < n; i++) {
        const int64_t target = indices[i];
        if (target < 0 || target >= size)
            return i;
        out[target] = x[i];
    }
    return -1;
}

OVPOOL_END
