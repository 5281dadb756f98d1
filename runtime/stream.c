/* File-backed record streams (see stream.h).  The writer owns `end`; the
 * header's `committed` follows it with a release store, so a reader (or a
 * post-mortem look at a killed run) sees only complete records. */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lifecycle.h"
#include "ppw/crc32c.h"
#include "log.h"

#define PAGE 4096u
/* Disk space is reserved a page first, then as much again as the file
 * holds, up to RESERVE_MAX at a time: most files of a short run (its
 * threads' events and samples, run.ppw) fit in their first page, and
 * closing one then trims no block.  A trim that frees blocks cost about
 * 0.3 ms here (ext4 mounted with discard, which discards them at once):
 * files that started at 64 KiB made it 1.3 ms of a short 2-thread run. */
#define RESERVE_MAX (1024u * 1024)

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

/* The next reservation's unit for a file reserved up to `reserved`: the
 * largest power of two in it, from a page to RESERVE_MAX. */
PPW_SIGSAFE static uint64_t reserve_step(uint64_t reserved)
{
    uint64_t step = PAGE;
    while (step < RESERVE_MAX && step * 2 <= reserved)
        step *= 2;
    return step;
}

void ppw_file_header_init(struct ppw_file_header *h, uint32_t kind, uint32_t thread)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, PPW_RUN_MAGIC, 4);
    h->major = PPW_RUN_MAJOR;
    h->minor = PPW_RUN_MINOR;
    h->kind = kind;
    h->header_size = PPW_RUN_HEADER_SIZE;
    h->pid = (uint32_t)getpid();
    h->thread = thread;
    uint32_t size;
    const uint8_t *id = ppw_build_id(&size);
    if (size > PPW_BUILD_ID_MAX)
        size = PPW_BUILD_ID_MAX;
    memcpy(h->build_id, id, size);
    h->build_id_size = size;
}

int ppw_file_reserve(int fd, uint64_t offset, uint64_t len)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
        offset + len > (uint64_t)limit.rlim_cur)
        return -EFBIG;
    if (fallocate(fd, 0, (off_t)offset, (off_t)len) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -errno;
    /* No fallocate here (some network filesystems): a sparse extension,
     * which a full disk could still turn into SIGBUS later. */
    return ftruncate(fd, (off_t)(offset + len)) == 0 ? 0 : -errno;
}

int ppw_stream_open(struct ppw_stream *s, int dirfd, const char *name, uint32_t kind,
                    uint32_t thread, size_t window)
{
    memset(s, 0, sizeof(*s));
    s->is_open = 0;
    if (strlen(name) >= sizeof(s->name))
        return -ENAMETOOLONG;
    s->window_size = (size_t)align_up(window < 4 * PAGE ? 4 * PAGE : window, PAGE);
    int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    uint64_t first = PAGE;
    int rc = ppw_file_reserve(fd, 0, first);
    if (rc != 0)
        goto fail;
    s->header = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->header == MAP_FAILED) {
        rc = -errno;
        goto fail;
    }
    s->window = mmap(NULL, s->window_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s->window == MAP_FAILED) {
        rc = -errno;
        munmap(s->header, PAGE);
        goto fail;
    }
    close(fd); /* the mappings keep the file; make_room() reopens it by name */
    ppw_file_header_init(s->header, kind, thread);
    s->header->flags |= PPW_FILE_CHECKSUMMED;
    s->is_open = 1;
    s->dirfd = dirfd;
    strcpy(s->name, name);
    s->window_off = 0;
    s->end = PPW_RUN_HEADER_SIZE;
    s->sum_from = PPW_RUN_HEADER_SIZE;
    s->crc = 0;
    s->open_at = 0;
    s->reserved_end = first;
    return 0;
fail:
    close(fd);
    unlinkat(dirfd, name, 0);
    s->header = NULL;
    s->window = NULL;
    return rc;
}

/* The run directory now: the output directory's descriptor may have moved
 * to another number (descriptors.h: a dup2 onto its number). */
PPW_SIGSAFE static int stream_dir(const struct ppw_stream *s)
{
    int now = ppw_output_dirfd();
    return now >= 0 ? now : s->dirfd;
}

/* Makes [end, end + total) writable: reserves disk space up to it, a step
 * at a time (or just what is needed, when a step does not fit), and moves
 * the window to the page holding `end` when the record lies beyond it.
 * The window may extend past the end of the file; nothing is written there
 * before it is reserved.  0 or -errno; system calls only. */
PPW_SIGSAFE static int make_room(struct ppw_stream *s, uint64_t total)
{
    uint64_t need = s->end + total;
    int move = need > s->window_off + s->window_size;
    if (!move && need <= s->reserved_end)
        return 0;
    /* openat is async-signal-safe; O_NOFOLLOW: never write through a
     * symlink planted in the output directory. */
    int fd = openat(stream_dir(s), s->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (need > s->reserved_end) {
        uint64_t upto = align_up(need, reserve_step(s->reserved_end));
        rc = ppw_file_reserve(fd, s->reserved_end, upto - s->reserved_end);
        if (rc != 0 && upto > need) {
            upto = need;
            rc = ppw_file_reserve(fd, s->reserved_end, upto - s->reserved_end);
        }
        if (rc != 0)
            goto out;
        s->reserved_end = upto;
    }
    if (move) {
        uint64_t off = s->end & ~(uint64_t)(PAGE - 1);
        void *w = mmap(NULL, s->window_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
        if (w == MAP_FAILED) {
            rc = -errno;
            goto out;
        }
        munmap(s->window, s->window_size);
        s->window = w;
        s->window_off = off;
    }
out:
    close(fd);
    return rc;
}

/* strerror is not async-signal-safe: the reasons a file stops growing. */
PPW_SIGSAFE static const char *loss_reason(int err)
{
    switch (err) {
    case ENOSPC: return "no space left on device";
    case EFBIG: return "the file size limit (RLIMIT_FSIZE) is reached";
    case EDQUOT: return "disk quota exceeded";
    case ENOMEM: return "out of memory";
    default: return "cannot extend the file";
    }
}

void *ppw_stream_reserve(struct ppw_stream *s, uint32_t kind, uint32_t body_size)
{
    if (!s->is_open || s->failed)
        return NULL;
    ppw_stream_close_open(s);
    uint64_t total = align_up((uint64_t)body_size + sizeof(struct ppw_rec_frame), 8);
    if (total > s->window_size - PAGE)
        return NULL;
    int rc = make_room(s, total);
    if (rc != 0) {
        s->failed = 1;
        ppw_log_loss("cannot grow %s: %s; its later records are dropped and counted", s->name,
                     loss_reason(-rc));
        return NULL;
    }
    uint8_t *at = s->window + (s->end - s->window_off);
    struct ppw_rec_frame *frame = (struct ppw_rec_frame *)at;
    frame->kind = kind;
    frame->size = (uint32_t)total;
    /* Padding is zeroed so files are deterministic. */
    memset(at + sizeof(*frame) + body_size, 0, total - sizeof(*frame) - body_size);
    s->pending = s->end + total;
    return at + sizeof(*frame);
}

/* Publishes the reserved record: `committed` moves past it. */
PPW_SIGSAFE static void publish(struct ppw_stream *s)
{
    s->end = s->pending;
    __atomic_store_n(&s->header->committed, s->end - PPW_RUN_HEADER_SIZE, __ATOMIC_RELEASE);
}

/* Appends a CHECKSUM record over [sum_from, end) and starts the next block.
 * A file that cannot grow keeps its last block unchecked. */
PPW_SIGSAFE static void seal_block(struct ppw_stream *s)
{
    uint32_t crc = s->crc;
    uint64_t from = s->sum_from;
    struct ppw_rec_checksum *c = ppw_stream_reserve(s, PPW_REC_CHECKSUM, sizeof(*c));
    if (!c)
        return;
    c->crc32c = crc;
    c->reserved = 0;
    c->from = from;
    publish(s);
    s->sum_from = s->end;
    s->crc = 0;
}

void ppw_stream_commit_open(struct ppw_stream *s)
{
    if (!s->is_open || s->pending <= s->end)
        return;
    s->open_at = s->end;
    publish(s);
}

void ppw_stream_close_open(struct ppw_stream *s)
{
    if (!s->is_open || !s->open_at)
        return;
    s->crc = ppw_crc32c(s->crc, s->window + (s->open_at - s->window_off), s->end - s->open_at);
    s->open_at = 0;
    if (s->end - s->sum_from >= PPW_CHECKSUM_BLOCK)
        seal_block(s);
}

void ppw_stream_commit(struct ppw_stream *s)
{
    if (!s->is_open || s->pending <= s->end)
        return;
    /* The record is in the window now (reserve put it there); a later
     * block's checksum could not read it back once the window moved. */
    s->crc = ppw_crc32c(s->crc, s->window + (s->end - s->window_off), s->pending - s->end);
    publish(s);
    if (s->end - s->sum_from >= PPW_CHECKSUM_BLOCK)
        seal_block(s);
}

int ppw_stream_append(struct ppw_stream *s, uint32_t kind, const void *body, uint32_t body_size)
{
    void *at = ppw_stream_reserve(s, kind, body_size);
    if (!at)
        return -ENOSPC;
    memcpy(at, body, body_size);
    ppw_stream_commit(s);
    return 0;
}

void ppw_stream_close(struct ppw_stream *s)
{
    if (!s->is_open)
        return;
    ppw_stream_close_open(s);
    if (s->end > s->sum_from)
        seal_block(s);
    s->header->flags |= PPW_FILE_CLOSED;
    /* Give back the preallocated tail; harmless if it fails, since readers
     * stop at committed. */
    int fd = openat(stream_dir(s), s->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        if (ftruncate(fd, (off_t)s->end) != 0) {
        }
        close(fd);
    }
    ppw_stream_abandon(s);
}

void ppw_stream_abandon(struct ppw_stream *s)
{
    if (!s->is_open)
        return;
    munmap(s->window, s->window_size);
    munmap(s->header, PAGE);
    s->is_open = 0;
    s->window = NULL;
    s->header = NULL;
}
