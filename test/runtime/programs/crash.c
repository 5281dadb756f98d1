/* Dies in the middle of a run: `crash segv` dereferences NULL, `crash
 * abort` calls abort(), after burning CPU time in burn() (runtime.crash:
 * the same death with and without ppw, and the samples taken before it
 * are readable). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spin.h"

__attribute__((noinline)) static double burn(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    printf("burned %d\n", burn(0.4) > 0);
    fflush(stdout);
    if (strcmp(how, "abort") == 0)
        abort();
    volatile int *nowhere = NULL;
    return *nowhere;
}
