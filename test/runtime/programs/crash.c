/* Dies in the middle of a run: `crash segv` dereferences NULL, `crash
 * abort` calls abort(), `crash _exit` calls _exit(3), after burning CPU
 * time in burn() (runtime.crash and runtime.ring_death: the same death
 * with and without ppw, and the samples taken before it are readable).
 * It prints the dispositions it finds first: ppw's stand-in handlers
 * under the ring sampler must not show. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

__attribute__((noinline)) static double burn(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    struct sigaction segv, term;
    sigaction(SIGSEGV, NULL, &segv);
    sigaction(SIGTERM, NULL, &term);
    printf("SIGSEGV %s, SIGTERM %s\n", segv.sa_handler == SIG_DFL ? "default" : "handled",
           term.sa_handler == SIG_DFL ? "default" : "handled");
    printf("burned %d\n", burn(0.4) > 0);
    fflush(stdout);
    if (strcmp(how, "abort") == 0)
        abort();
    if (strcmp(how, "_exit") == 0)
        _exit(3);
    volatile int *nowhere = NULL;
    return *nowhere;
}
