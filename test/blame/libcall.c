/* Library calls without a blame graph: a sample inside strcpy or memset is
 * charged to the call site in main, and to the argument the library writes
 * (include/ppw/libcalls.h). */
#include <stdio.h>
#include <string.h>

int main(void)
{
    char src[64], dst[64];
    memset(src, 'x', sizeof src - 1);
    src[63] = '\0';
    strcpy(dst, src);
    printf("%s\n", dst + 60);
    return dst[3] == 'x' ? 0 : 1;
}
