/* A traced run or job as the trace exports read it, and its MPI messages
 * matched send to receive (export_trace.h). */
#include "export_trace.h"

#include <inttypes.h>
#include <stdlib.h>

#include "job.h"
#include "read_run.h"
#include "ppw/gasp.h"
#include "ppw/gasp_events.h"

static int load_units(struct export_trace *t, const char *dir, bool has_rank, uint32_t rank,
                      struct ppw_err *err)
{
    t->job = ppw_job_is_dir(dir);
    if (!t->job) {
        if (has_rank)
            return ppw_err_set(err, PPW_EUSAGE,
                               "export: --rank needs a job directory, and %s is a "
                               "run directory",
                               dir);
        if (!(t->units = calloc(1, sizeof *t->units)))
            return ppw_err_set(err, PPW_ENOMEM, "out of memory");
        int rc = ppw_run_load(dir, &t->units[0].run, err);
        if (rc)
            return rc;
        t->units[0].pid = t->units[0].run->pid;
        t->nunits = 1;
        return 0;
    }
    struct ppw_job *job = NULL;
    int rc = ppw_job_scan(dir, &job, err);
    if (rc)
        return rc;
    t->job_size = job->size;
    t->missing = job->nmissing;
    if (!(t->units = calloc(job->count ? job->count : 1, sizeof *t->units))) {
        ppw_job_free(job);
        return ppw_err_set(err, PPW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < job->count && !rc; i++) {
        if (has_rank && job->ranks[i].rank != rank)
            continue;
        struct export_trace_unit *u = &t->units[t->nunits];
        if ((rc = ppw_run_load(job->ranks[i].dir, &u->run, err)) == 0) {
            u->pid = job->ranks[i].rank;
            t->nunits++;
        }
    }
    if (!rc && !t->nunits)
        rc = ppw_err_set(err, PPW_ENOTFOUND, "%s: no rank %" PRIu32, dir, rank);
    ppw_job_free(job);
    return rc;
}

int export_trace_load(struct export_trace *t, const char *dir, bool has_rank, uint32_t rank,
                      struct ppw_err *err)
{
    *t = (struct export_trace){0};
    int rc = load_units(t, dir, has_rank, rank, err);
    for (size_t u = 0; !rc && u < t->nunits; u++) {
        const struct ppw_run *run = t->units[u].run;
        uint64_t start = ppw_run_master_ns(run, run->has_info ? run->info.start_mono_ns : 0);
        if (u == 0 || start < t->base)
            t->base = start;
        for (size_t k = 0; k < run->thread_count; k++)
            t->events += run->threads[k].trace_count + run->threads[k].omp_event_count;
    }
    if (!rc && !t->events)
        rc =
            ppw_err_set(err, PPW_ENOTFOUND,
                        "%s has no trace events: run the program with PPW_MODE=profile,trace", dir);
    return rc;
}

void export_trace_free(struct export_trace *t)
{
    for (size_t u = 0; u < t->nunits; u++)
        ppw_run_free(t->units[u].run);
    free(t->units);
    *t = (struct export_trace){0};
}

/* ---- messages ---- */

static int push(struct export_message_end **v, size_t *n, size_t *cap, struct export_message_end m)
{
    if (*n == *cap) {
        size_t grown = *cap ? 2 * *cap : 64;
        struct export_message_end *p = realloc(*v, grown * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = grown;
    }
    (*v)[(*n)++] = m;
    return 0;
}

int export_messages_collect(struct export_messages *m, const struct export_trace *t, size_t u,
                            const struct ppw_run_thread *th)
{
    const struct export_trace_unit *unit = &t->units[u];
    size_t thread = (size_t)(th - unit->run->threads);
    for (size_t i = 0; i < th->trace_count; i++) {
        const struct ppw_run_trace *ev = &th->traces[i];
        const struct ppw_run_region *g = ev->region;
        uint64_t at = ppw_run_master_ns(unit->run, ev->time_ns);
        /* (count, type, peer, tag, comm...; MPI_Sendrecv's receive: the
         * source and tag at 6 and 7, ppw/gasp_events.h) */
        struct export_message_end end = {u, thread, i, unit->pid, 0, 0, at};
        int rc = 0;
        if (ev->evttype == GASP_START && (g->op == PPW_OP_SEND || g->op == PPW_OP_SEND_NB) &&
            ev->nargs >= 4) {
            end.peer = (uint32_t)ev->args[2];
            end.tag = ev->args[3];
            rc = push(&m->sends, &m->nsends, &m->cap_sends, end);
        } else if (ev->evttype == GASP_END && g->op == PPW_OP_RECV && ev->nargs >= 4) {
            end.peer = (uint32_t)ev->args[2];
            end.tag = ev->args[3];
            rc = push(&m->recvs, &m->nrecvs, &m->cap_recvs, end);
        } else if (ev->evttype == GASP_END && g->tag == GASP_MPI_SENDRECV && ev->nargs >= 8) {
            end.peer = (uint32_t)ev->args[6];
            end.tag = ev->args[7];
            rc = push(&m->recvs, &m->nrecvs, &m->cap_recvs, end);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* Sends by (receiver, sender, tag, time), receives by (receiver, sender,
 * tag, time): equal keys line up in the same order in both. */
static int key_cmp(uint32_t to_a, uint32_t from_a, uint64_t tag_a, uint64_t at_a, uint32_t to_b,
                   uint32_t from_b, uint64_t tag_b, uint64_t at_b)
{
    if (to_a != to_b)
        return to_a < to_b ? -1 : 1;
    if (from_a != from_b)
        return from_a < from_b ? -1 : 1;
    if (tag_a != tag_b)
        return tag_a < tag_b ? -1 : 1;
    return (at_a > at_b) - (at_a < at_b);
}

static int send_order(const void *a, const void *b)
{
    const struct export_message_end *x = a, *y = b;
    return key_cmp(x->peer, x->rank, x->tag, x->at, y->peer, y->rank, y->tag, y->at);
}

static int recv_order(const void *a, const void *b)
{
    const struct export_message_end *x = a, *y = b;
    return key_cmp(x->rank, x->peer, x->tag, x->at, y->rank, y->peer, y->tag, y->at);
}

void export_messages_match(struct export_messages *m,
                           void (*matched)(const struct export_message_end *send,
                                           const struct export_message_end *recv, void *ctx),
                           void *ctx)
{
    if (!m->nsends || !m->nrecvs)
        return; /* (and qsort must not see their NULL arrays) */
    qsort(m->sends, m->nsends, sizeof *m->sends, send_order);
    qsort(m->recvs, m->nrecvs, sizeof *m->recvs, recv_order);
    size_t s = 0, r = 0;
    while (s < m->nsends && r < m->nrecvs) {
        const struct export_message_end *send = &m->sends[s], *recv = &m->recvs[r];
        int k = key_cmp(send->peer, send->rank, send->tag, 0, recv->rank, recv->peer, recv->tag, 0);
        if (k < 0) {
            s++; /* a send nobody received in the trace */
            continue;
        }
        if (k > 0) {
            r++; /* a receive from MPI_ANY_SOURCE, or of an untraced send */
            continue;
        }
        s++;
        r++;
        matched(send, recv, ctx);
    }
}

void export_messages_free(struct export_messages *m)
{
    free(m->sends);
    free(m->recvs);
    *m = (struct export_messages){0};
}
