/* Aliases: writes through a pointer copied into another variable blame the
 * variable it points into, not the pointer. */
#include <stdio.h>

void set_through_alias(int *out, int value)
{
    int *q = out;
    *q = value * 2;
}

int main(void)
{
    int arr[4] = {0};
    int *p = &arr[2];
    *p = 7;
    int result;
    set_through_alias(&result, 21);
    printf("%d %d\n", arr[2], result);
    return 0;
}
