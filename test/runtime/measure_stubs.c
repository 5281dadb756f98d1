/* Test stand-ins for the libppw functions measure.c, regions.c and gasp.c
 * need: see measure_stubs.h. */
#include "measure_stubs.h"
#include "descriptors.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "lifecycle.h"
#include "runfile.h"
#include "sampler.h"
#include "stream.h"
#include "thread.h"

struct ppw_config ppw_config;
volatile int ppw_running = 1;

__thread struct ppw_thread *stub_self;
int stub_ensure_calls;
struct ppw_thread *stub_ensure_sets;
int stub_dirfd = -1;
int stub_fake_clock;
uint64_t stub_clock, stub_clock_step;
int stub_reserve_budget = -1;
struct stub_record stub_records[STUB_MAX_RECORDS];
int stub_nrecords;
char stub_notes[STUB_MAX_NOTES][512];
int stub_nnotes;

static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

struct ppw_thread *ppw_thread_self(void)
{
    return stub_self;
}

struct ppw_thread *ppw_thread_swap_self(struct ppw_thread *t)
{
    struct ppw_thread *previous = stub_self;
    stub_self = t;
    return previous;
}

int stub_lifecycle_off;

int ppw_lifecycle_off(void)
{
    return stub_lifecycle_off;
}

void ppw_lifecycle_ensure(void)
{
    stub_ensure_calls++;
    if (stub_ensure_sets)
        stub_self = stub_ensure_sets;
}

int ppw_fd_own(int *slot, enum ppw_fd_owner owner)
{
    (void)slot;
    (void)owner;
    return 0;
}

void ppw_fd_release(int *slot)
{
    (void)slot;
}

void ppw_fd_close(int *slot)
{
    if (*slot >= 0)
        close(*slot);
    *slot = -1;
}

int ppw_output_dirfd(void)
{
    return stub_dirfd;
}

uint64_t ppw_now_ns(void)
{
    if (stub_fake_clock) {
        uint64_t now = stub_clock;
        stub_clock += stub_clock_step;
        return now;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void ppw_sampler_context_change(struct ppw_thread *t)
{
    (void)t; /* no ring sampler here */
}

double ppw_sampler_calibrate_ns(void)
{
    return 0;
}

void ppw_runfile_append(uint32_t kind, const void *fixed, uint32_t fixed_size, int nstrings,
                        const char *const *strings)
{
    pthread_mutex_lock(&capture_lock);
    if (stub_nrecords < STUB_MAX_RECORDS) {
        struct stub_record *r = &stub_records[stub_nrecords++];
        memset(r, 0, sizeof *r);
        r->kind = kind;
        r->fixed_size = fixed_size;
        memcpy(r->fixed, fixed, fixed_size < sizeof r->fixed ? fixed_size : sizeof r->fixed);
        r->nstrings = nstrings;
        for (int i = 0; i < nstrings && i < 2; i++)
            snprintf(r->strings[i], sizeof r->strings[i], "%s", strings[i] ? strings[i] : "");
    }
    pthread_mutex_unlock(&capture_lock);
}

void ppw_runfile_note_loss(const char *fmt, ...)
{
    pthread_mutex_lock(&capture_lock);
    if (stub_nnotes < STUB_MAX_NOTES) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(stub_notes[stub_nnotes++], sizeof stub_notes[0], fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&capture_lock);
}

void ppw_runfile_note(int also_log, const char *fmt, ...)
{
    (void)also_log;
    pthread_mutex_lock(&capture_lock);
    if (stub_nnotes < STUB_MAX_NOTES) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(stub_notes[stub_nnotes++], sizeof stub_notes[0], fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&capture_lock);
}

void ppw_file_header_init(struct ppw_file_header *h, uint32_t kind, uint32_t thread)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, PPW_RUN_MAGIC, 4);
    h->major = PPW_RUN_MAJOR;
    h->minor = PPW_RUN_MINOR;
    h->kind = kind;
    h->header_size = PPW_RUN_HEADER_SIZE;
    h->pid = (uint32_t)getpid();
    h->thread = thread;
}

int ppw_file_reserve(int fd, uint64_t offset, uint64_t len)
{
    if (stub_reserve_budget == 0)
        return -ENOSPC;
    if (stub_reserve_budget > 0)
        stub_reserve_budget--;
    int err = posix_fallocate(fd, (off_t)offset, (off_t)len);
    return -err;
}

/* Streams: window is a malloc'd buffer, end the bytes used. */
static uint32_t pending;

struct ppw_stream *ppw_thread_events(struct ppw_thread *t)
{
    if (!t->events_open) {
        t->events.window = calloc(1, STUB_STREAM_SIZE);
        if (!t->events.window)
            return NULL;
        t->events.window_size = STUB_STREAM_SIZE;
        t->events.end = 0;
        t->events_open = 1;
    }
    return &t->events;
}

void *ppw_stream_reserve(struct ppw_stream *s, uint32_t kind, uint32_t body_size)
{
    uint32_t size = (uint32_t)sizeof(struct ppw_rec_frame) + ((body_size + 7) & ~7u);
    if (s->end + size > s->window_size)
        return NULL;
    struct ppw_rec_frame *f = (struct ppw_rec_frame *)(s->window + s->end);
    f->kind = kind;
    f->size = size;
    pending = size;
    return f + 1;
}

void ppw_stream_commit(struct ppw_stream *s)
{
    s->end += pending;
    pending = 0;
}

/* gasp.c refreshes the module map after dlopen/dlclose events. */
int stub_rescans;
void ppw_modules_rescan(void)
{
    stub_rescans++;
}
