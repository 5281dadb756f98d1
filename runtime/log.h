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
/* Lost output (a file that cannot be created or grow: disk full,
 * RLIMIT_FSIZE) is said once per process on stderr, the first time, as
 * "ppw: output lost: <message>"; later losses are only counted in the run
 * directory (notes in run.ppw, drop counters in the files).  Returns 1 when
 * this call printed. */
PPW_SIGSAFE int ppw_log_loss(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Claims the one report without printing (the caller says it otherwise). */
PPW_SIGSAFE int ppw_log_claim_loss(void);
/* A fork()ed child reports its own losses. */
void ppw_log_loss_after_fork(void);
/* Formats into buf (always NUL-terminated); returns the length. */
PPW_SIGSAFE int ppw_format(char *buf, int size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
