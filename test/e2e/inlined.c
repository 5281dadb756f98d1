/* At -O2 the hot function is inlined into main: its blame must still reach
 * main's histogram through the inlined frame. */
#include <stdio.h>
#include <stdlib.h>

#define BINS 1024

static inline void accumulate(long *histogram, const unsigned *keys, int n)
{
    for (int i = 0; i < n; i++)
        histogram[keys[i] % BINS] += keys[i] & 7;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 10000;
    enum { KEYS = 100000 };
    unsigned *keys = malloc(KEYS * sizeof(unsigned));
    long histogram[BINS] = {0};
    unsigned x = 12345;
    for (int i = 0; i < KEYS; i++) {
        x = x * 1103515245u + 12345u;
        keys[i] = x >> 8;
    }
    for (int r = 0; r < reps; r++)
        accumulate(histogram, keys, KEYS);
    printf("%ld\n", histogram[5]);
    free(keys);
    return 0;
}
