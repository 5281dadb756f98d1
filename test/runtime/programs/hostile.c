/* A run directory with symbolic links planted in it: before its second
 * thread starts, the program links the names that thread's files (and the
 * main thread's profile) will have to a victim file outside the directory.
 * ppw must not follow them.  Prints the same lines with and without ppw.
 *
 *   hostile RUN_DIR VICTIM */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"
#include "ppw/ppw.h"

static double spin(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
}

static unsigned region;

static void *worker(void *arg)
{
    double *x = arg;
    ppw_event_start(region, 1);
    *x = spin(0.2);
    ppw_event_end(region, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    static const char *const planted[] = {"t1.samples.ppw", "t1.events.ppw", "t1.profile.ppw",
                                          "t0.profile.ppw"};
    for (size_t i = 0; i < sizeof planted / sizeof planted[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], planted[i]);
        (void)symlink(argv[2], path); /* fails without ppw: no such directory */
    }
    region = ppw_create_event("hostile", "thread %d");
    double x = 0, y = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &y) != 0)
        return 1;
    ppw_event_start(region, 0);
    x = spin(0.2);
    ppw_event_end(region, 0);
    pthread_join(t, NULL);
    printf("result %d\n", x > 0 && y > 0);
    return 0;
}
