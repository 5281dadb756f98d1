/* unw_backtrace wrapper.  Local unwinding only; libunwind documents it as
 * async-signal-safe. */
#define UNW_LOCAL_ONLY
#include "unwind.h"

#include <libunwind.h>

int ppw_unwind_walk(uint64_t *frames, int max)
{
    _Static_assert(sizeof(void *) == sizeof(uint64_t), "64-bit addresses");
    int n = unw_backtrace((void **)frames, max);
    return n < 0 ? 0 : n;
}

void ppw_unwind_warm_up(void)
{
    uint64_t frames[64];
    ppw_unwind_walk(frames, 64);
    ppw_unwind_walk(frames, 64);
}
