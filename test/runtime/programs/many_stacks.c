/* 4096 distinct call paths, visited in order, again and again: path p
 * descends LEVELS levels, level k through left() when bit k of p is 0 and
 * right() when it is 1, to a leaf that spins.  A thread's stack table
 * holds 3072 stacks (runtime/sampler.c): sampled often enough, the run
 * samples more distinct stacks than that, and the table is reset and
 * written again while samples go on naming stacks by id.
 *
 *   many_stacks [ROUNDS]   ROUNDS passes over the 4096 paths (default 5)
 */
#include <stdio.h>
#include <stdlib.h>

#define LEVELS 12
#define SPIN 150000

static volatile unsigned long sink;

static void descend(unsigned path, int level);

__attribute__((noinline)) static void spin_leaf(void)
{
    for (int i = 0; i < SPIN; i++)
        sink += (unsigned long)i;
}

/* Different bodies, so that no pass merges the two; work after the call,
 * so that it stays a call */
__attribute__((noinline)) static void left(unsigned path, int level)
{
    descend(path, level + 1);
    sink += 1;
}

__attribute__((noinline)) static void right(unsigned path, int level)
{
    descend(path, level + 1);
    sink += 2;
}

static void descend(unsigned path, int level)
{
    if (level == LEVELS)
        spin_leaf();
    else if (path >> level & 1)
        right(path, level);
    else
        left(path, level);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    for (int r = 0; r < rounds; r++)
        for (unsigned path = 0; path < 1u << LEVELS; path++)
            descend(path, 0);
    printf("%d rounds of %u paths\n", rounds, 1u << LEVELS);
    return 0;
}
