/* Signal-safety rules for libppw (see docs/runtime.md).
 *
 * Functions marked PPW_SIGSAFE may run inside the sampling signal handler.
 * They may call only other PPW_SIGSAFE functions, atomics, and this
 * allowlist: write, read, clock_gettime, ioctl/fcntl on our own
 * descriptors, timer_settime, getrlimit, fallocate/ftruncate, mmap/munmap
 * (thin system call wrappers in glibc), libunwind's local unw_backtrace,
 * and its remote cursor over leaf.c's accessors with dl_iterate_phdr (both
 * only where the dynamic linker's locks allow, see sampler.c).
 * Forbidden: malloc, stdio, mutexes, dlsym, lazily allocated TLS, and loops
 * without a fixed bound. */
#ifndef PPW_RUNTIME_SIGSAFE_H
#define PPW_RUNTIME_SIGSAFE_H

#include <pthread.h>
#include <sched.h>

/* Documentation only: grep for it when auditing the handler path. */
#define PPW_SIGSAFE

/* Thread-local storage libppw reads in signal context: initial-exec, so an
 * access never allocates.  libppw is linked, not dlopen'ed, so static TLS
 * is always available. */
#define PPW_TLS __thread __attribute__((tls_model("initial-exec")))

/* Symbols the program calls or interposes; everything else is hidden. */
#define PPW_EXPORT __attribute__((visibility("default")))

/* Takes m if it comes free within a thousand tries (yielding between
 * them), else gives up: for callers that may run in a signal handler which
 * interrupted m's holder on this very thread, where waiting would never
 * end.  1 when m is held. */
static inline int ppw_mutex_lock_bounded(pthread_mutex_t *m)
{
    for (int i = 0; i < 1000; i++) {
        if (pthread_mutex_trylock(m) == 0)
            return 1;
        sched_yield();
    }
    return 0;
}

#endif
