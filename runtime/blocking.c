/* Interposers of the calls that SA_RESTART does not restart, and of the
 * exec family (see blocking.h). */
#include "blocking.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler.h"
#include "signals.h"
#include "sigsafe.h"
#include "thread.h"

extern char **environ;

/* The real functions, by the name each wrapper has. */
#define BLOCKING_CALLS(X)                                                                          \
    X(nanosleep)                                                                                   \
    X(clock_nanosleep)                                                                             \
    X(usleep)                                                                                      \
    X(sleep)                                                                                       \
    X(sem_timedwait)                                                                               \
    X(sem_clockwait)                                                                               \
    X(poll)                                                                                        \
    X(ppoll)                                                                                       \
    X(select)                                                                                      \
    X(pselect)                                                                                     \
    X(epoll_wait)                                                                                  \
    X(epoll_pwait)                                                                                 \
    X(pause)                                                                                       \
    X(sigsuspend)                                                                                  \
    X(sigtimedwait)                                                                                \
    X(sigwaitinfo)                                                                                 \
    X(execve)                                                                                      \
    X(execv)                                                                                       \
    X(execvp)                                                                                      \
    X(execvpe)                                                                                     \
    X(fexecve)

#define DECLARE_REAL(name) static __typeof__(name) *real_##name;
BLOCKING_CALLS(DECLARE_REAL)
#undef DECLARE_REAL

static void *resolve(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

void ppw_blocking_init(void)
{
#define RESOLVE(name)                                                                              \
    if (!__atomic_load_n(&real_##name, __ATOMIC_RELAXED))                                          \
        __atomic_store_n(&real_##name, (__typeof__(name) *)resolve(#name), __ATOMIC_RELAXED);
    BLOCKING_CALLS(RESOLVE)
#undef RESOLVE
}

/* The real function, looked up now if the call came before start-up. */
#define REAL(name)                                                                                 \
    (__atomic_load_n(&real_##name, __ATOMIC_RELAXED) ? real_##name                                 \
                                                     : (ppw_blocking_init(), real_##name))

/* Masks the sampling signal in the calling thread; *old is the mask to
 * restore.  0 when there is nothing to mask (no sampler). */
PPW_SIGSAFE static int mask_sampling(sigset_t *old)
{
    int sig = ppw_sampler_signal();
    if (!sig)
        return 0;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    return ppw_signals_real_mask(SIG_BLOCK, &set, old) == 0;
}

PPW_SIGSAFE static void unmask(int masked, const sigset_t *old)
{
    if (!masked)
        return;
    int saved = errno;
    ppw_signals_real_mask(SIG_SETMASK, old, NULL);
    errno = saved;
}

/* A mask argument that the kernel installs for the call's duration, with
 * the sampling signal added. */
PPW_SIGSAFE static const sigset_t *with_sampling(const sigset_t *mask, sigset_t *copy)
{
    int sig = ppw_sampler_signal();
    if (!mask || !sig)
        return mask;
    *copy = *mask;
    sigaddset(copy, sig);
    return copy;
}

/* Calls the real function with the sampling signal masked and returns its
 * result; errno is the call's. */
#define MASKED(name, ...)                                                                          \
    do {                                                                                           \
        __typeof__(name) *real = REAL(name);                                                       \
        if (!real) {                                                                               \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        sigset_t old;                                                                              \
        int masked = mask_sampling(&old);                                                          \
        __typeof__(real(__VA_ARGS__)) rc = real(__VA_ARGS__);                                      \
        unmask(masked, &old);                                                                      \
        return rc;                                                                                 \
    } while (0)

PPW_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
    MASKED(nanosleep, req, rem);
}

PPW_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                               struct timespec *rem)
{
    MASKED(clock_nanosleep, clock, flags, req, rem);
}

PPW_EXPORT int usleep(useconds_t usec)
{
    MASKED(usleep, usec);
}

PPW_EXPORT unsigned int sleep(unsigned int seconds)
{
    __typeof__(sleep) *real = REAL(sleep);
    if (!real)
        return seconds;
    sigset_t old;
    int masked = mask_sampling(&old);
    unsigned int left = real(seconds);
    unmask(masked, &old);
    return left;
}

PPW_EXPORT int sem_timedwait(sem_t *sem, const struct timespec *abstime)
{
    MASKED(sem_timedwait, sem, abstime);
}

PPW_EXPORT int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *abstime)
{
    MASKED(sem_clockwait, sem, clock, abstime);
}

PPW_EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
    MASKED(poll, fds, nfds, timeout);
}

PPW_EXPORT int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
                     const sigset_t *mask)
{
    sigset_t copy;
    MASKED(ppoll, fds, nfds, timeout, with_sampling(mask, &copy));
}

PPW_EXPORT int select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
                      struct timeval *timeout)
{
    MASKED(select, nfds, readfds, writefds, exceptfds, timeout);
}

PPW_EXPORT int pselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
                       const struct timespec *timeout, const sigset_t *mask)
{
    sigset_t copy;
    MASKED(pselect, nfds, readfds, writefds, exceptfds, timeout, with_sampling(mask, &copy));
}

PPW_EXPORT int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
    MASKED(epoll_wait, epfd, events, maxevents, timeout);
}

PPW_EXPORT int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
                           const sigset_t *mask)
{
    sigset_t copy;
    MASKED(epoll_pwait, epfd, events, maxevents, timeout, with_sampling(mask, &copy));
}

PPW_EXPORT int pause(void)
{
    MASKED(pause);
}

PPW_EXPORT int sigsuspend(const sigset_t *mask)
{
    sigset_t copy;
    MASKED(sigsuspend, with_sampling(mask, &copy));
}

PPW_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    MASKED(sigtimedwait, set, info, timeout);
}

PPW_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    MASKED(sigwaitinfo, set, info);
}

/* ---- exec ---------------------------------------------------------------- */

/* Before exec: no sampling signal may be raised during the call or be
 * pending at its end.  The thread's source is paused with the signal
 * masked, what it already raised is taken off the queue, and the mask is
 * put back (the new program inherits it).  A vfork()ed child shares its
 * parent's state but not its signal source: it only drains. */
struct exec_guard {
    struct ppw_thread *paused;
};

static void exec_begin(struct exec_guard *g)
{
    g->paused = NULL;
    sigset_t old;
    if (!mask_sampling(&old))
        return;
    struct ppw_thread *t = ppw_thread_self();
    if (t && t->tid == (uint32_t)syscall(SYS_gettid)) {
        ppw_sampler_thread_pause(t);
        g->paused = t;
    }
    __typeof__(sigtimedwait) *wait = REAL(sigtimedwait);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, ppw_sampler_signal());
    struct timespec now = {0, 0};
    for (int i = 0; wait && i < 64 && wait(&set, NULL, &now) > 0; i++)
        ;
    unmask(1, &old);
}

/* exec failed: the thread samples again. */
static void exec_failed(struct exec_guard *g)
{
    if (g->paused) {
        int saved = errno;
        ppw_sampler_thread_resume(g->paused);
        errno = saved;
    }
}

#define GUARDED_EXEC(name, ...)                                                                    \
    do {                                                                                           \
        __typeof__(name) *real = REAL(name);                                                       \
        if (!real) {                                                                               \
            errno = ENOSYS;                                                                        \
            return -1;                                                                             \
        }                                                                                          \
        struct exec_guard g;                                                                       \
        exec_begin(&g);                                                                            \
        int rc = real(__VA_ARGS__);                                                                \
        exec_failed(&g);                                                                           \
        return rc;                                                                                 \
    } while (0)

PPW_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    GUARDED_EXEC(execve, path, argv, envp);
}

PPW_EXPORT int execv(const char *path, char *const argv[])
{
    GUARDED_EXEC(execv, path, argv);
}

PPW_EXPORT int execvp(const char *file, char *const argv[])
{
    GUARDED_EXEC(execvp, file, argv);
}

PPW_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    GUARDED_EXEC(execvpe, file, argv, envp);
}

PPW_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    GUARDED_EXEC(fexecve, fd, argv, envp);
}

/* The execl forms: the arguments into an array, then the execv form. */

/* As glibc's execl: arg, then the arguments in *ap up to a NULL; how many
 * (arg included, the NULL not), leaving *ap where it was. */
static int count_args(va_list *ap)
{
    va_list count;
    va_copy(count, *ap);
    int n = 1;
    while (va_arg(count, const char *))
        n++;
    va_end(count);
    return n;
}

/* argv[0..n]: arg, the n - 1 arguments from *ap and their NULL, which it
 * consumes. */
static void take_args(char **argv, const char *arg, int n, va_list *ap)
{
    argv[0] = (char *)arg;
    for (int i = 1; i <= n; i++)
        argv[i] = va_arg(*ap, char *);
}

PPW_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int n = count_args(&ap);
    char *argv[n + 1];
    take_args(argv, arg, n, &ap);
    va_end(ap);
    return execve(path, argv, environ);
}

PPW_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int n = count_args(&ap);
    char *argv[n + 1];
    take_args(argv, arg, n, &ap);
    va_end(ap);
    return execvp(file, argv);
}

PPW_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    int n = count_args(&ap);
    char *argv[n + 1];
    take_args(argv, arg, n, &ap);
    char *const *envp = va_arg(ap, char *const *); /* after the NULL */
    va_end(ap);
    return execve(path, argv, envp);
}
