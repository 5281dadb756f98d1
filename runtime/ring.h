/* A perf_event ring buffer read by the thread it samples (docs/runtime.md,
 * "The ring sampler"): the kernel writes each sample there, with its call
 * chain, and wakes the reader once the buffer is half full.  This module
 * maps the buffer and hands out its records; sampler.c decides what they
 * mean. */
#ifndef PPW_RUNTIME_RING_H
#define PPW_RUNTIME_RING_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "sigsafe.h"

struct ppw_ring {
    struct perf_event_mmap_page *page; /* NULL: not mapped */
    uint8_t *data;                     /* the data pages, `size` bytes */
    uint64_t size;                     /* a power of two */
    uint8_t *scratch;                  /* a record that wraps around the end, made whole */
    uint32_t scratch_size;
    uint32_t map_bytes;
};

/* Maps `data_bytes` (a power-of-two multiple of the page size) of event
 * fd's buffer, with room to reassemble records of up to `max_record` bytes.
 * 0, or -errno (EPERM: beyond the locked-memory limit for perf buffers). */
int ppw_ring_map(struct ppw_ring *ring, int fd, uint64_t data_bytes, uint32_t max_record);
void ppw_ring_unmap(struct ppw_ring *ring);
/* In a fork()ed child: the buffer was not copied into it, so only the
 * scratch space is unmapped; ring is left empty. */
void ppw_ring_forget(struct ppw_ring *ring);

/* Calls fn on each record the kernel wrote since the last call, in order,
 * then gives their space back.  Reads at most `limit` records, so that a
 * writer faster than the reader cannot keep it here; returns how many it
 * read.  The caller makes sure only one reader runs at a time. */
typedef void (*ppw_ring_fn)(const struct perf_event_header *record, void *arg);
PPW_SIGSAFE uint32_t ppw_ring_read(struct ppw_ring *ring, uint32_t limit, ppw_ring_fn fn,
                                   void *arg);

/* Whether records are waiting. */
PPW_SIGSAFE int ppw_ring_pending(const struct ppw_ring *ring);

#endif
