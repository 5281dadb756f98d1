/* run.ppw, the process-level stream.  Appends come from any thread in
 * normal context, so a mutex serializes them. */
#include "runfile.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "stream.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ppw_stream run;

int ppw_runfile_open(int dirfd)
{
    pthread_mutex_lock(&lock);
    int rc = ppw_stream_open(&run, dirfd, "run.ppw", PPW_FILE_RUN, UINT32_MAX, 256 * 1024);
    pthread_mutex_unlock(&lock);
    return rc;
}

void ppw_runfile_append(uint32_t kind, const void *fixed, uint32_t fixed_size, int nstrings,
                        const char *const *strings)
{
    uint64_t total = fixed_size;
    for (int i = 0; i < nstrings; i++)
        total += (strings[i] ? strlen(strings[i]) : 0) + 1;
    if (total > 128 * 1024)
        return; /* an absurd environment entry; the window could not hold it */
    pthread_mutex_lock(&lock);
    uint8_t *at = ppw_stream_reserve(&run, kind, (uint32_t)total);
    if (at) {
        memcpy(at, fixed, fixed_size);
        at += fixed_size;
        for (int i = 0; i < nstrings; i++) {
            size_t n = strings[i] ? strlen(strings[i]) : 0;
            memcpy(at, strings[i] ? strings[i] : "", n);
            at[n] = '\0';
            at += n + 1;
        }
        ppw_stream_commit(&run);
    }
    pthread_mutex_unlock(&lock);
}

void ppw_runfile_note(int also_log, const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    if (also_log)
        ppw_log("%s", message);
    uint32_t fixed[2] = {also_log ? 1u : 0u, 0};
    const char *strings[1] = {message};
    ppw_runfile_append(PPW_RUN_NOTE, fixed, sizeof(fixed), 1, strings);
}

void ppw_runfile_note_loss(const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    ppw_log_loss("%s", message);
    uint32_t fixed[2] = {1, 0};
    const char *strings[1] = {message};
    ppw_runfile_append(PPW_RUN_NOTE, fixed, sizeof(fixed), 1, strings);
}

void ppw_runfile_close(void)
{
    pthread_mutex_lock(&lock);
    ppw_stream_close(&run);
    pthread_mutex_unlock(&lock);
}

void ppw_runfile_lock(void)
{
    pthread_mutex_lock(&lock);
}

void ppw_runfile_unlock(void)
{
    pthread_mutex_unlock(&lock);
}

void ppw_runfile_abandon(void)
{
    /* The child holds the lock from the prepare hook; a fresh one is safer
     * than unlocking a mutex whose owner thread no longer exists. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    lock = fresh;
    ppw_stream_abandon(&run);
}
