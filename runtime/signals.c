/* The sampling signal kept out of the program's way (see signals.h). */
#include "signals.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler.h"

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);
typedef __sighandler_t (*signal_fn)(int, __sighandler_t);

static sigaction_fn real_sigaction;
static mask_fn real_pthread_sigmask, real_sigprocmask;
static signal_fn real_signal;

/* What the program would read for the sampling signal: the disposition
 * before ppw took it.  Guarded by `lock`. */
static struct sigaction shadow;
static int shadow_sig;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The program asked to block the sampling signal in this thread. */
static PPW_TLS int program_blocked;

/* Inside ppw's own signal handler (libunwind blocks and restores masks
 * there, with the sampling signal blocked by the kernel for the handler's
 * duration): masks pass through untouched. */
static PPW_TLS int in_handler;

/* Every signal is blocked by ppw_signals_block_all: masks asked for meanwhile
 * (libunwind's, around each of its locks) would change nothing. */
static PPW_TLS int all_blocked;

PPW_SIGSAFE void ppw_signals_handler_enter(void)
{
    in_handler++;
}

PPW_SIGSAFE void ppw_signals_handler_leave(void)
{
    in_handler--;
}

void ppw_signals_init(void)
{
    real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    real_pthread_sigmask = (mask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
    real_sigprocmask = (mask_fn)dlsym(RTLD_NEXT, "sigprocmask");
    real_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
}

int ppw_signals_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!real_sigaction)
        ppw_signals_init();
    return real_sigaction(sig, act, old);
}

PPW_SIGSAFE void ppw_signals_block_all(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    ppw_signals_real_mask(SIG_BLOCK, &all, saved);
    all_blocked = 1;
}

PPW_SIGSAFE void ppw_signals_restore(const sigset_t *saved)
{
    all_blocked = 0;
    ppw_signals_real_mask(SIG_SETMASK, saved, NULL);
}

/* Under ppw_signals_block_all: no system call, and the mask read back is
 * the one in force, every signal. */
PPW_SIGSAFE static int unchanged_mask(sigset_t *old)
{
    if (old)
        sigfillset(old);
    return 0;
}

PPW_SIGSAFE int ppw_signals_real_mask(int how, const sigset_t *set, sigset_t *old)
{
    if (real_pthread_sigmask)
        return real_pthread_sigmask(how, set, old);
    /* before start-up: the system call itself (8 bytes: the kernel's set) */
    return syscall(SYS_rt_sigprocmask, how, set, old, 8) == 0 ? 0 : errno;
}

int ppw_signals_free_rt(int first, int avoid)
{
    int n = SIGRTMAX - SIGRTMIN + 1;
    for (int i = 0; i < n; i++) {
        int sig = SIGRTMIN + (first - SIGRTMIN + i + n) % n;
        struct sigaction now;
        if (sig != avoid && ppw_signals_real_sigaction(sig, NULL, &now) == 0 &&
            !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL)
            return sig;
    }
    return 0;
}

void ppw_signals_took(int sig, const struct sigaction *before)
{
    pthread_mutex_lock(&lock);
    shadow = *before;
    shadow_sig = sig;
    pthread_mutex_unlock(&lock);
}

int ppw_signals_program_blocked(void)
{
    return program_blocked;
}

void ppw_signals_set_program_blocked(int blocked)
{
    program_blocked = blocked;
}

/* ---- fatal signals (docs/runtime.md, "Samples at a fatal signal") ----
 *
 * Under the ring sampler a thread's last samples wait in its ring until
 * the thread reads it.  A signal whose default action ends the process
 * would lose them, so while the program leaves such a signal at SIG_DFL,
 * ppw's handler stands in: it saves every ring, restores SIG_DFL and lets
 * the signal act as it would have (a fault re-executes the faulting
 * instruction; any other signal is raised again, pending until the handler
 * returns).  The program reads back SIG_DFL; when it sets a disposition of
 * its own, that one is installed as it asked, and ppw steps aside.
 * SIGTRAP and SIGSYS are left alone: after them execution resumes past the
 * instruction, so the signal could not be delivered again as it came. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS,  SIGILL,  SIGFPE,  SIGABRT,
                                    SIGTERM, SIGINT,  SIGHUP,  SIGQUIT, SIGPIPE,
                                    SIGALRM, SIGXCPU, SIGXFSZ, SIGUSR1, SIGUSR2};
#define FATAL_MAX 32 /* above every signal number in fatal_signals */

/* guarded[sig]: ppw's handler is installed for sig, and fatal_shadow[sig]
 * is what the program reads back (its SIG_DFL).  Changed under `lock` with
 * every signal blocked, so that a handler of the program's calling
 * sigaction on the same thread cannot wait for it. */
static volatile sig_atomic_t guarded[FATAL_MAX];
static struct sigaction fatal_shadow[FATAL_MAX];

static int is_fatal(int sig)
{
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        if (fatal_signals[i] == sig)
            return 1;
    return 0;
}

static int is_default(const struct sigaction *act)
{
    return !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
}

/* Whether the signal recurs by itself once SIG_DFL is back: a fault the
 * interrupted instruction raises again when it re-executes. */
PPW_SIGSAFE static int recurs(int sig, const siginfo_t *info)
{
    return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) && info &&
           info->si_code > 0;
}

PPW_SIGSAFE static void on_fatal(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    int saved = errno;
    ppw_signals_handler_enter();
    ppw_sampler_save_all();
    ppw_signals_handler_leave();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    real_sigaction(sig, &dfl, NULL);
    guarded[sig] = 0;
    if (!recurs(sig, info))
        syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
    errno = saved;
}

/* Installs on_fatal for sig; *before is what the program reads back. */
static int guard(int sig, const struct sigaction *before)
{
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_fatal;
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&act.sa_mask); /* nothing interrupts the saving */
    if (real_sigaction(sig, &act, NULL) != 0)
        return -1;
    fatal_shadow[sig] = *before;
    guarded[sig] = 1;
    return 0;
}

void ppw_signals_guard_fatal(void)
{
    if (!real_sigaction)
        ppw_signals_init();
    sigset_t saved;
    ppw_signals_block_all(&saved);
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
        int sig = fatal_signals[i];
        struct sigaction now;
        if (!guarded[sig] && real_sigaction(sig, NULL, &now) == 0 && is_default(&now))
            guard(sig, &now);
    }
    pthread_mutex_unlock(&lock);
    ppw_signals_restore(&saved);
}

/* sigaction for a fatal signal while the guard is on. */
static int fatal_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int saved_errno = errno;
    sigset_t saved;
    ppw_signals_block_all(&saved);
    pthread_mutex_lock(&lock);
    struct sigaction was;
    int rc = 0;
    if (guarded[sig])
        was = fatal_shadow[sig];
    else
        rc = real_sigaction(sig, NULL, &was);
    if (rc == 0 && act) {
        if (is_default(act) && guard(sig, act) == 0) {
            /* SIG_DFL again: ppw's handler stands in for it */
        } else if ((rc = real_sigaction(sig, act, NULL)) == 0) {
            guarded[sig] = 0;
        }
    }
    if (rc != 0)
        saved_errno = errno;
    pthread_mutex_unlock(&lock);
    ppw_signals_restore(&saved);
    if (rc == 0 && old)
        *old = was;
    errno = saved_errno;
    return rc;
}

/* ---- the interposers ---- */

PPW_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig > 0 && sig < FATAL_MAX && ppw_sampler_buffers() && is_fatal(sig)) {
        if (!real_sigaction)
            ppw_signals_init();
        return fatal_sigaction(sig, act, old);
    }
    int sampling = ppw_sampler_signal();
    if (!sampling || sig != sampling)
        return ppw_signals_real_sigaction(sig, act, old);
    int saved = errno;
    pthread_mutex_lock(&lock);
    struct sigaction was = shadow;
    pthread_mutex_unlock(&lock);
    int rc = 0;
    /* The program takes the signal: the sampler goes elsewhere first, so
     * that none of its signals reaches the program's handler.  With no
     * signal free, the sampler keeps it and forwards the program's own
     * (ppw_signals_forward). */
    if (act && ppw_sampler_move_signal() == 0) {
        rc = ppw_signals_real_sigaction(sig, act, NULL);
    } else if (act) {
        pthread_mutex_lock(&lock);
        shadow = *act;
        pthread_mutex_unlock(&lock);
    }
    if (rc == 0 && old)
        *old = was;
    if (rc == 0)
        errno = saved;
    return rc;
}

PPW_SIGSAFE void ppw_signals_forward(int sig, siginfo_t *info, void *uc)
{
    struct sigaction to = shadow; /* a torn read at worst skips one signal */
    if (to.sa_flags & SA_SIGINFO) {
        if (to.sa_sigaction)
            to.sa_sigaction(sig, info, uc);
    } else if (to.sa_handler != SIG_DFL && to.sa_handler != SIG_IGN && to.sa_handler) {
        to.sa_handler(sig);
    }
}

/* signal(2) with glibc's BSD semantics, through the interposed sigaction. */
PPW_EXPORT __sighandler_t signal(int sig, __sighandler_t handler)
{
    int sampling = ppw_sampler_signal();
    int fatal = sig > 0 && sig < FATAL_MAX && ppw_sampler_buffers() && is_fatal(sig);
    if (!fatal && (!sampling || sig != sampling)) {
        if (!real_signal)
            ppw_signals_init();
        return real_signal(sig, handler);
    }
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    if (sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

/* The mask the kernel gets: the program's, without the sampling signal;
 * the program's wish kept in program_blocked. */
PPW_SIGSAFE static const sigset_t *kernel_mask(int how, const sigset_t *set, sigset_t *copy,
                                               int sampling)
{
    if (!set || !sampling)
        return set;
    int member = sigismember(set, sampling) == 1;
    if (how == SIG_UNBLOCK) {
        if (member)
            program_blocked = 0;
        return set;
    }
    if (how == SIG_SETMASK)
        program_blocked = member;
    else if (how == SIG_BLOCK && member)
        program_blocked = 1;
    if (!member)
        return set;
    *copy = *set;
    sigdelset(copy, sampling);
    return copy;
}

/* The mask the program reads back: the sampling signal blocked where it
 * asked for that (and where the kernel has it blocked all the same: a raw
 * system call of the program's). */
PPW_SIGSAFE static void program_view(sigset_t *old, int blocked_before, int sampling)
{
    if (old && sampling && blocked_before)
        sigaddset(old, sampling);
}

PPW_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    if (all_blocked)
        return unchanged_mask(old);
    if (in_handler)
        return ppw_signals_real_mask(how, set, old);
    int sampling = ppw_sampler_signal(), before = program_blocked;
    sigset_t copy;
    int rc = ppw_signals_real_mask(how, kernel_mask(how, set, &copy, sampling), old);
    if (rc == 0)
        program_view(old, before, sampling);
    else
        program_blocked = before;
    return rc;
}

PPW_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    if (all_blocked)
        return unchanged_mask(old);
    int sampling = in_handler ? 0 : ppw_sampler_signal(), before = program_blocked;
    sigset_t copy;
    const sigset_t *k = kernel_mask(how, set, &copy, sampling);
    int rc = real_sigprocmask ? real_sigprocmask(how, k, old)
                              : (syscall(SYS_rt_sigprocmask, how, k, old, 8) == 0 ? 0 : -1);
    if (rc == 0)
        program_view(old, before, sampling);
    else
        program_blocked = before;
    return rc;
}
