/* run.ppw: the process-level stream (run info, argv, environment, metric,
 * calibration, modules, regions, threads).  Any thread may append; appends
 * are serialized by a mutex, so never from signal context. */
#ifndef PPW_RUNTIME_RUNFILE_H
#define PPW_RUNTIME_RUNFILE_H

#include <stdint.h>

int ppw_runfile_open(int dirfd);
/* One record: the fixed part, then `nstrings` NUL-terminated strings (NULL
 * is written as "").  Dropped silently when the run file is not open. */
void ppw_runfile_append(uint32_t kind, const void *fixed, uint32_t fixed_size, int nstrings,
                        const char *const *strings);
/* A PPW_RUN_NOTE, also printed on stderr when `also_log`. */
void ppw_runfile_note(int also_log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A note about lost output (severity 1), said on stderr only if it is the
 * process's first loss (ppw_log_loss). */
void ppw_runfile_note_loss(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ppw_runfile_close(void);
/* fork(): the prepare/parent/child hooks keep the mutex consistent. */
void ppw_runfile_lock(void);
void ppw_runfile_unlock(void);
void ppw_runfile_abandon(void);

#endif
