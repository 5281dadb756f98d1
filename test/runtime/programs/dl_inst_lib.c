/* The library runtime.dl_inst builds with ppw-cc (-shared -fPIC) and opens
 * and closes thousands of times: its functions send GASP events from code
 * and strings that are unmapped at each dlclose. */
int dl_churn_value(void);

static volatile int sink;

__attribute__((noinline)) static int leaf(int i)
{
    for (int k = 0; k < 50; k++)
        sink += k ^ i;
    return i & 1;
}

__attribute__((noinline)) static int twice(int n)
{
    return n <= 0 ? 0 : leaf(n) + twice(n - 1);
}

int dl_churn_value(void)
{
    return 42 + twice(8) - 4;
}
