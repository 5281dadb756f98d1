/* ppw's long-lived descriptors, protected from the program's close and
 * dup2 (see descriptors.h). */
#include "descriptors.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TRACKED_FDS 65536 /* numbers below this can be protected */
#define MAX_OWNED 8192    /* descriptors at once: about two per live thread */

/* Which numbers are ppw's: read lock-free by the interposers. */
static uint64_t owned_bits[TRACKED_FDS / 64];

/* Who holds each: a move must update the holder.  Guarded by `lock`. */
struct owned {
    int *slot;
    enum ppw_fd_owner owner;
};
static struct owned owned[MAX_OWNED];
static size_t nowned;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread holds lock: a dup2 from a signal handler that interrupted
 * it must not wait for it. */
static PPW_TLS int holding_lock;

/* The flag covers the whole of locking and unlocking: a handler that
 * comes in between must not wait either. */
static void lock_fds(void)
{
    holding_lock = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(&lock);
}

static void unlock_fds(void)
{
    pthread_mutex_unlock(&lock);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    holding_lock = 0;
}

static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_close_range)(unsigned, unsigned, int);
static void (*real_closefrom)(int);

void ppw_descriptors_init(void)
{
    real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    real_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
    real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
    real_close_range = (int (*)(unsigned, unsigned, int))dlsym(RTLD_NEXT, "close_range");
    real_closefrom = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");
}

PPW_SIGSAFE static int is_owned(long fd)
{
    return fd >= 0 && fd < TRACKED_FDS &&
           (__atomic_load_n(&owned_bits[fd / 64], __ATOMIC_ACQUIRE) >> (fd % 64) & 1);
}

static void set_bit(int fd, int on)
{
    uint64_t bit = 1ull << (fd % 64);
    if (on)
        __atomic_fetch_or(&owned_bits[fd / 64], bit, __ATOMIC_RELEASE);
    else
        __atomic_fetch_and(&owned_bits[fd / 64], ~bit, __ATOMIC_RELEASE);
}

/* The real close, also before ppw_descriptors_init (a constructor that
 * runs before libppw's). */
PPW_SIGSAFE static int close_real(int fd)
{
    return real_close ? real_close(fd) : (int)syscall(SYS_close, fd);
}

int ppw_fd_own(int *slot, enum ppw_fd_owner owner)
{
    int fd = *slot;
    if (fd < 0 || fd >= TRACKED_FDS)
        return -1;
    lock_fds();
    int rc = -1;
    if (nowned < MAX_OWNED) {
        owned[nowned++] = (struct owned){slot, owner};
        set_bit(fd, 1);
        rc = 0;
    }
    unlock_fds();
    return rc;
}

/* The entry holding fd, or NULL; under lock. */
static struct owned *find(int fd)
{
    for (size_t i = 0; i < nowned; i++)
        if (*owned[i].slot == fd)
            return &owned[i];
    return NULL;
}

void ppw_fd_release(int *slot)
{
    int fd = *slot;
    if (fd < 0)
        return;
    lock_fds();
    for (size_t i = 0; i < nowned; i++)
        if (owned[i].slot == slot) {
            owned[i] = owned[--nowned];
            set_bit(fd, 0);
            break;
        }
    unlock_fds();
}

void ppw_fd_close(int *slot)
{
    int fd = *slot;
    if (fd < 0)
        return;
    ppw_fd_release(slot);
    close_real(fd);
    *slot = -1;
}

void ppw_fd_forget_all(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh; /* the child: another thread may have held it at fork */
    nowned = 0;
    for (size_t i = 0; i < TRACKED_FDS / 64; i++)
        __atomic_store_n(&owned_bits[i], 0, __ATOMIC_RELEASE);
}

/* Moves ppw's descriptor off number fd, which the program wants for a
 * dup2: a copy elsewhere takes its place in its holder.  A perf event's
 * signal names the descriptor it came through (si_fd), so its
 * asynchronous notification is set up again on the copy (a signal queued
 * before names the old number: sampler.c takes it all the same).  Another
 * thread holds the lock only briefly (a thread starting or ending), so the
 * call waits for it: a bounded try could give up under load and let the
 * program's dup2 replace a sampler's descriptor.  But dup2 is
 * async-signal-safe, and a handler may have interrupted this very thread
 * while it held the lock; then the program's dup2 replaces ppw's
 * descriptor, as it would without this file. */
static void move_off(int fd)
{
    if (holding_lock)
        return;
    lock_fds();
    struct owned *o = find(fd);
    int copy = o ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
    if (copy >= 0 && copy < TRACKED_FDS) {
        int flags = o->owner == PPW_FD_PERF ? fcntl(copy, F_GETFL) : 0;
        /* A ring sampler's event signals nobody (sampler.c): nothing to redo. */
        if (o->owner == PPW_FD_PERF && flags != -1 && (flags & O_ASYNC)) {
            fcntl(copy, F_SETFL, flags & ~O_ASYNC);
            fcntl(copy, F_SETFL, flags | O_ASYNC);
            /* An overflow between the two sent no signal, and the event,
             * armed for one, stays disabled: no handler would re-arm it
             * (runtime.lost: every later sample lost, now and then).  So
             * arm it again; if it was armed, it is one overflow ahead,
             * which the handler's re-arming keeps. */
            ioctl(copy, PERF_EVENT_IOC_REFRESH, 1);
        }
        set_bit(copy, 1);
        __atomic_store_n(o->slot, copy, __ATOMIC_RELEASE);
        set_bit(fd, 0);
    } else if (copy >= 0) {
        close_real(copy);
    }
    unlock_fds();
}

/* ---- the interposers ---- */

PPW_EXPORT int close(int fd)
{
    if (is_owned(fd)) {
        errno = EBADF; /* as for a number the program never opened */
        return -1;
    }
    return close_real(fd);
}

PPW_EXPORT int dup2(int oldfd, int newfd)
{
    if (is_owned(oldfd)) {
        errno = EBADF;
        return -1;
    }
    if (oldfd != newfd && is_owned(newfd))
        move_off(newfd);
    return real_dup2 ? real_dup2(oldfd, newfd) : (int)syscall(SYS_dup2, oldfd, newfd);
}

PPW_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    if (is_owned(oldfd)) {
        errno = EBADF;
        return -1;
    }
    if (oldfd != newfd && is_owned(newfd))
        move_off(newfd);
    return real_dup3 ? real_dup3(oldfd, newfd, flags) : (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

static int close_range_real(unsigned first, unsigned last, int flags)
{
    return real_close_range ? real_close_range(first, last, flags)
                            : (int)syscall(SYS_close_range, first, last, flags);
}

/* Closes [first, last] but ppw's own descriptors: the gaps between them. */
static int close_gaps(unsigned first, unsigned last, int flags)
{
    unsigned from = first;
    int rc = 0;
    for (unsigned fd = first; fd <= last && fd < TRACKED_FDS; fd++) {
        if (!is_owned((long)fd))
            continue;
        if (fd > from && close_range_real(from, fd - 1, flags) != 0)
            rc = -1;
        from = fd + 1;
    }
    if (from <= last && close_range_real(from, last, flags) != 0)
        rc = -1;
    return rc;
}

PPW_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    /* CLOSE_RANGE_CLOEXEC (4) closes nothing, and ppw's are close-on-exec */
    if (flags & 4 || first > last)
        return close_range_real(first, last, flags);
    return close_gaps(first, last, flags);
}

PPW_EXPORT void closefrom(int lowfd)
{
    if (lowfd < 0)
        lowfd = 0;
    int saved = errno;
    if (close_gaps((unsigned)lowfd, ~0u, 0) != 0 && errno == ENOSYS) {
        /* a kernel without close_range: one by one, as glibc falls back */
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = lowfd; fd < max; fd++)
            if (!is_owned(fd))
                close_real((int)fd);
    }
    errno = saved;
}
