/* Decoders of the run directory's records (docs/FORMATS.md, "Run
 * directory"): run.ppw's process-level records, and each thread's samples,
 * events and profile files.  Framing is checked by read_run.c; here every
 * record's body is checked against its kind's minimum size, and every
 * string, array and id it holds against its record or the run. */
#define _POSIX_C_SOURCE 200809L

#include "read_run_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

/* ---- record bodies ---- */

/* Copies the NUL-terminated string at body[*at] into the arena. */
static int take_string(struct loader *l, const struct rec *r, size_t *at, const char *what,
                       const char **out)
{
    const unsigned char *start = r->body + *at;
    const unsigned char *nul = *at < r->body_size ? memchr(start, 0, r->body_size - *at) : NULL;
    if (!nul)
        return CORRUPT(l, r->pos + 8 + *at, "%s: string runs past the end of its %zu-byte record",
                       what, r->size);
    size_t len = (size_t)(nul - start);
    char *copy = ppw_arena_alloc(l->run->arena, len + 1);
    if (!copy)
        return ppw_run_no_memory(l);
    memcpy(copy, start, len + 1);
    *out = copy;
    *at += len + 1;
    return 0;
}

/* Copies count u64 values starting at body[at] into the arena. */
static int take_u64s(struct loader *l, const struct rec *r, size_t at, size_t count,
                     const char *what, const uint64_t **out)
{
    if (at > r->body_size || count > (r->body_size - at) / 8)
        return CORRUPT(l, r->pos + 4, "%s: %zu 64-bit values do not fit in the %zu-byte record",
                       what, count, r->size);
    *out = NULL;
    if (count == 0)
        return 0;
    uint64_t *values = ppw_arena_alloc(l->run->arena, count * sizeof *values);
    if (!values)
        return ppw_run_no_memory(l);
    for (size_t i = 0; i < count; i++)
        values[i] = get_u64(r->body + at + 8 * i);
    *out = values;
    return 0;
}

static int check_body(struct loader *l, const struct rec *r, size_t need, const char *what)
{
    if (r->body_size < need)
        return CORRUPT(l, r->pos + 4, "%s record of %zu bytes is shorter than its %zu-byte minimum",
                       what, r->size, need + 8);
    return 0;
}

/* Sets *out (out is the address of a T *) to count zeroed items of size
 * bytes from the arena, NULL when count is 0. */
static int alloc_array(struct loader *l, size_t count, size_t size, void *out)
{
    void *items = count ? ppw_arena_calloc(l->run->arena, count, size) : NULL;
    if (count && !items)
        return ppw_run_no_memory(l);
    memcpy(out, &items, sizeof items);
    return 0;
}

/* ---- run.ppw ---- */

static int read_info(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_run_info T;
    struct ppw_run_info *info = &l->run->info;
    if (l->run->has_info)
        return CORRUPT(l, r->pos, "a second RUN_INFO record");
    int rc = check_body(l, r, sizeof(T), "RUN_INFO");
    if (rc)
        return rc;
    info->pid = F32(r->body, T, pid);
    info->ppid = F32(r->body, T, ppid);
    info->start_mono_ns = F64(r->body, T, start_mono_ns);
    info->start_real_ns = F64(r->body, T, start_real_ns);
    info->ncpus = F32(r->body, T, ncpus);
    info->parent_fork = F32(r->body, T, parent_fork);
    info->clock_res_ns = F64(r->body, T, clock_res_ns);
    size_t at = sizeof(T);
    if ((rc = take_string(l, r, &at, "RUN_INFO host", &info->host)) ||
        (rc = take_string(l, r, &at, "RUN_INFO exe", &info->exe)) ||
        (rc = take_string(l, r, &at, "RUN_INFO cwd", &info->cwd)))
        return rc;
    l->run->has_info = true;
    return 0;
}

/* ARGV and ENV: u32 count, u32 0, then count strings. */
static int read_string_list(struct loader *l, const struct rec *r, const char *what, size_t *seen,
                            const char ***out, size_t *count)
{
    if ((*seen)++)
        return CORRUPT(l, r->pos, "a second %s record", what);
    int rc = check_body(l, r, 8, what);
    if (rc)
        return rc;
    uint32_t n = get_u32(r->body);
    if (n > r->body_size - 8) /* each string takes at least its NUL */
        return CORRUPT(l, r->pos + 8, "%s count %u: more strings than its %zu-byte record holds",
                       what, n, r->size);
    if ((rc = alloc_array(l, n, sizeof **out, out)))
        return rc;
    size_t at = 8;
    for (uint32_t i = 0; i < n; i++)
        if ((rc = take_string(l, r, &at, what, &(*out)[i])))
            return rc;
    *count = n;
    return 0;
}

static int read_metric(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_metric T;
    struct ppw_run_metric *m = &l->run->metric;
    if (l->run->has_metric)
        return CORRUPT(l, r->pos, "a second METRIC record");
    int rc = check_body(l, r, sizeof(T), "METRIC");
    if (rc)
        return rc;
    m->source = F32(r->body, T, source);
    m->unit = F32(r->body, T, unit);
    m->period = F64(r->body, T, period);
    m->jitter_pct = F32(r->body, T, jitter_pct);
    m->signal = F32(r->body, T, signal);
    m->max_frames = F32(r->body, T, max_frames);
    size_t at = sizeof(T);
    if ((rc = take_string(l, r, &at, "METRIC name", &m->name)) ||
        (rc = take_string(l, r, &at, "METRIC reason", &m->reason)))
        return rc;
    l->run->has_metric = true;
    return 0;
}

static int read_config(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_config T;
    struct ppw_run_config *c = &l->run->config;
    if (l->run->has_config)
        return CORRUPT(l, r->pos, "a second CONFIG record");
    bool since_1_6 = l->file->info.minor >= 6;
    int rc = check_body(l, r, since_1_6 ? sizeof(T) : PPW_REC_CONFIG_SIZE_1_0, "CONFIG");
    if (rc)
        return rc;
    c->modes = F32(r->body, T, modes);
    c->callpath_depth = F32(r->body, T, callpath_depth);
    c->throttle_calls = F64(r->body, T, throttle_calls);
    c->throttle_ns = F64(r->body, T, throttle_ns);
    if (since_1_6) {
        c->throttle_sample = F64(r->body, T, throttle_sample);
        c->throttle_alloc_calls = F64(r->body, T, throttle_alloc_calls);
        if (c->throttle_sample > PPW_THROTTLE_SAMPLE_MAX)
            return CORRUPT(l, r->pos + 8 + offsetof(T, throttle_sample),
                           "CONFIG throttle_sample %llu is above %u",
                           (unsigned long long)c->throttle_sample, PPW_THROTTLE_SAMPLE_MAX);
    }
    l->run->has_config = true;
    return 0;
}

static int read_calib(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_calib T;
    struct ppw_run_calib *c = &l->run->calib;
    if (l->run->has_calib)
        return CORRUPT(l, r->pos, "a second CALIB record");
    int rc = check_body(l, r, PPW_REC_CALIB_SIZE_1_0, "CALIB");
    if (rc)
        return rc;
    c->iterations = F64(r->body, T, iterations);
    c->pair_ns = FDBL(r->body, T, pair_ns);
    c->inner_ns = FDBL(r->body, T, inner_ns);
    c->throttled_pair_ns = FDBL(r->body, T, throttled_pair_ns);
    c->clock_ns = FDBL(r->body, T, clock_ns);
    c->handler_ns = FDBL(r->body, T, handler_ns);
    double all[] = {c->pair_ns, c->inner_ns, c->throttled_pair_ns, c->clock_ns, c->handler_ns};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!isfinite(all[i]) || all[i] < 0)
            return CORRUPT(l, r->pos + 16 + 8 * i,
                           "CALIB: probe cost %g is not a finite number of nanoseconds", all[i]);
    l->run->has_calib = true;
    if (r->body_size < sizeof(T))
        return 0; /* a 1.0 or 1.1 writer's: no windows */
    c->window_start_ns = FDBL(r->body, T, window_start_ns);
    c->window_end_ns = FDBL(r->body, T, window_end_ns);
    c->window_inner_ns = FDBL(r->body, T, window_inner_ns);
    c->window_throttled_ns = FDBL(r->body, T, window_throttled_ns);
    c->window_clock_ns = FDBL(r->body, T, window_clock_ns);
    c->window_period = F64(r->body, T, window_period);
    double windows[] = {c->window_start_ns, c->window_end_ns, c->window_inner_ns,
                        c->window_throttled_ns, c->window_clock_ns};
    for (size_t i = 0; i < sizeof windows / sizeof windows[0]; i++)
        if (!isfinite(windows[i]) || windows[i] < 0 || windows[i] > PPW_PROBE_WINDOW_MAX_NS)
            return CORRUPT(l, r->pos + 8 + offsetof(T, window_start_ns) + 8 * i,
                           "CALIB: probe window %g is not a number of nanoseconds from 0 to %d",
                           windows[i], PPW_PROBE_WINDOW_MAX_NS);
    c->has_windows = c->window_period != 0;
    return 0;
}

static int decode_module(struct loader *l, const struct rec *r, struct ppw_run_module *m)
{
    typedef struct ppw_rec_module T;
    int rc = check_body(l, r, sizeof(T), r->kind == PPW_RUN_MODULE ? "MODULE" : "UNMODULE");
    if (rc)
        return rc;
    m->load_bias = F64(r->body, T, load_bias);
    m->lo = F64(r->body, T, lo);
    m->hi = F64(r->body, T, hi);
    m->flags = F32(r->body, T, flags);
    uint32_t id_size = F32(r->body, T, build_id_size);
    if (id_size > PPW_BUILD_ID_MAX)
        return CORRUPT(l, r->pos + 8 + offsetof(T, build_id_size),
                       "module build_id_size %u is over %d", id_size, PPW_BUILD_ID_MAX);
    ppw_run_hex(r->body + offsetof(T, build_id), id_size, m->build_id);
    if (m->lo > m->hi)
        return CORRUPT(l, r->pos + 8 + offsetof(T, lo), "module range [0x%llx, 0x%llx) is reversed",
                       (unsigned long long)m->lo, (unsigned long long)m->hi);
    return 0;
}

static int read_module(struct loader *l, const struct rec *r)
{
    struct ppw_run_module *m = &l->run->modules[l->module_count];
    int rc = decode_module(l, r, m);
    size_t at = sizeof(struct ppw_rec_module);
    if (!rc)
        rc = take_string(l, r, &at, "MODULE path", &m->path);
    if (!rc)
        l->module_count++;
    return rc;
}

/* An UNMODULE names the most recent loaded module with the same range. */
static int read_unmodule(struct loader *l, const struct rec *r)
{
    struct ppw_run_module gone = {0};
    int rc = decode_module(l, r, &gone);
    if (rc)
        return rc;
    for (size_t i = l->module_count; i-- > 0;) {
        struct ppw_run_module *m = &l->run->modules[i];
        if (!m->unloaded && m->lo == gone.lo && m->hi == gone.hi &&
            m->load_bias == gone.load_bias) {
            m->unloaded = true;
            return 0;
        }
    }
    return CORRUPT(l, r->pos, "UNMODULE for [0x%llx, 0x%llx), which no loaded module covers",
                   (unsigned long long)gone.lo, (unsigned long long)gone.hi);
}

/* Regions are sorted by id once run.ppw is read; pos keeps the record for messages. */
struct region_at {
    struct ppw_run_region region;
    size_t pos;
};

static int read_region(struct loader *l, const struct rec *r, struct region_at *regions)
{
    typedef struct ppw_rec_region T;
    struct region_at *slot = &regions[l->region_count];
    struct ppw_run_region *g = &slot->region;
    int rc = check_body(l, r, sizeof(T), "REGION");
    if (rc)
        return rc;
    g->id = F32(r->body, T, id);
    g->kind = F32(r->body, T, kind);
    g->tag = F32(r->body, T, tag);
    g->op = F32(r->body, T, op);
    g->line = F32(r->body, T, line);
    g->col = F32(r->body, T, col);
    if (g->id == 0)
        return CORRUPT(l, r->pos + 8, "region id 0 (ids start at 1)");
    size_t at = sizeof(T);
    if ((rc = take_string(l, r, &at, "REGION name", &g->name)) ||
        (rc = take_string(l, r, &at, "REGION file", &g->file)))
        return rc;
    slot->pos = r->pos;
    l->region_count++;
    return 0;
}

static int read_thread(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_thread T;
    int rc = check_body(l, r, sizeof(T), "THREAD");
    if (rc)
        return rc;
    struct ppw_run_thread *t = ppw_run_thread_slot(l->run, F32(r->body, T, index));
    if (!t) /* every THREAD index was collected before this pass */
        return CORRUPT(l, r->pos + 8, "THREAD record changed between passes");
    if (t->has_begin)
        return CORRUPT(l, r->pos, "a second THREAD record for thread %u", t->index);
    t->tid = F32(r->body, T, tid);
    t->parent = F32(r->body, T, parent);
    t->root_tag = F32(r->body, T, root_tag);
    t->start_routine = F64(r->body, T, start_routine);
    t->start_ns = F64(r->body, T, start_ns);
    /* Indices follow creation order, so a parent always has a smaller one:
     * parent chains cannot loop.  UINT32_MAX: the main thread, or unknown. */
    if (t->parent != UINT32_MAX && t->parent >= t->index)
        return CORRUPT(l, r->pos + 8 + offsetof(T, parent),
                       "thread %u has parent %u, which was not created before it", t->index,
                       t->parent);
    t->has_begin = true;
    return 0;
}

static int read_thread_end(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_thread_end T;
    int rc = check_body(l, r, offsetof(T, runqueue_ns), "THREAD_END");
    if (rc)
        return rc;
    uint32_t index = F32(r->body, T, index);
    struct ppw_run_thread *t = ppw_run_thread_slot(l->run, index);
    if (!t || !t->has_begin)
        return CORRUPT(l, r->pos + 8,
                       "THREAD_END for thread %u, which no earlier THREAD record began", index);
    if (t->ended)
        return CORRUPT(l, r->pos, "a second THREAD_END for thread %u", index);
    t->end_flags = F32(r->body, T, flags);
    t->end_ns = F64(r->body, T, end_ns);
    t->cpu_ns = F64(r->body, T, cpu_ns);
    t->samples_recorded = F64(r->body, T, samples);
    /* 1.3 added runqueue_ns */
    t->runqueue_ns = r->body_size >= offsetof(T, armed_cpu_ns)
                         ? F64(r->body, T, runqueue_ns)
                         : PPW_WAIT_UNKNOWN;
    /* 1.4 added armed_cpu_ns */
    t->armed_cpu_ns = r->body_size >= sizeof(T) ? F64(r->body, T, armed_cpu_ns) : 0;
    if (t->armed_cpu_ns > t->cpu_ns)
        return CORRUPT(l, r->pos + 8 + offsetof(T, armed_cpu_ns),
                       "THREAD_END: armed at %llu ns of CPU time, after its end at %llu",
                       (unsigned long long)t->armed_cpu_ns, (unsigned long long)t->cpu_ns);
    t->ended = true;
    return 0;
}

static int read_finish(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_finish T;
    if (l->run->finished)
        return CORRUPT(l, r->pos, "a second FINISH record");
    int rc = check_body(l, r, sizeof(T), "FINISH");
    if (rc)
        return rc;
    l->run->finish_end_ns = F64(r->body, T, end_ns);
    l->run->finish_threads = F64(r->body, T, threads);
    l->run->finished = true;
    return 0;
}

/* Written at MPI_Init and again at MPI_Finalize: the last one wins, but
 * the rank and job may not change. */
static int read_mpi(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_mpi T;
    struct ppw_run_mpi m = {0};
    int rc = check_body(l, r, sizeof(T), "MPI");
    if (rc)
        return rc;
    m.rank = F32(r->body, T, rank);
    m.size = F32(r->body, T, size);
    m.init_local_ns = F64(r->body, T, init_local_ns);
    m.init_master_ns = F64(r->body, T, init_master_ns);
    m.fini_local_ns = F64(r->body, T, fini_local_ns);
    m.fini_master_ns = F64(r->body, T, fini_master_ns);
    m.job_id = F64(r->body, T, job_id);
    size_t at = sizeof(T);
    if ((rc = take_string(l, r, &at, "MPI host", &m.host)))
        return rc;
    if (m.size == 0 || m.rank >= m.size)
        return CORRUPT(l, r->pos, "MPI: rank %u of %u", m.rank, m.size);
    struct ppw_run_mpi *old = &l->run->mpi;
    if (l->run->has_mpi && (old->rank != m.rank || old->size != m.size || old->job_id != m.job_id))
        return CORRUPT(l, r->pos, "a second MPI record for another rank or job");
    *old = m;
    l->run->has_mpi = true;
    return 0;
}

static int read_note(struct loader *l, const struct rec *r)
{
    struct ppw_run_note *note = &l->run->notes[l->note_count];
    int rc = check_body(l, r, 8, "NOTE");
    if (rc)
        return rc;
    note->severity = get_u32(r->body);
    size_t at = 8;
    if ((rc = take_string(l, r, &at, "NOTE message", &note->message)))
        return rc;
    l->note_count++;
    return 0;
}

static int visit_run_record(struct loader *l, const struct rec *r, void *ctx)
{
    struct ppw_run *run = l->run;
    switch (r->kind) {
    case PPW_RUN_INFO: return read_info(l, r);
    case PPW_RUN_ARGV: return read_string_list(l, r, "ARGV", &l->argv_seen, &run->argv, &run->argc);
    case PPW_RUN_ENV: {
        int rc = read_string_list(l, r, "ENV", &l->env_seen, &run->env, &run->env_count);
        if (!rc)
            run->env_left_out = get_u32(r->body + 4); /* 0 before 1.4 */
        return rc;
    }
    case PPW_RUN_METRIC: return read_metric(l, r);
    case PPW_RUN_CONFIG: return read_config(l, r);
    case PPW_RUN_CALIB: return read_calib(l, r);
    case PPW_RUN_MODULE: return read_module(l, r);
    case PPW_RUN_UNMODULE: return read_unmodule(l, r);
    case PPW_RUN_REGION: return read_region(l, r, ctx);
    case PPW_RUN_THREAD: return read_thread(l, r);
    case PPW_RUN_THREAD_END: return read_thread_end(l, r);
    case PPW_RUN_FINISH: return read_finish(l, r);
    case PPW_RUN_NOTE: return read_note(l, r);
    case PPW_RUN_MPI: return read_mpi(l, r);
    default: return 0; /* a newer minor version's record, or another file's */
    }
}

static int compare_region_at(const void *a, const void *b)
{
    const struct region_at *x = a, *y = b;
    if (x->region.id != y->region.id)
        return x->region.id < y->region.id ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static bool same_region(const struct ppw_run_region *a, const struct ppw_run_region *b)
{
    return a->kind == b->kind && a->tag == b->tag && a->op == b->op && a->line == b->line &&
           a->col == b->col && strcmp(a->name, b->name) == 0 && strcmp(a->file, b->file) == 0;
}

/* Sorts regions by id; a region defined twice must be defined the same way. */
static int index_regions(struct loader *l, struct region_at *regions)
{
    struct ppw_run *run = l->run;
    if (l->region_count == 0)
        return 0;
    qsort(regions, l->region_count, sizeof *regions, compare_region_at);
    int rc = alloc_array(l, l->region_count, sizeof *run->regions, &run->regions);
    for (size_t i = 0; i < l->region_count && !rc; i++) {
        const struct region_at *g = &regions[i];
        if (run->region_count && run->regions[run->region_count - 1].id == g->region.id) {
            if (!same_region(&run->regions[run->region_count - 1], &g->region))
                rc = CORRUPT(l, g->pos, "region %u defined twice, differently", g->region.id);
            continue;
        }
        run->regions[run->region_count++] = g->region;
    }
    return rc;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The threads: every index a THREAD record or a t<N> file names. */
static int make_threads(struct loader *l, struct rfile *f)
{
    size_t cap = f->counts[PPW_RUN_THREAD] + l->entry_count, n = 0;
    uint32_t *indices = cap ? malloc(cap * sizeof *indices) : NULL;
    if (cap && !indices)
        return ppw_run_no_memory(l);
    size_t pos = f->header_size;
    while (pos < f->end) {
        struct rec r;
        ppw_run_next_record(l, f, &pos, &r); /* the framing was checked by count_records */
        if (r.kind == PPW_RUN_THREAD && r.body_size >= sizeof(struct ppw_rec_thread))
            indices[n++] = F32(r.body, struct ppw_rec_thread, index);
    }
    for (size_t i = 0; i < l->entry_count; i++)
        indices[n++] = l->entries[i].thread;
    if (n)
        qsort(indices, n, sizeof *indices, compare_u32);
    struct ppw_run *run = l->run;
    int rc = alloc_array(l, n, sizeof *run->threads, &run->threads);
    for (size_t i = 0; i < n && !rc; i++) {
        if (run->thread_count && run->threads[run->thread_count - 1].index == indices[i])
            continue;
        struct ppw_run_thread *t = &run->threads[run->thread_count++];
        t->index = indices[i];
        t->parent = UINT32_MAX;
    }
    free(indices);
    return rc;
}

int ppw_run_read_run_file(struct loader *l)
{
    struct rfile *f = &l->run_file;
    struct ppw_run *run = l->run;
    int rc = ppw_run_open_file(l, f, "run.ppw", PPW_FILE_RUN, UINT32_MAX);
    if (rc)
        return rc;
    run->file = f->info;
    run->pid = f->pid;
    ppw_run_hex(f->build_id, f->build_id_size, run->build_id);
    if ((rc = ppw_run_count_records(l, f)) || (rc = make_threads(l, f)) ||
        (rc = alloc_array(l, f->counts[PPW_RUN_MODULE], sizeof *run->modules, &run->modules)) ||
        (rc = alloc_array(l, f->counts[PPW_RUN_NOTE], sizeof *run->notes, &run->notes)))
        return rc;
    size_t nregions = f->counts[PPW_RUN_REGION];
    struct region_at *regions = nregions ? calloc(nregions, sizeof *regions) : NULL;
    if (nregions && !regions)
        return ppw_run_no_memory(l);
    rc = ppw_run_each_record(l, f, visit_run_record, regions);
    run->module_count = l->module_count;
    run->note_count = l->note_count;
    if (!rc)
        rc = index_regions(l, regions);
    free(regions);
    return rc;
}

/* ---- t<N>.samples.ppw ---- */

/* The stack ids of one samples file: open addressing, id -> index + 1. */
struct samples_ctx {
    struct ppw_run_thread *thread;
    uint32_t *slots;
    size_t mask;
    /* Merging (ppw_run_load_merged): distinct (stack, tag) pairs in a
     * malloc'd array, found through an open-addressing index. */
    bool merge;
    struct ppw_run_sample *merged;
    size_t merged_count, merged_cap;
    uint32_t *index; /* entry + 1; 0 empty */
    size_t index_mask;
    size_t nstacks, nsamples; /* counted before reading: the arrays' sizes */
};

static uint32_t *merged_slot(struct samples_ctx *c, const struct ppw_run_stack *stack, uint32_t tag)
{
    size_t h = ((size_t)(uintptr_t)stack * 0x9e3779b97f4a7c15ull ^ tag * 2654435761u) >> 7;
    for (size_t i = h & c->index_mask;; i = (i + 1) & c->index_mask) {
        uint32_t e = c->index[i];
        if (!e || (c->merged[e - 1].stack == stack && c->merged[e - 1].spawn_tag == tag))
            return &c->index[i];
    }
}

/* Adds s to the merged set; 0 or PPW_ENOMEM. */
static int merge_sample(struct loader *l, struct samples_ctx *c, const struct ppw_run_sample *s)
{
    if (2 * (c->merged_count + 1) > c->index_mask + 1) {
        size_t size = c->index_mask ? 2 * (c->index_mask + 1) : 1024;
        uint32_t *index = calloc(size, sizeof *index);
        if (!index)
            return ppw_run_no_memory(l);
        free(c->index);
        c->index = index;
        c->index_mask = size - 1;
        for (size_t e = 0; e < c->merged_count; e++)
            *merged_slot(c, c->merged[e].stack, c->merged[e].spawn_tag) = (uint32_t)e + 1;
    }
    uint32_t *slot = merged_slot(c, s->stack, s->spawn_tag);
    if (*slot) {
        struct ppw_run_sample *m = &c->merged[*slot - 1];
        m->count++;
        m->weight += s->weight;
        return 0;
    }
    if (c->merged_count == c->merged_cap) {
        size_t cap = c->merged_cap ? 2 * c->merged_cap : 256;
        struct ppw_run_sample *grown = realloc(c->merged, cap * sizeof *grown);
        if (!grown || cap >= UINT32_MAX)
            return ppw_run_no_memory(l);
        c->merged = grown;
        c->merged_cap = cap;
    }
    c->merged[c->merged_count] = *s;
    *slot = (uint32_t)++c->merged_count;
    return 0;
}

static uint32_t *stack_slot(struct samples_ctx *c, uint32_t id)
{
    size_t h = (size_t)(id * 2654435761u) & c->mask;
    while (c->slots[h] && c->thread->stacks[c->slots[h] - 1].id != id)
        h = (h + 1) & c->mask;
    return &c->slots[h];
}

/* A stack of a STACK record or a BLOCK's STACK entry at file offset pos:
 * its frames are the nframes 64-bit values at `frames`, which the caller
 * checked lie in the record. */
static int add_stack(struct loader *l, struct samples_ctx *c, size_t pos, uint32_t id,
                     uint16_t nframes, uint16_t flags, const unsigned char *frames)
{
    struct ppw_run_thread *t = c->thread;
    struct ppw_run_stack *s = &t->stacks[t->stack_count];
    s->id = id;
    s->nframes = nframes;
    s->flags = flags;
    if (s->id == 0)
        return CORRUPT(l, pos, "stack id 0 (ids start at 1)");
    uint32_t *slot = stack_slot(c, s->id);
    if (*slot)
        return CORRUPT(l, pos, "stack id %u defined twice", s->id);
    s->frames = NULL;
    if (nframes) {
        uint64_t *values = ppw_arena_alloc(l->run->arena, nframes * sizeof *values);
        if (!values)
            return ppw_run_no_memory(l);
        for (size_t i = 0; i < nframes; i++)
            values[i] = get_u64(frames + 8 * i);
        s->frames = values;
    }
    *slot = (uint32_t)++t->stack_count;
    return 0;
}

static int read_stack(struct loader *l, const struct rec *r, struct samples_ctx *c)
{
    typedef struct ppw_rec_stack T;
    int rc = check_body(l, r, sizeof(T), "STACK");
    if (rc)
        return rc;
    uint16_t nframes = F16(r->body, T, nframes);
    if (F32(r->body, T, id) == 0)
        return CORRUPT(l, r->pos + 8, "stack id 0 (ids start at 1)");
    if (nframes > (r->body_size - sizeof(T)) / 8)
        return CORRUPT(l, r->pos + 4,
                       "STACK frames: %u 64-bit values do not fit in the %zu-byte record",
                       nframes, r->size);
    return add_stack(l, c, r->pos + 8, F32(r->body, T, id), nframes, F16(r->body, T, flags),
                     r->body + sizeof(T));
}

/* A sample of a SAMPLE record or a BLOCK's sample entry at file offset pos. */
static int add_sample(struct loader *l, struct samples_ctx *c, size_t pos, uint32_t id,
                      uint32_t spawn_tag, uint64_t time_ns, uint64_t weight)
{
    struct ppw_run_thread *t = c->thread;
    struct ppw_run_sample one, *s = c->merge ? &one : &t->samples[t->sample_count];
    uint32_t slot = *stack_slot(c, id);
    if (!slot)
        return CORRUPT(l, pos, "sample names stack %u, which no earlier STACK record defines", id);
    s->stack = &t->stacks[slot - 1];
    s->spawn_tag = spawn_tag;
    s->time_ns = time_ns;
    s->weight = weight;
    s->count = 1;
    t->samples_read++;
    t->weight_read += s->weight;
    const struct ppw_run_metric *m = &l->run->metric;
    if (l->run->has_metric && m->unit == PPW_UNIT_NS && m->period &&
        s->weight >= m->period / 5 * 9) /* 1.8 periods: beyond jitter and re-arm delay */
        t->missed_periods += (s->weight + m->period / 2) / m->period - 1;
    if (c->merge)
        return merge_sample(l, c, s);
    t->sample_count++;
    return 0;
}

static int read_sample(struct loader *l, const struct rec *r, struct samples_ctx *c)
{
    typedef struct ppw_rec_sample T;
    int rc = check_body(l, r, sizeof(T), "SAMPLE");
    if (rc)
        return rc;
    return add_sample(l, c, r->pos + 8, F32(r->body, T, stack), F32(r->body, T, spawn_tag),
                      F64(r->body, T, time_ns), F64(r->body, T, weight));
}

/* The entries of a BLOCK record (ppw/run_format.h), up to its `used`
 * bytes: counted into c->nstacks and c->nsamples when counting, else
 * read.  A crash may leave `used` short of the entries written, never
 * past them. */
static int read_block(struct loader *l, const struct rec *r, struct samples_ctx *c, bool counting)
{
    typedef struct ppw_rec_block T;
    int rc = check_body(l, r, sizeof(T), "BLOCK");
    if (rc)
        return rc;
    uint32_t used = F32(r->body, T, used), capacity = F32(r->body, T, capacity);
    if (capacity > r->body_size - sizeof(T) || used > capacity || used % 4)
        return CORRUPT(l, r->pos + 8,
                       "BLOCK record of %zu bytes says %u bytes of entries used of %u", r->size,
                       used, capacity);
    const unsigned char *entries = r->body + sizeof(T);
    size_t base = r->pos + 8 + sizeof(T);
    uint64_t time_ns = F64(r->body, T, base_ns);
    uint32_t spawn_tag = 0;
    for (uint32_t at = 0; at < used;) {
        const unsigned char *e = entries + at;
        uint32_t left = used - at, word = get_u32(e), id = word & PPW_BLOCK_ID_MASK;
        uint32_t need = 0;
        switch (word >> PPW_BLOCK_KIND_SHIFT) {
        case PPW_BLOCK_SAMPLE: need = 12; break;
        case PPW_BLOCK_SAMPLE_WIDE: need = 20; break;
        case PPW_BLOCK_STACK: need = left >= 8 ? 8 + 8 * (get_u32(e + 4) & 0xffffu) : 8; break;
        case PPW_BLOCK_SPAWN: need = 8; break;
        }
        if (need > left)
            return CORRUPT(l, base + at, "BLOCK entry of kind %u needs %u bytes, %u are left",
                           word >> PPW_BLOCK_KIND_SHIFT, need, left);
        switch (word >> PPW_BLOCK_KIND_SHIFT) {
        case PPW_BLOCK_SAMPLE:
            time_ns += get_u32(e + 8);
            if (counting)
                c->nsamples++;
            else
                rc = add_sample(l, c, base + at, id, spawn_tag, time_ns, get_u32(e + 4));
            break;
        case PPW_BLOCK_SAMPLE_WIDE:
            time_ns = get_u64(e + 12);
            if (counting)
                c->nsamples++;
            else
                rc = add_sample(l, c, base + at, id, spawn_tag, time_ns, get_u64(e + 4));
            break;
        case PPW_BLOCK_STACK:
            if (counting)
                c->nstacks++;
            else
                rc = add_stack(l, c, base + at, id, (uint16_t)get_u32(e + 4),
                               (uint16_t)(get_u32(e + 4) >> 16), e + 8);
            break;
        case PPW_BLOCK_SPAWN:
            if (id)
                return CORRUPT(l, base + at, "BLOCK SPAWN entry with %u in its id bits", id);
            spawn_tag = get_u32(e + 4);
            break;
        }
        if (rc)
            return rc;
        at += need;
    }
    return 0;
}

static int visit_samples_record(struct loader *l, const struct rec *r, void *ctx)
{
    switch (r->kind) {
    case PPW_SMP_STACK: return read_stack(l, r, ctx);
    case PPW_SMP_SAMPLE: return read_sample(l, r, ctx);
    case PPW_SMP_BLOCK: return read_block(l, r, ctx, false);
    default: return 0;
    }
}

/* Stacks and samples, for sizing: records, and entries of blocks. */
static int count_samples_record(struct loader *l, const struct rec *r, void *ctx)
{
    struct samples_ctx *c = ctx;
    switch (r->kind) {
    case PPW_SMP_STACK: c->nstacks++; return 0;
    case PPW_SMP_SAMPLE: c->nsamples++; return 0;
    case PPW_SMP_BLOCK: return read_block(l, r, c, true);
    default: return 0;
    }
}

int ppw_run_read_samples(struct loader *l, struct rfile *f, struct ppw_run_thread *t)
{
    t->samples_file = f->info;
    memcpy(t->dropped, f->dropped, sizeof t->dropped);
    t->handler_ns = f->handler_ns;
    /* The header's last word: ring losses in a samples file since 1.7. */
    t->ring_full = f->info.major == 1 && f->info.minor >= 7 ? f->reserved : 0;
    struct samples_ctx c = {.thread = t, .merge = l->merge_samples};
    int rc = ppw_run_each_record(l, f, count_samples_record, &c);
    f->released = 0; /* the next pass faults the pages in again, from the page cache */
    size_t nstacks = c.nstacks, size = 2;
    if (!rc && nstacks >= UINT32_MAX) /* 64 GiB of stacks: the slots hold 32-bit indices */
        rc = ppw_err_set(l->err, PPW_ENOMEM, "%s: too many stacks (%zu)", f->path, nstacks);
    while (!rc && size < 2 * nstacks)
        size *= 2;
    c.mask = size - 1;
    if (!rc && !(c.slots = calloc(size, sizeof *c.slots)))
        rc = ppw_run_no_memory(l);
    if (!rc)
        rc = alloc_array(l, nstacks, sizeof *t->stacks, &t->stacks);
    if (!rc && !c.merge)
        rc = alloc_array(l, c.nsamples, sizeof *t->samples, &t->samples);
    if (!rc)
        rc = ppw_run_each_record(l, f, visit_samples_record, &c);
    if (!rc && c.merge && !(rc = alloc_array(l, c.merged_count, sizeof *t->samples, &t->samples))) {
        if (c.merged_count)
            memcpy(t->samples, c.merged, c.merged_count * sizeof *t->samples);
        t->sample_count = c.merged_count;
    }
    free(c.merged);
    free(c.index);
    free(c.slots);
    return rc;
}

/* ---- t<N>.events.ppw ---- */

static int read_spawn(struct loader *l, const struct rec *r)
{
    typedef struct ppw_rec_spawn T;
    struct ppw_run_spawn *s = &l->spawns[l->spawn_count];
    int rc = check_body(l, r, sizeof(T), "SPAWN");
    if (rc)
        return rc;
    s->tag = F32(r->body, T, tag);
    s->parent_tag = F32(r->body, T, parent_tag);
    s->kind = F32(r->body, T, kind);
    s->creator = F32(r->body, T, creator);
    s->nframes = F16(r->body, T, nframes);
    s->flags = F16(r->body, T, flags);
    if (s->tag == 0)
        return CORRUPT(l, r->pos + 8, "spawn tag 0 (tags start at 1)");
    if ((rc = take_u64s(l, r, sizeof(T), s->nframes, "SPAWN frames", &s->frames)))
        return rc;
    l->spawn_count++;
    return 0;
}

enum { TRACE_HAS_STRING = 0x8000, TRACE_COUNT_MASK = 0x7fff };

static int read_trace(struct loader *l, const struct rec *r, struct ppw_run_thread *t)
{
    typedef struct ppw_rec_trace T;
    struct ppw_run_trace *e = &t->traces[t->trace_count];
    int rc = check_body(l, r, sizeof(T), "TRACE");
    if (rc)
        return rc;
    uint32_t region = F32(r->body, T, region);
    uint16_t nargs = F16(r->body, T, nargs);
    e->time_ns = F64(r->body, T, time_ns);
    e->evttype = F16(r->body, T, evttype);
    e->nargs = nargs & TRACE_COUNT_MASK;
    if (!(e->region = ppw_run_find_region(l->run, region)))
        return CORRUPT(l, r->pos + 8 + offsetof(T, region),
                       "trace event names region %u, which run.ppw does not define", region);
    if ((rc = take_u64s(l, r, sizeof(T), e->nargs, "TRACE args", &e->args)))
        return rc;
    size_t at = sizeof(T) + 8 * (size_t)e->nargs;
    if ((nargs & TRACE_HAS_STRING) &&
        (rc = take_string(l, r, &at, "TRACE description", &e->description)))
        return rc;
    t->trace_count++;
    return 0;
}

static int read_omp(struct loader *l, const struct rec *r, struct ppw_run_thread *t)
{
    typedef struct ppw_rec_omp T;
    struct ppw_run_omp_event *e = &t->omp_events[t->omp_event_count];
    int rc = check_body(l, r, sizeof(T), "OMP");
    if (rc)
        return rc;
    e->time_ns = F64(r->body, T, time_ns);
    e->instance = F32(r->body, T, instance);
    e->tag = F32(r->body, T, tag);
    e->event = F32(r->body, T, event);
    if (e->event < PPW_OMP_SPAWN_PARALLEL || e->event > PPW_OMP_END)
        return CORRUPT(l, r->pos + 8 + offsetof(T, event), "OMP event kind %" PRIu32 " unknown",
                       e->event);
    if (e->instance == 0)
        return CORRUPT(l, r->pos + 8 + offsetof(T, instance), "OMP instance 0 (ids start at 1)");
    t->omp_event_count++;
    return 0;
}

static int visit_events_record(struct loader *l, const struct rec *r, void *ctx)
{
    switch (r->kind) {
    case PPW_EVT_SPAWN: return read_spawn(l, r);
    case PPW_EVT_TRACE: return read_trace(l, r, ctx);
    case PPW_EVT_OMP: return read_omp(l, r, ctx);
    default: return 0;
    }
}

int ppw_run_read_events(struct loader *l, struct rfile *f, struct ppw_run_thread *t)
{
    t->events_file = f->info;
    int rc = ppw_run_count_records(l, f);
    size_t need = l->spawn_count + f->counts[PPW_EVT_SPAWN];
    if (!rc && need > l->spawn_cap) {
        struct ppw_run_spawn *grown = realloc(l->spawns, need * sizeof *grown);
        if (!grown)
            return ppw_run_no_memory(l);
        l->spawns = grown;
        l->spawn_cap = need;
    }
    if (!rc)
        rc = alloc_array(l, f->counts[PPW_EVT_TRACE], sizeof *t->traces, &t->traces);
    if (!rc)
        rc = alloc_array(l, f->counts[PPW_EVT_OMP], sizeof *t->omp_events, &t->omp_events);
    if (!rc)
        rc = ppw_run_each_record(l, f, visit_events_record, t);
    return rc;
}

/* ---- t<N>.profile.ppw ---- */

static int check_path(struct loader *l, size_t pos, const struct ppw_run_timer *timer)
{
    if (timer->depth < 1 || timer->depth > PPW_CALLPATH_MAX)
        return CORRUPT(l, pos + offsetof(struct ppw_rec_timer, depth),
                       "timer depth %u is not in [1, %d]", timer->depth, PPW_CALLPATH_MAX);
    for (uint32_t i = 0; i < timer->depth; i++)
        if (!ppw_run_find_region(l->run, timer->path[i]))
            return CORRUPT(l, pos + offsetof(struct ppw_rec_timer, path) + 4 * i,
                           "timer path[%u] names region %u, which run.ppw does not define", i,
                           timer->path[i]);
    if (!isfinite(timer->excl_sumsq_ns2) || timer->excl_sumsq_ns2 < 0)
        return CORRUPT(l, pos + offsetof(struct ppw_rec_timer, excl_sumsq_ns2),
                       "timer excl_sumsq_ns2 %g is not a finite sum of squares",
                       timer->excl_sumsq_ns2);
    return 0;
}

/* Sums that no series of calls gives: min <= mean <= max, and exclusive
 * time within inclusive.  A file the writer did not close may hold one call
 * half added (timer_add in runtime/measure.c updates min, max and the sums
 * before count), so its mean may reach max over count + 1 calls. */
static int check_timer_sums(struct loader *l, size_t pos, const struct ppw_run_timer *timer,
                            bool closed)
{
    uint64_t count = timer->count, calls = count + (closed ? 0 : 1);
    uint64_t sum = timer->incl_sum_ns, max = timer->incl_max_ns;
    const char *bad = NULL;
    if (count > 0 && timer->incl_min_ns > max)
        bad = "incl_min_ns is over incl_max_ns";
    else if (calls == 0 && (sum || timer->excl_sum_ns))
        bad = "times summed over no call";
    else if (calls > 0 && (sum / calls > max || (sum / calls == max && sum % calls)))
        bad = "incl_sum_ns is over count x incl_max_ns";
    else if (count > 0 && sum / count < timer->incl_min_ns)
        bad = "incl_sum_ns is under count x incl_min_ns";
    else if (timer->excl_sum_ns > sum)
        bad = "excl_sum_ns is over incl_sum_ns";
    if (!bad)
        return 0;
    return CORRUPT(l, pos + offsetof(struct ppw_rec_timer, count),
                   "timer: %s (count %llu, min %llu, max %llu, sum %llu, exclusive %llu ns)", bad,
                   (unsigned long long)count, (unsigned long long)timer->incl_min_ns,
                   (unsigned long long)max, (unsigned long long)sum,
                   (unsigned long long)timer->excl_sum_ns);
}

static int read_timer(struct loader *l, const unsigned char *b, size_t pos, size_t slot_size,
                      struct ppw_run_thread *t)
{
    typedef struct ppw_rec_timer T;
    struct ppw_run_timer *timer = &t->timers[t->timer_count];
    timer->depth = F32(b, T, depth);
    for (size_t i = 0; i < PPW_CALLPATH_MAX; i++)
        timer->path[i] = get_u32(b + offsetof(T, path) + 4 * i);
    timer->count = F64(b, T, count);
    timer->subcalls = F64(b, T, subcalls);
    timer->incl_min_ns = F64(b, T, incl_min_ns);
    timer->incl_max_ns = F64(b, T, incl_max_ns);
    timer->incl_sum_ns = F64(b, T, incl_sum_ns);
    timer->excl_sum_ns = F64(b, T, excl_sum_ns);
    timer->excl_sumsq_ns2 = FDBL(b, T, excl_sumsq_ns2);
    timer->probes_inner = F64(b, T, probes_inner);
    timer->probes_throttled = F64(b, T, probes_throttled);
    timer->probes_child = F64(b, T, probes_child);
    timer->throttled_child = F64(b, T, throttled_child);
    timer->flags = F32(b, T, flags);
    /* 1.2's trailing field: 0 from a 1.0 or 1.1 writer, which zeroes its
     * 160-byte slots, and absent from slots too short to hold it */
    timer->bytes = slot_size >= offsetof(T, bytes) + 8 ? F64(b, T, bytes) : 0;
    int rc = check_path(l, pos, timer);
    if (!rc)
        rc = check_timer_sums(l, pos, timer, t->profile_file.flags & PPW_FILE_CLOSED);
    if (!rc)
        t->timer_count++;
    return rc;
}

static int read_throttle(struct loader *l, const unsigned char *b, size_t pos,
                         struct ppw_run_thread *t)
{
    typedef struct ppw_rec_throttle T;
    struct ppw_run_throttle *th = &t->throttles[t->throttle_count];
    th->region = F32(b, T, region);
    th->calls_before = F64(b, T, calls_before);
    th->mean_ns = F64(b, T, mean_ns);
    th->calls_after = F64(b, T, calls_after);
    if (!ppw_run_find_region(l->run, th->region))
        return CORRUPT(l, pos + offsetof(T, region),
                       "throttle slot names region %u, which run.ppw does not define", th->region);
    if (t->profile_file.minor >= 6) {
        th->sample_period = F64(b, T, sample_period);
        th->sampled_calls = F64(b, T, sampled_calls);
        th->sampled_ns = F64(b, T, sampled_ns);
        if (th->sample_period > PPW_THROTTLE_SAMPLE_MAX ||
            (th->sampled_calls && th->sample_period < 2) || (!th->sampled_calls && th->sampled_ns))
            return CORRUPT(l, pos + offsetof(T, sample_period),
                           "throttle slot of region %u: %llu calls sampled 1 in %llu taking "
                           "%llu ns cannot be",
                           th->region, (unsigned long long)th->sampled_calls,
                           (unsigned long long)th->sample_period,
                           (unsigned long long)th->sampled_ns);
    }
    t->throttle_count++;
    return 0;
}

/* A part that exceeds its whole, or a mean window beyond the limit, is no
 * measurement. */
static bool probe_sums_bad(uint64_t count, uint64_t sum, uint64_t part)
{
    return part > sum || (count == 0 && sum != 0) || sum / PPW_PROBE_WINDOW_MAX_NS > count;
}

static int read_probe(struct loader *l, const unsigned char *b, size_t pos,
                      struct ppw_run_thread *t)
{
    typedef struct ppw_rec_probe T;
    struct ppw_run_probe *w = &t->probe;
    if (t->has_probe)
        return CORRUPT(l, pos, "a second PROBE slot");
    w->window_period = F32(b, T, window_period);
    w->start_count = F64(b, T, start_count);
    w->start_ns = F64(b, T, start_ns);
    w->start_tail_ns = F64(b, T, start_tail_ns);
    w->end_count = F64(b, T, end_count);
    w->end_ns = F64(b, T, end_ns);
    w->end_head_ns = F64(b, T, end_head_ns);
    w->throttled_count = F64(b, T, throttled_count);
    w->throttled_ns = F64(b, T, throttled_ns);
    w->interrupted = F64(b, T, interrupted);
    w->clock_ns = F64(b, T, clock_ns);
    uint64_t kept = w->start_count + w->end_count + w->throttled_count;
    if (probe_sums_bad(w->start_count, w->start_ns, w->start_tail_ns) ||
        probe_sums_bad(w->end_count, w->end_ns, w->end_head_ns) ||
        probe_sums_bad(w->throttled_count, w->throttled_ns, 0) || kept < w->start_count ||
        probe_sums_bad(kept, w->clock_ns, 0))
        return CORRUPT(l, pos + offsetof(T, start_count),
                       "PROBE slot: window sums that no clock gives (a part larger than its "
                       "whole, or a mean over %d ns)",
                       PPW_PROBE_WINDOW_MAX_NS);
    t->has_probe = true;
    return 0;
}

/* A slot of a known kind must hold its struct. */
static int check_slot_size(struct loader *l, const struct rfile *f, uint32_t kind)
{
    static const struct {
        uint32_t kind;
        size_t size;
        const char *name;
    } known[] = {
        {PPW_SLOT_TIMER, offsetof(struct ppw_rec_timer, bytes), "TIMER"}, /* 1.0's fields */
        {PPW_SLOT_THROTTLE, sizeof(struct ppw_rec_throttle), "THROTTLE"},
        {PPW_SLOT_PROBE, sizeof(struct ppw_rec_probe), "PROBE"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].kind == kind && f->slot_size < known[i].size)
            return CORRUPT(l, offsetof(struct ppw_file_header, slot_size),
                           "slot_size %llu is smaller than a %s slot (%zu bytes)",
                           (unsigned long long)f->slot_size, known[i].name, known[i].size);
    return 0;
}

/* Counts slots by kind; with t, decodes them. */
static int each_slot(struct loader *l, const struct rfile *f, size_t *timers, size_t *throttles,
                     struct ppw_run_thread *t)
{
    for (size_t pos = f->header_size; pos < f->end; pos += f->slot_size) {
        const unsigned char *b = f->map + pos;
        uint32_t kind = get_u32(b);
        int rc = check_slot_size(l, f, kind);
        if (!rc && kind == PPW_SLOT_TIMER)
            rc = t ? read_timer(l, b, pos, f->slot_size, t) : (++*timers, 0);
        else if (!rc && kind == PPW_SLOT_THROTTLE)
            rc = t ? read_throttle(l, b, pos, t) : (++*throttles, 0);
        else if (!rc && kind == PPW_SLOT_PROBE && t)
            rc = read_probe(l, b, pos, t);
        else if (!rc && kind > PPW_SLOT_PROBE && f->info.major == PPW_RUN_MAJOR &&
                 f->info.minor <= PPW_RUN_MINOR)
            rc = CORRUPT(l, pos, "slot kind %u: run format %u.%u has no such kind in profile files",
                         kind, f->info.major, f->info.minor);
        if (rc)
            return rc; /* other kinds: a newer minor version's, or 0 (unused) */
    }
    return 0;
}

int ppw_run_read_profile(struct loader *l, struct rfile *f, struct ppw_run_thread *t)
{
    typedef struct ppw_file_header H;
    t->profile_file = f->info;
    if (f->slot_size < 8 || f->slot_size % 8)
        return CORRUPT(l, offsetof(H, slot_size),
                       "slot_size %llu is not a multiple of 8 of at least 8",
                       (unsigned long long)f->slot_size);
    if (f->info.committed % f->slot_size)
        return CORRUPT(l, offsetof(H, committed),
                       "committed %llu is not a whole number of %llu-byte slots",
                       (unsigned long long)f->info.committed, (unsigned long long)f->slot_size);
    size_t timers = 0, throttles = 0;
    int rc = each_slot(l, f, &timers, &throttles, NULL);
    if (!rc)
        rc = alloc_array(l, timers, sizeof *t->timers, &t->timers);
    if (!rc)
        rc = alloc_array(l, throttles, sizeof *t->throttles, &t->throttles);
    if (!rc)
        rc = each_slot(l, f, &timers, &throttles, t);
    return rc;
}
