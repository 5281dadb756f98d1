/* unw_backtrace wrapper.  Local unwinding only; libunwind documents it as
 * async-signal-safe. */
#define UNW_LOCAL_ONLY
#include "unwind.h"

#include <libunwind.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The threads inside a walk, by tid (0: a free slot), for
 * ppw_unwind_in_walk.  Beyond WALK_SLOTS walks at once the others are not
 * recorded, and a thread that sees one of them hold the dynamic linker's
 * lock keeps its sample unwalked: safe, only less precise. */
enum { WALK_SLOTS = 128 };
static uint32_t walking_tids[WALK_SLOTS];
static PPW_TLS uint32_t own_tid;

PPW_SIGSAFE static uint32_t *claim_walk_slot(void)
{
    if (!own_tid)
        own_tid = (uint32_t)syscall(SYS_gettid);
    for (int i = 0; i < WALK_SLOTS; i++) {
        uint32_t free_slot = 0;
        if (__atomic_compare_exchange_n(&walking_tids[i], &free_slot, own_tid, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return &walking_tids[i];
    }
    return NULL;
}

uint32_t *ppw_unwind_enter(void)
{
    return claim_walk_slot();
}

void ppw_unwind_leave(uint32_t *slot)
{
    if (slot)
        __atomic_store_n(slot, 0, __ATOMIC_RELEASE);
}

/* Whether this thread has walked with unw_backtrace (its cache is made). */
static PPW_TLS bool walked_fast;

int ppw_unwind_walk(uint64_t *frames, int max)
{
    _Static_assert(sizeof(void *) == sizeof(uint64_t), "64-bit addresses");
    uint32_t *slot = ppw_unwind_enter();
    int n = unw_backtrace((void **)frames, max);
    walked_fast = true;
    ppw_unwind_leave(slot);
    return n < 0 ? 0 : n;
}

int ppw_unwind_walk_rarely(uint64_t *frames, int max)
{
    if (walked_fast)
        return ppw_unwind_walk(frames, max);
    uint32_t *slot = ppw_unwind_enter();
    unw_context_t context;
    unw_cursor_t cursor;
    int n = 0;
    /* As unw_backtrace counts: from this function's caller, return
     * addresses as they are */
    if (max > 0 && unw_getcontext(&context) == 0 && unw_init_local(&cursor, &context) == 0) {
        while (n < max && unw_step(&cursor) > 0) {
            unw_word_t ip;
            if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0)
                break;
            frames[n++] = ip;
        }
    }
    ppw_unwind_leave(slot);
    return n;
}

int ppw_unwind_in_walk(uint32_t tid)
{
    for (int i = 0; tid && i < WALK_SLOTS; i++)
        if (__atomic_load_n(&walking_tids[i], __ATOMIC_ACQUIRE) == tid)
            return 1;
    return 0;
}

void ppw_unwind_after_fork_child(void)
{
    own_tid = 0; /* the child's thread has a tid of its own */
    for (int i = 0; i < WALK_SLOTS; i++)
        __atomic_store_n(&walking_tids[i], 0, __ATOMIC_RELAXED);
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
