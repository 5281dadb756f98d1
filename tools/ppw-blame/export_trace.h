/* What the trace exports (Chrome trace-event JSON, OTF2) share: a traced
 * run or MPI job loaded as units (a rank, or the run's one process), and
 * its MPI messages, each send matched to the receive that took it. */
#ifndef PPW_BLAME_EXPORT_TRACE_H
#define PPW_BLAME_EXPORT_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ppw_run;
struct ppw_run_thread;

struct export_trace_unit {
    struct ppw_run *run;
    uint32_t pid; /* the rank in a job, else the process id */
};

struct export_trace {
    struct export_trace_unit *units; /* a job's in rank order */
    size_t nunits;
    bool job;
    uint32_t job_size; /* a job's size (its MPI records, else the highest rank + 1); 0: a run */
    size_t missing;    /* ranks below job_size without a run directory */
    uint64_t base;     /* rank 0's clock (ns) at the earliest unit's start */
    uint64_t events;   /* trace and OpenMP events of all units */
};

/* Loads the run or job directory dir (only rank `rank` when has_rank).
 * Errors: those of reading the runs (a rank that cannot be read is one:
 * a trace missing a rank would show its partners waiting for nobody),
 * PPW_EUSAGE (--rank on a run directory), PPW_ENOTFOUND (no such rank,
 * or no trace events at all: the message says how to record them),
 * PPW_ENOMEM.  export_trace_free frees what was loaded, also after an
 * error. */
int export_trace_load(struct export_trace *t, const char *dir, bool has_rank, uint32_t rank,
                      struct ppw_err *err);
void export_trace_free(struct export_trace *t);

/* One end of a message: the unit (index into units), thread (index into
 * its run's threads) and trace event (index into the thread's traces)
 * that sent or received it; the rank, the peer and tag it names; when,
 * on rank 0's clock. */
struct export_message_end {
    size_t unit, thread, event;
    uint32_t rank, peer;
    uint64_t tag, at;
};

/* Messages' ends, sends at their START and receives at their END
 * (MPI_Sendrecv is both), collected thread by thread, then matched. */
struct export_messages {
    struct export_message_end *sends, *recvs;
    size_t nsends, nrecvs, cap_sends, cap_recvs;
};

/* Adds the ends of every message of unit u's thread th.  -1 when out of
 * memory. */
int export_messages_collect(struct export_messages *m, const struct export_trace *t, size_t u,
                            const struct ppw_run_thread *th);

/* Calls matched(send, recv, ctx) for each message, in order per (receiver,
 * sender, tag): the k-th send to a receiver with a tag matches its k-th
 * receive from that sender with that tag (MPI's non-overtaking rule).
 * Sends nobody received in the trace and receives from MPI_ANY_SOURCE or
 * of untraced sends are left out.  Communicators are not compared: their
 * handles are addresses of each process's own, so peers are read as
 * ranks of MPI_COMM_WORLD.  Sorts the ends. */
void export_messages_match(struct export_messages *m,
                           void (*matched)(const struct export_message_end *send,
                                           const struct export_message_end *recv, void *ctx),
                           void *ctx);
void export_messages_free(struct export_messages *m);

#endif
