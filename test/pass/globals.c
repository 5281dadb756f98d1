/* A global written in two functions is one program-level variable. */
#include <stdio.h>

long total;

void add(long amount)
{
    total += amount;
}

void reset(void)
{
    static int resets;
    resets++;
    total = 0;
}

int main(void)
{
    for (int i = 0; i < 10; i++)
        add(i);
    printf("%ld\n", total);
    reset();
    return (int)total;
}
