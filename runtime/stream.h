/* File-backed record streams.  A stream is one file of the run directory,
 * written through a shared mapping: a record is complete the moment
 * `committed` in the header moves past it, and stays readable whatever
 * happens to the process afterwards (SIGKILL included).  Space is reserved
 * with fallocate (64 KiB at a time) before a record is written to it, so a
 * full disk shows up as a failed reserve, never as SIGBUS; the mapped
 * window may reach past the end of the file, where nothing is written. */
#ifndef PPW_RUNTIME_STREAM_H
#define PPW_RUNTIME_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "ppw/run_format.h"
#include "sigsafe.h"

struct ppw_stream {
    int is_open;
    int dirfd;                      /* the run directory; no descriptor of the file itself
                                       is kept: threads must not eat the program's fds */
    char name[32];
    struct ppw_file_header *header; /* page 0, mapped for the stream's life */
    uint8_t *window;                /* mapping of [window_off, window_off + window_size) */
    uint64_t window_off;
    size_t window_size;
    uint64_t end;                   /* file offset where the next record goes */
    uint64_t pending;               /* end of the record reserved, not yet committed */
    uint64_t reserved_end;          /* file space allocated so far */
    int failed;                     /* could not grow: further appends are dropped */
    uint32_t crc;                   /* CRC32C of the records in [sum_from, end), but the open one */
    uint64_t sum_from;              /* where the bytes the next CHECKSUM covers start */
    uint64_t open_at;               /* the open record's offset (filled after its commit); 0: none */
};

/* Creates dirfd/name with a common header (kind, thread index, build-id).
 * window: bytes mapped at a time (rounded to pages).  0 or -errno. */
int ppw_stream_open(struct ppw_stream *s, int dirfd, const char *name, uint32_t kind,
                    uint32_t thread, size_t window);

/* Room for one record of body_size bytes: writes the frame and returns the
 * body, or NULL when the file cannot grow.  Nothing is visible to readers
 * until ppw_stream_commit.  One writer per stream. */
PPW_SIGSAFE void *ppw_stream_reserve(struct ppw_stream *s, uint32_t kind, uint32_t body_size);
PPW_SIGSAFE void ppw_stream_commit(struct ppw_stream *s);

/* An open record (the sampler's BLOCK): committed empty, then filled in
 * place by its writer, which publishes each part itself.  Its bytes join
 * the checksum only when it is closed, so that they may change until then.
 * Opening commits the reserved record; reserving another record, or
 * closing the stream, closes it first.  While it is open the window does
 * not move, so pointers into it stay valid. */
PPW_SIGSAFE void ppw_stream_commit_open(struct ppw_stream *s);
PPW_SIGSAFE void ppw_stream_close_open(struct ppw_stream *s);

/* reserve + copy + commit.  0 or -ENOSPC. */
PPW_SIGSAFE int ppw_stream_append(struct ppw_stream *s, uint32_t kind, const void *body,
                                  uint32_t body_size);

/* Marks the file closed, trims the unused preallocation, unmaps, closes. */
void ppw_stream_close(struct ppw_stream *s);
/* Drops the mappings and descriptor without touching the file: for a
 * fork()ed child, whose inherited streams belong to the parent. */
void ppw_stream_abandon(struct ppw_stream *s);

/* Shared by streams and profile files: fills a common header. */
void ppw_file_header_init(struct ppw_file_header *h, uint32_t kind, uint32_t thread);
/* Reserves [offset, offset+len) on disk: fallocate, within RLIMIT_FSIZE
 * (checked first, so the kernel never sends SIGXFSZ).  0 or -errno. */
PPW_SIGSAFE int ppw_file_reserve(int fd, uint64_t offset, uint64_t len);

#endif
