#include "fuzz_io.h"

#include <stdio.h>
#include <stdlib.h>

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

int fuzz_read_file(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t size = 0, cap = 0;
    int ok = f != NULL;
    while (ok) {
        if (size == cap) {
            unsigned char *grown = realloc(buf, cap = cap ? 2 * cap : 4096);
            if (!grown) {
                ok = 0;
                break;
            }
            buf = grown;
        }
        size_t got = fread(buf + size, 1, cap - size, f);
        size += got;
        if (got == 0) {
            ok = !ferror(f);
            break;
        }
    }
    if (f)
        fclose(f);
    if (!ok) {
        perror(path);
        free(buf);
        return -1;
    }
    *data = buf;
    *len = size;
    return 0;
}
