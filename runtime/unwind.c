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

void ppw_unwind_init(void)
{
    /* Thread-local caches: with the default global cache, libunwind takes a
     * process-wide lock inside every walk, and a walk in the sample handler
     * of a thread interrupted in dlclose (which holds the dynamic linker's
     * lock that another handler's dl_iterate_phdr waits for, while holding
     * that libunwind lock) deadlocks.  Seen in Open MPI's MPI_Finalize. */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

void ppw_unwind_warm_up(void)
{
    uint64_t frames[64];
    ppw_unwind_walk(frames, 64);
    ppw_unwind_walk(frames, 64);
}
