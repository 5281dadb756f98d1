/* What a program may do to the sampler: after 0.1 s of CPU time it blocks
 * every signal, ignores the sampling signal, takes it with its own handler,
 * closes every descriptor from 3 to 1023 (as daemons and some test
 * harnesses do), or dup2s /dev/null onto every number from 3 to 63, then
 * works 0.3 s more.  `none` does nothing of the kind, `raw` blocks every
 * signal through the system call itself.  The output is the same in every
 * mode, with or without ppw.
 *
 *   faults MODE   (none, block, raw, ignore, handle, close, dup) */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "spin.h"

static volatile sig_atomic_t handled;

static void own_handler(int sig)
{
    (void)sig;
    handled++;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "none";
    double x = spin_for(CLOCK_THREAD_CPUTIME_ID, 0.1);
    sigset_t all;
    sigfillset(&all);
    int sig = SIGRTMIN + 4; /* ppw's default sampling signal */
    if (strcmp(mode, "block") == 0) {
        sigprocmask(SIG_BLOCK, &all, NULL);
    } else if (strcmp(mode, "raw") == 0) {
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
    } else if (strcmp(mode, "ignore") == 0) {
        signal(sig, SIG_IGN);
    } else if (strcmp(mode, "handle") == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = own_handler;
        sigaction(sig, &sa, NULL);
        raise(sig); /* once: the handler must run exactly once */
    } else if (strcmp(mode, "close") == 0) {
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    } else if (strcmp(mode, "dup") == 0) {
        int null = open("/dev/null", O_WRONLY);
        for (int fd = 3; fd < 64; fd++)
            if (fd != null && dup2(null, fd) != fd)
                printf("dup2 onto %d failed\n", fd);
    }
    x += spin_for(CLOCK_THREAD_CPUTIME_ID, 0.3);
    /* What the program reads back must be what it set, ppw or not. */
    sigset_t now;
    sigprocmask(SIG_BLOCK, NULL, &now);
    struct sigaction disp;
    sigaction(sig, NULL, &disp);
    printf("%s: %s; handler ran %d time(s); signal %s; disposition %s\n", mode,
           x > 0 ? "done" : "?", (int)handled, sigismember(&now, sig) ? "blocked" : "unblocked",
           disp.sa_handler == SIG_DFL   ? "default"
           : disp.sa_handler == SIG_IGN ? "ignored"
                                        : "the program's handler");
    return 0;
}
