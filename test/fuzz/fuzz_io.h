/* Files for the fuzz targets: seeds and the inputs they hand to readers
 * that take a path. */
#ifndef PPW_FUZZ_IO_H
#define PPW_FUZZ_IO_H

#include <stddef.h>

/* Writes a[0..alen) then b[0..blen) to path; returns 0 or -1 (perror). */
int fuzz_write_file(const char *path, const void *a, size_t alen, const void *b, size_t blen);

/* Reads the whole of path into a malloc'd *data (free it); 0 or -1 (perror). */
int fuzz_read_file(const char *path, unsigned char **data, size_t *len);

#endif
