/* The program's own behaviour under ppw: its signal handlers, errno,
 * interrupted system calls, stdout and exit status.  Prints the same lines
 * with and without ppw, and exits 7. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

static volatile sig_atomic_t alarms, profs;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void on_prof(int sig)
{
    (void)sig;
    profs++;
}

static double spin(double seconds)
{
    return spin_for(CLOCK_MONOTONIC, seconds);
}

int main(void)
{
    /* errno survives work that ppw samples. */
    errno = ERANGE;
    double x = spin(0.05);
    printf("errno kept: %s\n", errno == ERANGE ? "yes" : "no");

    /* The program's own SIGALRM and SIGPROF handlers keep working. */
    signal(SIGALRM, on_alarm);
    signal(SIGPROF, on_prof);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_PROF, &it, NULL);
    alarm(1);
    x += spin(1.2);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("alarm handler ran: %s\n", alarms == 1 ? "yes" : "no");
    printf("profiling handler ran: %s\n", profs > 10 ? "yes" : "no");

    /* A pipe read while samples arrive: no EINTR, full data. */
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        spin(0.2);
        const char *msg = "hello through a pipe";
        ssize_t unused = write(fds[1], msg, strlen(msg) + 1);
        (void)unused;
        _exit(0);
    }
    char buf[64] = "";
    ssize_t n;
    do
        n = read(fds[0], buf, sizeof(buf));
    while (n < 0 && errno == EINTR && (printf("EINTR leaked\n"), 1));
    printf("read: %s\n", n > 0 ? buf : "(nothing)");
    printf("result %d\n", x > 0);
    return 7;
}
