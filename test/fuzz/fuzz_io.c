#include "fuzz_io.h"

#include <stdio.h>

int fuzz_write_file(const char *path, const void *a, size_t alen, const void *b, size_t blen)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(a, 1, alen, f) == alen && fwrite(b, 1, blen, f) == blen;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        perror(path);
    return ok ? 0 : -1;
}
