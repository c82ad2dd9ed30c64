// The baseline x86-64 build of the kernel core (see plan_isa.inc).
#define OVPOOL_ISA baseline
#define OVPOOL_PLAN_ENTRY make_plan_baseline
#include "plan_isa.inc"
