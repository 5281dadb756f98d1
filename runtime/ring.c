/* perf_event ring buffers (see ring.h).  The protocol is the kernel's
 * (include/uapi/linux/perf_event.h, "perf_event_mmap_page"): data_head is
 * written by the kernel and read with acquire; the reader frees space by a
 * release store of data_tail. */
#include "ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ppw_ring_map(struct ppw_ring *ring, int fd, uint64_t data_bytes, uint32_t max_record)
{
    memset(ring, 0, sizeof *ring);
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || data_bytes < (uint64_t)page || (data_bytes & (data_bytes - 1)) != 0)
        return -EINVAL;
    uint64_t bytes = (uint64_t)page + data_bytes;
    void *at = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (at == MAP_FAILED)
        return -errno;
    uint32_t scratch = (max_record + (uint32_t)page - 1) & ~((uint32_t)page - 1);
    void *buf = mmap(NULL, scratch, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        int err = errno;
        munmap(at, bytes);
        return -err;
    }
    ring->page = at;
    ring->data = (uint8_t *)at + page;
    ring->size = data_bytes;
    ring->scratch = buf;
    ring->scratch_size = scratch;
    ring->map_bytes = (uint32_t)bytes;
    return 0;
}

void ppw_ring_unmap(struct ppw_ring *ring)
{
    if (ring->page)
        munmap(ring->page, ring->map_bytes);
    if (ring->scratch)
        munmap(ring->scratch, ring->scratch_size);
    memset(ring, 0, sizeof *ring);
}

void ppw_ring_forget(struct ppw_ring *ring)
{
    if (ring->scratch)
        munmap(ring->scratch, ring->scratch_size);
    memset(ring, 0, sizeof *ring);
}

PPW_SIGSAFE int ppw_ring_pending(const struct ppw_ring *ring)
{
    return ring->page && __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE) !=
                             __atomic_load_n(&ring->page->data_tail, __ATOMIC_RELAXED);
}

PPW_SIGSAFE uint32_t ppw_ring_read(struct ppw_ring *ring, uint32_t limit, ppw_ring_fn fn, void *arg)
{
    if (!ring->page)
        return 0;
    uint32_t count = 0;
    uint64_t mask = ring->size - 1;
    uint64_t tail = ring->page->data_tail;
    while (count < limit) {
        uint64_t head = __atomic_load_n(&ring->page->data_head, __ATOMIC_ACQUIRE);
        if (head == tail)
            break;
        while (tail < head && count < limit) {
            struct perf_event_header header;
            uint64_t at = tail & mask;
            /* The 8-byte header never wraps: records are 8-byte aligned. */
            memcpy(&header, ring->data + at, sizeof header);
            if (header.size < sizeof header || tail + header.size > head) {
                tail = head; /* cannot happen with a sane kernel: skip the rest */
                break;
            }
            const struct perf_event_header *record = (const void *)(ring->data + at);
            if (at + header.size > ring->size) {
                if (header.size > ring->scratch_size) {
                    tail += header.size;
                    continue;
                }
                uint64_t first = ring->size - at;
                memcpy(ring->scratch, ring->data + at, first);
                memcpy(ring->scratch + first, ring->data, header.size - first);
                record = (const void *)ring->scratch;
            }
            fn(record, arg);
            tail += header.size;
            count++;
        }
        __atomic_store_n(&ring->page->data_tail, tail, __ATOMIC_RELEASE);
    }
    return count;
}
