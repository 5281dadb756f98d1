/* Exact entry counts: leaf() runs 1000 times, middle() 10 times, and a
 * recursive function 1+2+...: rec(9) makes 10 calls. */
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) static void leaf(int i)
{
    sink += i;
}

__attribute__((noinline)) static void middle(int k)
{
    for (int i = 0; i < 100; i++)
        leaf(k * 100 + i);
}

static volatile int depth_seen;

__attribute__((noinline)) static int rec(int n)
{
    if (n == 0)
        return 0;
    int below = rec(n - 1);
    depth_seen = below; /* work after the call: no tail-recursion elimination */
    return below + 1;
}

int main(void)
{
    for (int k = 0; k < 10; k++)
        middle(k);
    volatile int nine = 9; /* not a constant the optimizer could fold rec() with */
    printf("sink %d rec %d\n", sink, rec(nine));
    return 0;
}
