// Everything a HAL user (the `hal` module, the session, tools) needs.
#ifndef STRATA_HAL_API_H_
#define STRATA_HAL_API_H_

#include "strata/hal/allocator.h"
#include "strata/hal/buffer.h"
#include "strata/hal/buffer_view.h"
#include "strata/hal/command_buffer.h"
#include "strata/hal/deadline.h"
#include "strata/hal/device.h"
#include "strata/hal/driver.h"
#include "strata/hal/driver_registry.h"
#include "strata/hal/element_type_util.h"
#include "strata/hal/executable.h"
#include "strata/hal/ref_types.h"
#include "strata/hal/semaphore.h"

#endif // STRATA_HAL_API_H_
