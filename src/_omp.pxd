# OpenMP shim (after scikit-learn's sklearn/utils/_openmp_helpers.pxd).
#
# Kernels cimport the OpenMP runtime functions from here, never from the
# `openmp` module directly, so that a build without OpenMP (the compiler probe
# in setup.py failed) still compiles: `prange` then runs serially and these
# stubs report a team of one thread.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define OVPOOL_OPENMP 1
    #else
    #define OVPOOL_OPENMP 0
    static inline int omp_get_thread_num(void) { return 0; }
    static inline int omp_get_num_threads(void) { return 1; }
    #endif
    """
    bint OVPOOL_OPENMP
    int omp_get_thread_num() noexcept nogil
    int omp_get_num_threads() noexcept nogil
