#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ppw_err_clear(struct ppw_err *err)
{
    if (!err)
        return;
    err->code = PPW_OK;
    err->offset = -1;
    err->message[0] = '\0';
}

int ppw_err_set(struct ppw_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->code = code;
    err->offset = -1;
    return code;
}

int ppw_err_corrupt_at(struct ppw_err *err, const char *src_file, int src_line,
                       const char *path, uint64_t offset, const char *fmt, ...)
{
    if (!err)
        return PPW_ECORRUPT;
    int n = snprintf(err->message, sizeof err->message, "%s: corrupt data at byte %llu: ", path,
                     (unsigned long long)offset);
    size_t used = n < 0 ? 0 : (size_t)n;
    if (used < sizeof err->message) {
        va_list ap;
        va_start(ap, fmt);
        n = vsnprintf(err->message + used, sizeof err->message - used, fmt, ap);
        va_end(ap);
        used += n < 0 ? 0 : (size_t)n;
    }
#ifndef NDEBUG
    /* Debug builds say which check fired, to tell reader bugs from bad data. */
    if (used < sizeof err->message) {
        const char *base = strrchr(src_file, '/');
        snprintf(err->message + used, sizeof err->message - used, " [%s:%d]",
                 base ? base + 1 : src_file, src_line);
    }
#else
    (void)src_file;
    (void)src_line;
#endif
    err->code = PPW_ECORRUPT;
    err->offset = (int64_t)offset;
    return PPW_ECORRUPT;
}

const char *ppw_err_name(int code)
{
    switch (code) {
    case PPW_OK: return "ok";
    case PPW_EIO: return "io";
    case PPW_ECORRUPT: return "corrupt";
    case PPW_EVERSION: return "version";
    case PPW_ENOSECTION: return "no-section";
    case PPW_ENOMEM: return "no-memory";
    case PPW_EUSAGE: return "usage";
    case PPW_ENOTELF: return "not-elf";
    case PPW_ENOTFOUND: return "not-found";
    }
    return "unknown";
}
