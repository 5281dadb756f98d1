/* The access view's table-lookup test (check_access.sh): a binary search
 * of a large sorted table that the hot loop only reads, feeding a small
 * accumulator that it writes.  The table is what the loop touches (access
 * view); the accumulator is what it computes (blame view).
 * check_access.sh names the loop's lines. */
#include <stdio.h>
#include <stdlib.h>

#define TABLE (1L << 21) /* 16 MB: beyond the caches */
static double table[TABLE];
static double acc[8];

int main(int argc, char **argv)
{
    long lookups = argc > 1 ? atol(argv[1]) : 300000;
    for (long i = 0; i < TABLE; i++)
        table[i] = (double)i;
    unsigned long x = 12345;
    for (long i = 0; i < lookups; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        double key = (double)(x >> 43);
        long lo = 0, hi = TABLE - 1;
        while (lo < hi) {
            long mid = lo + (hi - lo) / 2;
            if (table[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        acc[i & 7] += table[lo];
    }
    for (int k = 1; k < 8; k++)
        acc[0] += acc[k];
    printf("%.0f\n", acc[0]);
    return 0;
}
