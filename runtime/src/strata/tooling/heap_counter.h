// Counts the program's heap allocations: a program that links
// strata_heap_counter has its global operator new replaced by one that
// counts every call (an atomic increment) before it allocates with malloc.
// For benchmarks and tests that measure allocations per call; a program
// links it or not, so the count costs nothing elsewhere.
#ifndef STRATA_TOOLING_HEAP_COUNTER_H_
#define STRATA_TOOLING_HEAP_COUNTER_H_

#include <cstdint>

namespace strata::tooling {

// operator new calls (all forms) since the program started.
uint64_t HeapAllocationCount();

} // namespace strata::tooling

#endif // STRATA_TOOLING_HEAP_COUNTER_H_
