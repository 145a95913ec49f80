// Absolute deadlines for blocking HAL waits (strata/base/wait.h; the HAL
// names are kept for its users).
#ifndef STRATA_HAL_DEADLINE_H_
#define STRATA_HAL_DEADLINE_H_

#include "strata/base/wait.h"

namespace strata::hal {

using strata::Deadline;
using strata::NowNs;

} // namespace strata::hal

#endif // STRATA_HAL_DEADLINE_H_
