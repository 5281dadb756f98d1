/* Chrome trace-event JSON of a traced run or job (export.h): the format of
 * chrome://tracing and Perfetto ("Trace Event Format", the JSON Object
 * form).  Each rank (or the run's process) is a pid, each thread a tid; a
 * thread's life is a complete slice, GASP regions are B/E slices inside
 * it, ATOMIC events instants, OpenMP implicit tasks and task stretches
 * complete slices; flows join a creating thread to the thread it created,
 * an OpenMP region's or task's spawn to the threads that ran it, and an
 * MPI send to the receive that took its message.  Times
 * are microseconds on rank 0's clock (the drift model), from the earliest
 * start. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "export_trace.h"
#include "json.h"
#include "read_run.h"
#include "ppw/gasp.h"
#include "ppw/gasp_events.h"
#include "names.h"

struct chrome {
    FILE *out;
    struct export_trace trace;
    bool first;        /* no event written yet */
    uint64_t flow_ids; /* the last flow id used */
};

static void ts(struct chrome *c, const struct ppw_run *run, uint64_t local_ns)
{
    uint64_t t = ppw_run_master_ns(run, local_ns);
    fputs(",\"ts\":", c->out);
    json_double(c->out, t > c->trace.base ? (double)(t - c->trace.base) / 1e3 : 0);
}

/* Opens an event object: {"ph":PH,"pid":..,"tid":.. (the caller adds the
 * rest and the closing brace). */
static void event(struct chrome *c, const char *ph, uint32_t pid, uint32_t tid)
{
    fprintf(c->out, "%s\n{\"ph\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, c->first ? "" : ",",
            ph, pid, tid);
    c->first = false;
}

static void metadata(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
                     const char *name)
{
    event(c, "M", pid, tid);
    fprintf(c->out, ",\"name\":\"%s\",\"args\":{\"name\":", what);
    json_string(c->out, name);
    fputs("}}", c->out);
}

static uint64_t thread_end(const struct ppw_run *run, const struct ppw_run_thread *th)
{
    if (th->ended)
        return th->end_ns;
    uint64_t end = run->finished ? run->finish_end_ns : th->start_ns;
    for (size_t i = 0; i < th->trace_count; i++)
        end = th->traces[i].time_ns > end ? th->traces[i].time_ns : end;
    return end;
}

static void write_thread(struct chrome *c, const struct export_trace_unit *u,
                         const struct ppw_run_thread *th)
{
    const struct ppw_run *run = u->run;
    char name[64];
    snprintf(name, sizeof name, "thread %" PRIu32, th->index);
    metadata(c, "thread_name", u->pid, th->index, name);
    event(c, "M", u->pid, th->index);
    fprintf(c->out, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%" PRIu32 "}}",
            th->index);
    if (th->has_begin) { /* the thread's life: where flows from its creator land */
        uint64_t end = thread_end(run, th);
        event(c, "X", u->pid, th->index);
        fprintf(c->out, ",\"name\":\"%s\",\"cat\":\"thread\"", name);
        ts(c, run, th->start_ns);
        fputs(",\"dur\":", c->out);
        json_double(c->out, end > th->start_ns ? (double)(end - th->start_ns) / 1e3 : 0);
        putc('}', c->out);
        if (th->parent != UINT32_MAX) {
            uint64_t id = ++c->flow_ids;
            event(c, "s", u->pid, th->parent);
            fprintf(c->out, ",\"name\":\"create\",\"cat\":\"spawn\",\"id\":%" PRIu64, id);
            ts(c, run, th->start_ns);
            putc('}', c->out);
            event(c, "f", u->pid, th->index);
            fprintf(c->out, ",\"name\":\"create\",\"cat\":\"spawn\",\"bp\":\"e\",\"id\":%" PRIu64,
                    id);
            ts(c, run, th->start_ns);
            putc('}', c->out);
        }
    }
    for (size_t i = 0; i < th->trace_count; i++) {
        const struct ppw_run_trace *ev = &th->traces[i];
        const char *ph = ev->evttype == GASP_START ? "B" : ev->evttype == GASP_END ? "E" : "i";
        event(c, ph, u->pid, th->index);
        fputs(",\"name\":", c->out);
        char name[512]; /* outlined code by its source function, from the run alone */
        const char *shown = ppw_names_region(NULL, ev->region->name, ev->region->file,
                                             ev->region->line, name, sizeof name);
        json_string(c->out, shown ? shown : "?");
        fputs(",\"cat\":", c->out);
        json_string(c->out, ppw_run_op_name(ev->region->op));
        ts(c, run, ev->time_ns);
        if (*ph == 'i')
            fputs(",\"s\":\"t\"", c->out);
        if (*ph != 'E' && (ev->region->file || ev->nargs || ev->description)) {
            fputs(",\"args\":{", c->out);
            const char *sep = "";
            if (ev->region->file) {
                fputs("\"location\":", c->out);
                char where[512];
                snprintf(where, sizeof where, "%s:%" PRIu32, ev->region->file, ev->region->line);
                json_string(c->out, where);
                sep = ",";
            }
            if (ev->nargs) {
                fprintf(c->out, "%s\"operands\":[", sep);
                for (uint16_t a = 0; a < ev->nargs; a++)
                    fprintf(c->out, "%s%" PRIu64, a ? "," : "", ev->args[a]);
                putc(']', c->out);
                sep = ",";
            }
            if (ev->description) {
                fprintf(c->out, "%s\"description\":", sep);
                json_string(c->out, ev->description);
            }
            putc('}', c->out);
        }
        putc('}', c->out);
    }
}

/* ---- OpenMP work (PPW_EVT_OMP) ---- */

/* Where an OpenMP parallel region or task was spawned. */
struct omp_spawn {
    uint64_t at; /* local ns; 0: no spawn record */
    uint32_t tid, event;
    bool flowed; /* a task's flow is drawn once, to where it first runs */
};

/* A flow from the spawn to where its work begins. */
static void omp_flow(struct chrome *c, const struct export_trace_unit *u,
                     const struct omp_spawn *from, uint32_t tid, uint64_t at)
{
    uint64_t id = ++c->flow_ids;
    event(c, "s", u->pid, from->tid);
    fprintf(c->out, ",\"name\":\"spawn\",\"cat\":\"omp\",\"id\":%" PRIu64, id);
    ts(c, u->run, from->at);
    putc('}', c->out);
    event(c, "f", u->pid, tid);
    fprintf(c->out, ",\"name\":\"spawn\",\"cat\":\"omp\",\"bp\":\"e\",\"id\":%" PRIu64, id);
    ts(c, u->run, at > from->at ? at : from->at);
    putc('}', c->out);
}

/* One stretch of OpenMP work on a thread, as a complete slice. */
static void omp_slice(struct chrome *c, const struct export_trace_unit *u, uint32_t tid,
                      const struct ppw_run_omp_event *begin, uint64_t end_ns, bool task)
{
    event(c, "X", u->pid, tid);
    fprintf(c->out, ",\"name\":\"%s\",\"cat\":\"omp\"", task ? "omp task" : "omp parallel");
    ts(c, u->run, begin->time_ns);
    fputs(",\"dur\":", c->out);
    json_double(c->out, end_ns > begin->time_ns ? (double)(end_ns - begin->time_ns) / 1e3 : 0);
    fprintf(c->out, ",\"args\":{\"instance\":%" PRIu32 ",\"spawn_tag\":%" PRIu32 "}}",
            begin->instance, begin->tag);
}

/* Each thread's implicit tasks and task stretches as slices (BEGIN to its
 * END, nested as they ran), and a flow from each spawn to each thread that
 * ran the region, or to where the task first ran.  0, or -1 out of memory. */
static int write_omp(struct chrome *c, const struct export_trace_unit *u)
{
    const struct ppw_run *run = u->run;
    uint32_t max = 0;
    for (size_t t = 0; t < run->thread_count; t++)
        for (size_t k = 0; k < run->threads[t].omp_event_count; k++)
            if (run->threads[t].omp_events[k].instance > max)
                max = run->threads[t].omp_events[k].instance;
    if (!max)
        return 0;
    struct omp_spawn *spawns = calloc((size_t)max + 1, sizeof *spawns);
    if (!spawns)
        return -1;
    for (size_t t = 0; t < run->thread_count; t++) {
        const struct ppw_run_thread *th = &run->threads[t];
        for (size_t k = 0; k < th->omp_event_count; k++) {
            const struct ppw_run_omp_event *e = &th->omp_events[k];
            if (e->event == PPW_OMP_SPAWN_PARALLEL || e->event == PPW_OMP_SPAWN_TASK)
                spawns[e->instance] = (struct omp_spawn){e->time_ns, th->index, e->event, false};
        }
    }
    enum { DEPTH = 64 };
    for (size_t t = 0; t < run->thread_count; t++) {
        const struct ppw_run_thread *th = &run->threads[t];
        const struct ppw_run_omp_event *open[DEPTH];
        size_t depth = 0;
        for (size_t k = 0; k < th->omp_event_count; k++) {
            const struct ppw_run_omp_event *e = &th->omp_events[k];
            struct omp_spawn *from = &spawns[e->instance];
            bool task = from->event == PPW_OMP_SPAWN_TASK;
            if (e->event == PPW_OMP_BEGIN) {
                if (from->at && !(task && from->flowed))
                    omp_flow(c, u, from, th->index, e->time_ns);
                from->flowed = true;
                if (depth < DEPTH)
                    open[depth++] = e;
            } else if (e->event == PPW_OMP_END) {
                /* the innermost open stretch of this instance, and those
                 * above it, which lost their END, close here */
                size_t d = depth;
                while (d > 0 && open[d - 1]->instance != e->instance)
                    d--;
                while (d > 0 && depth >= d) {
                    const struct ppw_run_omp_event *b = open[--depth];
                    omp_slice(c, u, th->index, b, e->time_ns,
                              spawns[b->instance].event == PPW_OMP_SPAWN_TASK);
                }
            }
        }
        uint64_t end = thread_end(run, th);
        while (depth > 0) { /* still running when the trace ends */
            const struct ppw_run_omp_event *b = open[--depth];
            omp_slice(c, u, th->index, b, end, spawns[b->instance].event == PPW_OMP_SPAWN_TASK);
        }
    }
    free(spawns);
    return 0;
}

/* A flow from a send's START to the end of the receive that took it. */
static void write_message(const struct export_message_end *send,
                          const struct export_message_end *recv, void *ctx)
{
    struct chrome *c = ctx;
    const struct export_trace_unit *units = c->trace.units;
    uint64_t id = ++c->flow_ids, base = c->trace.base;
    event(c, "s", send->rank, units[send->unit].run->threads[send->thread].index);
    fprintf(c->out, ",\"name\":\"message\",\"cat\":\"mpi\",\"id\":%" PRIu64 ",\"ts\":", id);
    json_double(c->out, send->at > base ? (double)(send->at - base) / 1e3 : 0);
    putc('}', c->out);
    event(c, "f", recv->rank, units[recv->unit].run->threads[recv->thread].index);
    fprintf(c->out,
            ",\"name\":\"message\",\"cat\":\"mpi\",\"bp\":\"e\",\"id\":%" PRIu64 ",\"ts\":", id);
    /* a receive ends after its send began; clock error may say otherwise */
    uint64_t at = recv->at > send->at ? recv->at : send->at;
    json_double(c->out, at > base ? (double)(at - base) / 1e3 : 0);
    putc('}', c->out);
}

int export_chrome(FILE *out, const char *dir, bool has_rank, uint32_t rank, struct ppw_err *err)
{
    struct chrome c = {.out = out, .first = true};
    struct export_messages messages = {0};
    int rc = export_trace_load(&c.trace, dir, has_rank, rank, err);
    if (!rc) {
        fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"ppw-blame export\","
              "\"source\":",
              out);
        json_string(out, dir);
        fputs("},\"traceEvents\":[", out);
        for (size_t u = 0; u < c.trace.nunits && !rc; u++) {
            const struct export_trace_unit *unit = &c.trace.units[u];
            const struct ppw_run *run = unit->run;
            char name[96];
            if (c.trace.job)
                snprintf(name, sizeof name, "rank %" PRIu32 " (pid %" PRIu32 ")", unit->pid,
                         run->pid);
            else
                snprintf(name, sizeof name, "pid %" PRIu32, run->pid);
            metadata(&c, "process_name", unit->pid, 0, name);
            for (size_t t = 0; t < run->thread_count && !rc; t++) {
                const struct ppw_run_thread *th = &run->threads[t];
                write_thread(&c, unit, th);
                if (export_messages_collect(&messages, &c.trace, u, th))
                    rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
            }
            if (!rc && write_omp(&c, unit) != 0)
                rc = ppw_err_set(err, PPW_ENOMEM, "out of memory");
        }
        if (!rc)
            export_messages_match(&messages, write_message, &c);
        fputs("\n]}\n", out);
    }
    export_messages_free(&messages);
    export_trace_free(&c.trace);
    return rc;
}
