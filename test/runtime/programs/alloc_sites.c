/* Allocation sites with known call counts, for sampled throttling
 * (check_run.sh alloc).  Two OpenMP threads share ITEMS items a round for
 * ROUNDS rounds; every item gets a small node (site "node malloc"), kept
 * in the round's table so that the compiler cannot drop the allocation,
 * and every node is freed again in a second loop (site "node free"):
 * ITEMS * ROUNDS calls each, 400,000.  The table is allocated and freed
 * once a round (sites "table calloc" and "table free"): ROUNDS calls each,
 * 200, too few to be throttled.  Prints a checksum that does not depend on
 * the schedule.
 *
 *   alloc_sites [ROUNDS]     ROUNDS defaults to 200 */
#include <stdio.h>
#include <stdlib.h>

#define ITEMS 2000

struct node {
    struct node *next;
    long value;
};

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    long checksum = 0;
    for (int round = 0; round < rounds; round++) {
        struct node **table = calloc(ITEMS, sizeof *table); /* site: table calloc */
        if (!table)
            return 1;
#pragma omp parallel for schedule(static)
        for (int i = 0; i < ITEMS; i++) {
            struct node *n = malloc(sizeof *n); /* site: node malloc */
            if (!n)
                abort();
            n->value = (long)i * round % 1009;
            n->next = i ? table[i - 1] : NULL;
            table[i] = n;
        }
#pragma omp parallel for reduction(+ : checksum) schedule(static)
        for (int i = 0; i < ITEMS; i++) {
            checksum += table[i]->value;
            free(table[i]); /* site: node free */
        }
        free(table); /* site: table free */
    }
    printf("checksum %ld\n", checksum);
    return 0;
}
