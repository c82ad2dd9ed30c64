// The x86-64-v3 build of the kernel core (AVX2, FMA, F16C), compiled with
// -march=x86-64-v3 and used where the CPU has those features (see
// plan_isa.inc and kernel.cpp).
#define OVPOOL_ISA x86_64_v3
#define OVPOOL_PLAN_ENTRY make_plan_x86_64_v3
#include "plan_isa.inc"
