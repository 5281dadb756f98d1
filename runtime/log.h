/* Diagnostics on stderr, async-signal-safe: a small formatter over write(2).
 * The runtime never writes to stdout. */
#ifndef PPW_RUNTIME_LOG_H
#define PPW_RUNTIME_LOG_H

#include "sigsafe.h"

/* "ppw: <message>\n" on stderr.  Formats: %s %d %u %ld %lu %lld %llu %x
 * %lx %p %%, no widths.  Preserves errno. */
PPW_SIGSAFE void ppw_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Only when PPW_VERBOSE is set. */
PPW_SIGSAFE void ppw_log_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Formats into buf (always NUL-terminated); returns the length. */
PPW_SIGSAFE int ppw_format(char *buf, int size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
