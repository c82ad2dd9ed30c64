// Every kernel template of ovpool's core, instantiated: unit_function refers
// to each unit function of every path and element type. Compiled (not run)
// by tests/test_kernel_core.py with -Wall -Wextra -Werror.
#include "ovpool/ovpool.hpp"

ovpool::UnitFn (*volatile resolve_units)(const ovpool::Plan &) = &ovpool::unit_function;
void (*volatile init_units)(const ovpool::Plan &, char *) = &ovpool::init_scratch;
bool (*volatile serial_run)(const ovpool::Plan &, const void *, void *,
                            void *) = &ovpool::run_serial;
int64_t (*volatile unpool_f32)(const float *, const int64_t *, int64_t, float *,
                               int64_t) = &ovpool::max_unpool<float>;
int (*volatile api_lp)(const double *, const ovpool::Shape &, const ovpool::Window &, double,
                       double *) = &ovpool::lp_pool<double>;
int (*volatile api_global)(const uint8_t *, const ovpool::Shape &,
                           uint8_t *) = &ovpool::global_max_pool<uint8_t>;
