/* Error codes and messages for ppw-blame's libraries.
 *
 * Functions return 0 or a negative PPW_E* code and describe the failure in a
 * caller-provided struct ppw_err, recorded where it was detected. */
#ifndef PPW_BLAME_ERROR_H
#define PPW_BLAME_ERROR_H

#include <stdint.h>

enum ppw_err_code {
    PPW_OK = 0,
    PPW_EIO = -1,        /* cannot open or read a file */
    PPW_ECORRUPT = -2,   /* malformed data; offset says where */
    PPW_EVERSION = -3,   /* data from a newer (or unknown) format version */
    PPW_ENOSECTION = -4, /* the binary carries no .ppw.blame section */
    PPW_ENOMEM = -5,
    PPW_EUSAGE = -6,     /* bad command line */
    PPW_ENOTELF = -7,    /* the file is not an ELF object */
    PPW_ENOTFOUND = -8,  /* a requested item (e.g. a function) does not exist */
};

struct ppw_err {
    int code;
    int64_t offset; /* PPW_ECORRUPT: file offset of the first bad byte; else -1 */
    char message[1024]; /* room for two long paths and the advice after them */
};

#if defined(__GNUC__) || defined(__clang__)
#define PPW_PRINTF(fmt_arg, first_arg) __attribute__((format(printf, fmt_arg, first_arg)))
#else
#define PPW_PRINTF(fmt_arg, first_arg)
#endif

/* Records code and message (err may be NULL); returns code. */
int ppw_err_set(struct ppw_err *err, int code, const char *fmt, ...) PPW_PRINTF(3, 4);

/* Records PPW_ECORRUPT as "<path>: corrupt <what> at byte <offset>: ..."; in
 * debug builds the detecting source line is appended.  Use PPW_CORRUPT. */
int ppw_err_corrupt_at(struct ppw_err *err, const char *src_file, int src_line,
                       const char *path, uint64_t offset, const char *fmt, ...)
    PPW_PRINTF(6, 7);

#define PPW_CORRUPT(err, path, offset, ...)                                                   \
    ppw_err_corrupt_at((err), __FILE__, __LINE__, (path), (offset), __VA_ARGS__)

/* Short stable name of a code ("corrupt", "io", ...). */
const char *ppw_err_name(int code);

void ppw_err_clear(struct ppw_err *err);

#endif
