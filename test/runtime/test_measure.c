/* GASP measurement (runtime/measure.c, regions.c, gasp.c) against stubs of
 * the rest of libppw.  A fake clock makes every time exact; only
 * test_calibration reads the real clock, and asserts no more than
 * "positive and finite". */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "measure_stubs.h"

#include "config.h"
#include "measure.h"
#include "ppw/gasp.h"
#include "ppw/gasp_events.h"
#include "ppw/ppw.h"
#include "ppw/run_format.h"
#include "thread.h"

static struct ppw_thread *T;
static uint32_t next_index;
static struct ppw_thread thread_pool[64]; /* one per begin(), indexed by T->index */

static struct ppw_thread *new_thread(void)
{
    if (next_index >= sizeof thread_pool / sizeof thread_pool[0]) {
        fprintf(stderr, "test_measure: thread_pool too small\n");
        exit(1);
    }
    struct ppw_thread *t = &thread_pool[next_index];
    t->index = next_index++;
    t->measuring = 1;
    return t;
}
static const uint32_t BOTH = PPW_MODE_PROFILE | PPW_MODE_TRACE;

/* ---- driving events ------------------------------------------------------ */

static void begin(uint32_t modes, unsigned depth, uint64_t throttle_calls, uint64_t throttle_ns)
{
    ppw_config.modes = modes;
    ppw_config.callpath_depth = depth;
    ppw_config.throttle_calls = throttle_calls;
    ppw_config.throttle_ns = throttle_ns;
    T = new_thread();
    ppw_measure_thread_begin(T);
    stub_self = T;
    stub_fake_clock = 1;
    stub_clock = 1000000;
}

static void end(void)
{
    ppw_measure_thread_end(T);
    CHECK(T->measure == NULL);
}

static void tick(uint64_t ns)
{
    stub_clock += ns;
}

static void S(const char *f)
{
    gasp_event_notify(NULL, GASP_C_FUNC, GASP_START, "t.c", 1, 0, f);
}

static void E(const char *f)
{
    gasp_event_notify(NULL, GASP_C_FUNC, GASP_END, "t.c", 2, 0, f);
}

/* f of `ns` nanoseconds with nothing inside */
static void call(const char *f, uint64_t ns)
{
    S(f);
    tick(ns);
    E(f);
}

/* ---- reading results ----------------------------------------------------- */

static uint32_t region_id(const char *name)
{
    for (int i = 0; i < stub_nrecords; i++) {
        const struct stub_record *r = &stub_records[i];
        if (r->kind == PPW_RUN_REGION && strcmp(r->strings[0], name) == 0) {
            struct ppw_rec_region reg;
            memcpy(&reg, r->fixed, sizeof reg);
            return reg.id;
        }
    }
    return 0;
}

static const struct ppw_rec_region *region_rec(uint32_t id)
{
    for (int i = 0; i < stub_nrecords; i++)
        if (stub_records[i].kind == PPW_RUN_REGION &&
            ((const struct ppw_rec_region *)stub_records[i].fixed)->id == id)
            return (const struct ppw_rec_region *)stub_records[i].fixed;
    return NULL;
}

static int region_records(const char *name)
{
    int n = 0;
    for (int i = 0; i < stub_nrecords; i++)
        n +=
            stub_records[i].kind == PPW_RUN_REGION && strcmp(stub_records[i].strings[0], name) == 0;
    return n;
}

struct profile {
    uint8_t *data;
    size_t size;
    const struct ppw_file_header *h;
    uint32_t nslots;
};

static int load(uint32_t index, struct profile *p)
{
    char name[64];
    snprintf(name, sizeof name, "t%u.profile.ppw", index);
    memset(p, 0, sizeof *p);
    int fd = openat(stub_dirfd, name, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    p->size = (size_t)st.st_size;
    p->data = malloc(p->size + 1);
    ssize_t got = pread(fd, p->data, p->size, 0);
    close(fd);
    if (got != (ssize_t)p->size || p->size < PPW_RUN_HEADER_SIZE)
        return -1;
    p->h = (const struct ppw_file_header *)p->data;
    p->nslots = (uint32_t)(p->h->committed / PPW_PROFILE_SLOT_SIZE);
    return 0;
}

static const void *slot(const struct profile *p, uint32_t i)
{
    return p->data + PPW_RUN_HEADER_SIZE + (size_t)i * PPW_PROFILE_SLOT_SIZE;
}

static const struct ppw_rec_timer *timer_of(const struct profile *p, const uint32_t *path,
                                            uint32_t depth)
{
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct ppw_rec_timer *t = slot(p, i);
        if (t->slot_kind == PPW_SLOT_TIMER && t->depth == depth &&
            memcmp(t->path, path, depth * sizeof *path) == 0)
            return t;
    }
    return NULL;
}
#define TIMER(p, ...)                                                                              \
    timer_of((p), (const uint32_t[]){__VA_ARGS__},                                                 \
             sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

static int count_kind(const struct profile *p, uint32_t kind)
{
    int n = 0;
    for (uint32_t i = 0; i < p->nslots; i++)
        n += ((const struct ppw_rec_timer *)slot(p, i))->slot_kind == kind;
    return n;
}

static const struct ppw_rec_probe *probe_of(const struct profile *p)
{
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct ppw_rec_probe *w = slot(p, i);
        if (w->slot_kind == PPW_SLOT_PROBE)
            return w;
    }
    return NULL;
}

static const struct ppw_rec_throttle *throttle_of(const struct profile *p, uint32_t region)
{
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct ppw_rec_throttle *t = slot(p, i);
        if (t->slot_kind == PPW_SLOT_THROTTLE && t->region == region)
            return t;
    }
    return NULL;
}

static int notes_with(int from, const char *text)
{
    int n = 0;
    for (int i = from; i < stub_nnotes; i++)
        n += strstr(stub_notes[i], text) != NULL;
    return n;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_counts(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    for (int i = 0; i < 1000; i++)
        call("cnt_a", 5 + (uint64_t)(i % 3));
    end();
    uint32_t a = region_id("cnt_a");
    CHECK(a != 0);
    CHECK_INT(region_records("cnt_a"), 1);
    const struct ppw_rec_region *rr = region_rec(a);
    CHECK(rr && rr->kind == PPW_REGION_FUNCTION && rr->tag == GASP_C_FUNC && rr->line == 1);
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    CHECK(memcmp(p.h->magic, PPW_RUN_MAGIC, 4) == 0);
    CHECK_INT(p.h->kind, PPW_FILE_PROFILE);
    CHECK_INT(p.h->slot_size, PPW_PROFILE_SLOT_SIZE);
    CHECK(p.h->flags & PPW_FILE_CLOSED);
    CHECK_INT(p.size, PPW_RUN_HEADER_SIZE + p.h->committed);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 1);
    CHECK_INT(count_kind(&p, PPW_SLOT_PROBE), 1);
    const struct ppw_rec_timer *t = TIMER(&p, a);
    CHECK(t != NULL);
    if (t) {
        CHECK_INT(t->count, 1000);
        CHECK_INT(t->subcalls, 0);
        CHECK_INT(t->incl_min_ns, 5);
        CHECK_INT(t->incl_max_ns, 7);
        CHECK_INT(t->incl_sum_ns, 334 * 5 + 333 * 6 + 333 * 7);
        CHECK_INT(t->excl_sum_ns, t->incl_sum_ns);
        CHECK(t->excl_sumsq_ns2 == 334.0 * 25 + 333.0 * 36 + 333.0 * 49);
        CHECK_INT(t->probes_inner, 0);
        CHECK_INT(t->flags, 0);
    }
    free(p.data);
}

/* main -> 2 x A -> 3 x B: exact subcalls, exclusive times, probe counts */
static void test_nested(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    S("nest_main");
    for (int i = 0; i < 2; i++) {
        tick(1);
        S("nest_a");
        tick(10);
        for (int j = 0; j < 3; j++) {
            call("nest_b", 100);
            tick(2);
        }
        E("nest_a");
    }
    tick(7);
    E("nest_main");
    end();
    uint32_t m = region_id("nest_main"), a = region_id("nest_a"), b = region_id("nest_b");
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *tm = TIMER(&p, m), *ta = TIMER(&p, a, m), *tb = TIMER(&p, b, a, m);
    CHECK(tm && ta && tb);
    if (!tm || !ta || !tb)
        return;
    CHECK_INT(tb->count, 6);
    CHECK_INT(tb->incl_sum_ns, 600);
    CHECK_INT(ta->count, 2);
    CHECK_INT(ta->subcalls, 6);
    CHECK_INT(ta->incl_sum_ns, 2 * (10 + 3 * 102));
    CHECK_INT(ta->excl_sum_ns, ta->incl_sum_ns - tb->incl_sum_ns);
    CHECK(ta->excl_sumsq_ns2 == 2.0 * 16 * 16);
    CHECK_INT(ta->probes_child, 6);
    CHECK_INT(ta->probes_inner, 6);
    CHECK_INT(tm->count, 1);
    CHECK_INT(tm->subcalls, 2);
    CHECK_INT(tm->incl_sum_ns, 2 * (1 + 316) + 7);
    CHECK_INT(tm->excl_sum_ns, tm->incl_sum_ns - ta->incl_sum_ns);
    CHECK_INT(tm->probes_child, 2);
    CHECK_INT(tm->probes_inner, 8);
    CHECK_INT(tm->probes_throttled, 0);
    free(p.data);
}

/* B called from A and from C: one timer flat, two with parents; a chain of
 * 12 keeps the innermost 10. */
static void callpath_run(unsigned depth)
{
    static const char *chain[12] = {"cp_0", "cp_1", "cp_2", "cp_3", "cp_4",  "cp_5",
                                    "cp_6", "cp_7", "cp_8", "cp_9", "cp_10", "cp_11"};
    begin(PPW_MODE_PROFILE, depth, 0, 0);
    S("cp_a");
    call("cp_b", 3);
    E("cp_a");
    S("cp_c");
    call("cp_b", 4);
    E("cp_c");
    for (int i = 0; i < 12; i++)
        S(chain[i]);
    for (int i = 11; i >= 0; i--) {
        tick(1);
        E(chain[i]);
    }
    end();
}

static void test_callpaths(void)
{
    uint32_t a, b, c, ch[12];
    struct profile p;

    callpath_run(1);
    a = region_id("cp_a"), b = region_id("cp_b"), c = region_id("cp_c");
    for (int i = 0; i < 12; i++) {
        char name[8];
        snprintf(name, sizeof name, "cp_%d", i);
        ch[i] = region_id(name);
    }
    CHECK_INT(load(T->index, &p), 0);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 3 + 12);
    const struct ppw_rec_timer *t = TIMER(&p, b);
    CHECK(t && t->count == 2 && t->incl_sum_ns == 7);
    CHECK(TIMER(&p, ch[11]) != NULL);
    free(p.data);

    callpath_run(2);
    CHECK_INT(load(T->index, &p), 0);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 4 + 12);
    t = TIMER(&p, b, a);
    CHECK(t && t->count == 1 && t->incl_sum_ns == 3);
    t = TIMER(&p, b, c);
    CHECK(t && t->count == 1 && t->incl_sum_ns == 4);
    CHECK(TIMER(&p, ch[0]) != NULL);
    CHECK(TIMER(&p, ch[11], ch[10]) != NULL);
    free(p.data);

    callpath_run(PPW_CALLPATH_MAX);
    CHECK_INT(load(T->index, &p), 0);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 4 + 12);
    CHECK(TIMER(&p, ch[9], ch[8], ch[7], ch[6], ch[5], ch[4], ch[3], ch[2], ch[1], ch[0]));
    t = TIMER(&p, ch[11], ch[10], ch[9], ch[8], ch[7], ch[6], ch[5], ch[4], ch[3], ch[2]);
    CHECK(t && t->count == 1 && t->incl_sum_ns == 1);
    t = TIMER(&p, ch[0]);
    CHECK(t && t->incl_sum_ns == 12);
    free(p.data);
}

static void recurse(int n)
{
    S("rec_f");
    tick(10);
    if (n > 1)
        recurse(n - 1);
    E("rec_f");
}

static void test_recursion(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    recurse(5);
    end();
    uint32_t f = region_id("rec_f");
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 5);
    const struct ppw_rec_timer *t5 = TIMER(&p, f, f, f, f, f), *t1 = TIMER(&p, f);
    CHECK(t5 && t5->count == 1 && t5->incl_sum_ns == 10 && t5->subcalls == 0);
    CHECK(t1 && t1->count == 1 && t1->incl_sum_ns == 50 && t1->excl_sum_ns == 10);
    CHECK(t1 && t1->probes_inner == 4 && t1->probes_child == 1);
    free(p.data);

    begin(PPW_MODE_PROFILE, 1, 0, 0);
    recurse(5);
    end();
    CHECK_INT(load(T->index, &p), 0);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 1);
    const struct ppw_rec_timer *t = TIMER(&p, f);
    CHECK(t && t->count == 5 && t->subcalls == 4 && t->excl_sum_ns == 50);
    CHECK(t && t->incl_sum_ns == 50 + 40 + 30 + 20 + 10);
    free(p.data);
}

static void test_mismatch(void)
{
    int notes = stub_nnotes;
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    E("mm_never"); /* before any START: ignored */
    S("mm_a");
    S("mm_b");
    S("mm_c");
    tick(5);
    E("mm_a"); /* longjmp out of c and b */
    static const char *deep[9] = {"mm_d0", "mm_d1", "mm_d2", "mm_d3", "mm_d4",
                                  "mm_d5", "mm_d6", "mm_d7", "mm_d8"};
    for (int i = 0; i < 9; i++)
        S(deep[i]);
    E("mm_d0"); /* 9th from the top: too far, ignored */
    for (int i = 8; i >= 0; i--)
        E(deep[i]);
    E("mm_a"); /* after its end: ignored */
    end();
    uint32_t a = region_id("mm_a"), b = region_id("mm_b"), c = region_id("mm_c");
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *ta = TIMER(&p, a), *tb = TIMER(&p, b, a), *tc = TIMER(&p, c, b, a);
    CHECK(ta && ta->count == 1 && ta->flags == 0 && ta->incl_sum_ns == 5);
    CHECK(tb && tb->count == 1 && tb->flags == PPW_TIMER_UNWOUND && tb->incl_sum_ns == 5);
    CHECK(tc && tc->count == 1 && tc->flags == PPW_TIMER_UNWOUND);
    for (int i = 0; i < 9; i++) {
        const struct ppw_rec_timer *t = NULL;
        for (uint32_t s = 0; s < p.nslots && !t; s++) {
            const struct ppw_rec_timer *x = slot(&p, s);
            if (x->slot_kind == PPW_SLOT_TIMER && x->path[0] == region_id(deep[i]))
                t = x;
        }
        CHECK(t && t->count == 1 && t->flags == 0);
    }
    CHECK_INT(notes_with(notes, "2 calls closed by an outer END"), 1);
    CHECK_INT(notes_with(notes, "3 END events without an open START ignored"), 1);
    free(p.data);
}

static void test_throttle(void)
{
    int notes = stub_nnotes;
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 100, 1000);
    S("thr_main");
    for (int i = 0; i < 250; i++) {
        call("thr_tiny", 5);
        call("thr_slow", 5000);
    }
    E("thr_main");
    end();
    uint32_t m = region_id("thr_main"), tiny = region_id("thr_tiny"), slow = region_id("thr_slow");
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *tt = TIMER(&p, tiny, m), *ts = TIMER(&p, slow, m),
                               *tm = TIMER(&p, m);
    CHECK(tt && tt->count == 100 && tt->incl_sum_ns == 500);
    CHECK(ts && ts->count == 250);
    const struct ppw_rec_throttle *th = throttle_of(&p, tiny);
    CHECK(th && th->calls_before == 100 && th->mean_ns == 5 && th->calls_after == 150);
    CHECK(throttle_of(&p, slow) == NULL);
    CHECK(tm && tm->subcalls == 500 && tm->probes_child == 350 && tm->throttled_child == 150);
    CHECK(tm && tm->probes_inner == 350 && tm->probes_throttled == 150);
    CHECK(tm && tm->incl_sum_ns == 250 * 5 + 250 * 5000);
    CHECK(tm && tm->excl_sum_ns == 150 * 5);
    CHECK_INT(notes_with(notes, "throttled region thr_tiny after 100 calls, mean 5 ns"), 1);
    CHECK_INT(notes_with(notes, "thr_slow"), 0);
    CHECK_INT(notes_with(notes, "ignored"), 0);
    free(p.data);

    /* a second thread throttles it too, without a second note */
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 100, 1000);
    for (int i = 0; i < 101; i++)
        call("thr_tiny", 5);
    end();
    CHECK_INT(load(T->index, &p), 0);
    th = throttle_of(&p, tiny);
    CHECK(th && th->calls_before == 100 && th->calls_after == 1);
    CHECK_INT(notes_with(notes, "throttled region thr_tiny"), 1);
    free(p.data);

    /* throttle_calls 0: never */
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 1000);
    for (int i = 0; i < 300; i++)
        call("thr_tiny", 5);
    end();
    CHECK_INT(load(T->index, &p), 0);
    CHECK(throttle_of(&p, tiny) == NULL);
    CHECK(TIMER(&p, tiny) && TIMER(&p, tiny)->count == 300);
    free(p.data);
}

/* Throttling starts at the innermost END of a 3-deep recursion: the two
 * open outer calls still pop, later recursions are not pushed at all, and
 * every END matches. */
static void rec3(const char *f, int n)
{
    S(f);
    tick(1);
    if (n > 1)
        rec3(f, n - 1);
    E(f);
}

static void test_throttle_recursion(void)
{
    int notes = stub_nnotes;
    begin(PPW_MODE_PROFILE, 1, 10, 1000);
    S("thrr_outer");
    for (int k = 0; k < 8; k++) {
        rec3("thrr_f", 3);
        if (k == 3) {
            /* throttled at the 10th END, inside iteration 3: 12 recorded */
            S("thrr_mark");
            E("thrr_mark");
        }
    }
    tick(1);
    E("thrr_outer");
    end();
    uint32_t o = region_id("thrr_outer"), f = region_id("thrr_f");
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *tf = TIMER(&p, f), *to = TIMER(&p, o);
    CHECK(tf && tf->count == 12);
    const struct ppw_rec_throttle *th = throttle_of(&p, f);
    CHECK(th && th->calls_before == 10 && th->calls_after == 12);
    CHECK(to && to->count == 1 && to->flags == 0);
    /* throttled calls are not pushed: nested ones count as direct children
     * of the nearest pushed call, where their probe cost lands */
    CHECK(to && to->subcalls == 4 + 1 + 12 && to->throttled_child == 12);
    CHECK(to && to->probes_child == 4 + 1 && to->probes_inner == 12 + 1);
    CHECK(to && to->probes_throttled == 12);
    CHECK_INT(notes_with(notes, "ignored"), 0);
    free(p.data);
}

static void test_atomic_and_open(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    unsigned ev = ppw_create_event("atomic_counter", NULL);
    CHECK(ev >= GASP_PPW_USEREVT_START && ev <= GASP_PPW_USEREVT_END);
    S("ao_a");
    for (int i = 0; i < 5; i++) {
        tick(3);
        ppw_event_atomic(ev);
    }
    E("ao_a");
    S("ao_open");
    S("ao_inner");
    tick(4);
    end(); /* the thread ends inside two calls */
    uint32_t a = region_id("ao_a"), u = region_id("atomic_counter");
    uint32_t op = region_id("ao_open"), in = region_id("ao_inner");
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *tu = TIMER(&p, u, a), *ta = TIMER(&p, a);
    CHECK(tu && tu->count == 5 && tu->incl_sum_ns == 0 && tu->incl_max_ns == 0);
    CHECK(ta && ta->subcalls == 5 && ta->excl_sum_ns == 15);
    const struct ppw_rec_timer *to = TIMER(&p, op), *ti = TIMER(&p, in, op);
    CHECK(to && to->count == 1 && to->flags == PPW_TIMER_OPEN && to->incl_sum_ns == 4);
    CHECK(ti && ti->count == 1 && ti->flags == PPW_TIMER_OPEN);
    free(p.data);
}

/* ---- trace ------------------------------------------------------------------ */

struct trace_rec {
    struct ppw_rec_trace r;
    const uint64_t *args;
    const char *text;
};

static int trace_next(const struct ppw_stream *s, uint64_t *off, struct trace_rec *out)
{
    while (*off < s->end) {
        const struct ppw_rec_frame *f = (const struct ppw_rec_frame *)(s->window + *off);
        *off += f->size;
        if (f->kind != PPW_EVT_TRACE)
            continue;
        memcpy(&out->r, f + 1, sizeof out->r);
        out->args = (const uint64_t *)((const uint8_t *)(f + 1) + sizeof out->r);
        out->text =
            out->r.nargs & 0x8000 ? (const char *)(out->args + (out->r.nargs & 0x7fff)) : NULL;
        return 1;
    }
    return 0;
}

static void test_trace(void)
{
    begin(PPW_MODE_TRACE, PPW_CALLPATH_MAX, 0, 0);
    unsigned ev = ppw_create_event("tr_solve", "iteration %d of %s");
    S("tr_f");
    tick(1);
    gasp_event_notify(NULL, GASP_C_MALLOC, GASP_START, "t.c", 7, 3, (uint64_t)64);
    gasp_event_notify(NULL, GASP_C_MALLOC, GASP_END, "t.c", 7, 3, (uint64_t)64, (uint64_t)0xabcd);
    gasp_event_notify(NULL, GASP_MPI_SENDRECV, GASP_START, "t.c", 8, 1, 1ull, 2ull, 3ull, 4ull,
                      5ull, 6ull, 7ull, 8ull, 9ull);
    gasp_event_notify(NULL, GASP_MPI_SENDRECV, GASP_END, "t.c", 8, 1, 1ull, 2ull, 3ull, 4ull, 5ull,
                      6ull, 7ull, 8ull, 9ull, 10ull);
    gasp_event_notify(NULL, GASP_OMP_TASK_CREATE, GASP_START, "t.c", 9, 1, 11ull);
    gasp_event_notify(NULL, GASP_OMP_TASK_CREATE, GASP_END, "t.c", 9, 1, 11ull, 12ull);
    ppw_event_start(ev, 7, "abc");
    ppw_event_end(ev, 7, "abc");
    gasp_event_notify(NULL, 4242u, GASP_ATOMIC, "t.c", 10, 1);
    tick(1);
    E("tr_f");
    struct ppw_stream *s = &T->events;
    uint64_t off = 0;
    struct trace_rec r;
    struct {
        uint32_t region;
        uint16_t type, nargs;
        uint64_t last_arg;
        const char *text;
    } want[] = {
        {region_id("tr_f"), GASP_START, 0, 0, NULL},
        {0, GASP_START, 1, 64, NULL},
        {0, GASP_END, 2, 0xabcd, NULL},
        {0, GASP_START, 9, 9, NULL},
        {0, GASP_END, 10, 10, NULL},
        {0, GASP_START, 1, 11, NULL},
        {0, GASP_END, 2, 12, NULL},
        {region_id("tr_solve"), GASP_START, 0x8000, 0, "iteration 7 of abc"},
        {region_id("tr_solve"), GASP_END, 0x8000, 0, "iteration 7 of abc"},
        {region_id("tag 4242"), GASP_ATOMIC, 0, 0, NULL},
        {region_id("tr_f"), GASP_END, 0, 0, NULL},
    };
    uint64_t last_time = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!trace_next(s, &off, &r)) {
            FAIL_AT("trace record %zu missing", i);
            break;
        }
        if (want[i].region)
            CHECK_INT(r.r.region, want[i].region);
        CHECK(r.r.region != 0);
        CHECK_INT(r.r.evttype, want[i].type);
        CHECK_INT(r.r.nargs, want[i].nargs);
        uint16_t n = r.r.nargs & 0x7fff;
        if (n)
            CHECK_INT(r.args[n - 1], want[i].last_arg);
        if (want[i].text)
            CHECK_STR(r.text, want[i].text);
        CHECK(r.r.time_ns >= last_time);
        last_time = r.r.time_ns;
    }
    CHECK(!trace_next(s, &off, &r));
    const struct ppw_rec_region *mr = region_rec(region_id("GASP_C_MALLOC"));
    CHECK(mr && mr->kind == PPW_REGION_CALLSITE && mr->op == PPW_OP_MEM_ALLOC && mr->line == 7 &&
          mr->col == 3);
    const struct ppw_rec_region *ur = region_rec(region_id("tr_solve"));
    CHECK(ur && ur->kind == PPW_REGION_USER && ur->tag == ev);
    const struct ppw_rec_region *xr = region_rec(region_id("tag 4242"));
    CHECK(xr && xr->tag == 4242);
    struct profile p;
    end();
    CHECK(load(T->index, &p) < 0); /* trace only: no profile file */
    free(T->events.window);
}

/* throttled regions leave the trace */
static void test_trace_throttled(void)
{
    begin(BOTH, PPW_CALLPATH_MAX, 3, 1000);
    for (int i = 0; i < 5; i++)
        call("trt_f", 2);
    uint64_t off = 0;
    struct trace_rec r;
    int n = 0;
    while (trace_next(&T->events, &off, &r))
        n++;
    CHECK_INT(n, 6);
    end();
    free(T->events.window);
}

/* ---- entry points, user events, failures ------------------------------------ */

static void test_entry_points(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    CHECK(gasp_init(GASP_LANG_C, NULL, NULL) == (gasp_context_t)T);
    CHECK(gasp_init(GASP_LANG_C, NULL, NULL) == (gasp_context_t)T);
    CHECK_INT(gasp_control(NULL, 0), 1);
    call("ep_paused", 5);
    CHECK_INT(ppw_control(1), 0);
    CHECK_INT(ppw_control(1), 1);
    errno = 1234;
    call("ep_a", 5);
    CHECK_INT(errno, 1234);
    T->in_ppw = 1; /* an event from inside libppw */
    call("ep_a", 5);
    T->in_ppw = 0;
    gasp_event_notify(NULL, GASP_C_FUNC, (gasp_evttype_t)7, "t.c", 1, 0, "ep_a");
    end();
    CHECK_INT(region_records("ep_paused"), 0);
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *t = TIMER(&p, region_id("ep_a"));
    CHECK(t && t->count == 1);
    free(p.data);

    /* a thread libppw does not know: ensure once, then quietly nothing */
    struct ppw_thread *saved = T;
    stub_self = NULL;
    int calls = stub_ensure_calls;
    call("ep_foreign", 1);
    call("ep_foreign", 1);
    CHECK_INT(stub_ensure_calls, calls + 1);
    CHECK(gasp_init(GASP_LANG_C, NULL, NULL) != NULL);
    CHECK_INT(ppw_create_event("ep_foreign_event", NULL), 0);
    CHECK_INT(region_records("ep_foreign"), 0);
    stub_self = saved;
}

/* libppw off for good (PPW_DISABLE=1, a failed start): an event closes
 * its site's gate and a gated function's switch, so that their calls stay
 * in the program's code; a thread libppw merely does not know leaves them
 * open, since other threads are measured. */
static void test_off_closes_gates(void)
{
    struct ppw_thread *saved = stub_self;
    stub_self = NULL;
    for (int off = 0; off <= 1; off++) {
        stub_lifecycle_off = off;
        struct ppw_gasp_site site = {1, 0};
        unsigned char enable = 1;
        gasp_event_notify(NULL, GASP_C_MALLOC | GASP_PPW_SITE, GASP_START, "t.c", 1, 0, &site,
                          (int64_t)1, (size_t)8);
        gasp_event_notify(NULL, GASP_C_FUNC_GATED, GASP_START, "t.c", 2, 0, "off_f", &enable);
        CHECK_INT(site.gate, off ? 0 : 1);
        CHECK_INT(enable, off ? 0 : 1);
    }
    stub_lifecycle_off = 0;
    stub_self = saved;
}

/* The first event of a thread that started before libppw was up. */
static void *early_thread(void *arg)
{
    stub_ensure_sets = arg;
    S("early_f");
    E("early_f");
    stub_ensure_sets = NULL;
    return NULL;
}

static void test_early_start(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    stub_self = NULL;
    pthread_t th;
    pthread_create(&th, NULL, early_thread, T);
    pthread_join(th, NULL);
    end();
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *t = TIMER(&p, region_id("early_f"));
    CHECK(t && t->count == 1);
    free(p.data);
}

static void test_user_events(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    unsigned a = ppw_create_event("ue_a", "x=%d"), a2 = gasp_create_event(NULL, "ue_a", "x=%d");
    unsigned b = ppw_create_event("ue_a", NULL), c = ppw_create_event("ue_c", NULL);
    CHECK(a >= GASP_PPW_USEREVT_START && a <= GASP_PPW_USEREVT_END);
    CHECK_INT(a2, a);
    CHECK(b != a && c != a && c != b && b && c);
    CHECK_INT(region_records("ue_a"), 2);
    /* an id nobody created is an unknown tag */
    ppw_event_start(999);
    tick(2);
    ppw_event_end(999);
    end();
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    const struct ppw_rec_timer *t = TIMER(&p, region_id("tag 999"));
    CHECK(t && t->count == 1 && t->incl_sum_ns == 2);
    free(p.data);
}

/* Must run last: uses up the process's user event ids. */
static void test_user_exhaustion(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    unsigned last = 0;
    int exhausted = 0;
    for (int i = 0; i < 1000; i++) {
        char name[32];
        snprintf(name, sizeof name, "ux_%d", i);
        unsigned id = ppw_create_event(name, NULL);
        if (id)
            last = id;
        else
            exhausted = 1;
    }
    CHECK_INT(last, GASP_PPW_USEREVT_END);
    CHECK(exhausted);
    CHECK(ppw_create_event("ue_c", NULL) != 0); /* existing ones are still found */
    end();
}

static void test_profile_failure(void)
{
    int notes = stub_nnotes;
    stub_reserve_budget = 0; /* cannot create */
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    call("pf_a", 1);
    call("pf_a", 1);
    end();
    stub_reserve_budget = -1;
    struct profile p;
    CHECK(load(T->index, &p) < 0);
    CHECK_INT(notes_with(notes, "profile incomplete: cannot create"), 1);

    /* creation works, growth does not: the first slots stay */
    notes = stub_nnotes;
    stub_reserve_budget = 1;
    begin(PPW_MODE_PROFILE, 2, 0, 0);
    static char names[300][16]; /* funcsig pointers: never reused by another test */
    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof names[i], "pf_%d", i);
        call(names[i], 1);
    }
    end();
    stub_reserve_budget = -1;
    CHECK_INT(notes_with(notes, "profile incomplete: cannot grow"), 1);
    CHECK_INT(load(T->index, &p), 0);
    /* measure.c's PROF_INITIAL: timers, and the probe windows' slot when
     * a window closed before the 24th function's first call */
    CHECK_INT(p.nslots, 24);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER) + count_kind(&p, PPW_SLOT_PROBE), 24);
    CHECK(count_kind(&p, PPW_SLOT_TIMER) >= 23);
    const struct ppw_rec_timer *t = TIMER(&p, region_id("pf_0"));
    CHECK(t && t->count == 1);
    free(p.data);
}

static void test_growth(void)
{
    begin(PPW_MODE_PROFILE, 2, 0, 0);
    static char names[1000][16];
    for (int i = 0; i < 1000; i++)
        snprintf(names[i], sizeof names[i], "gr_%d", i);
    S("gr_root");
    for (int rep = 0; rep < 3; rep++)
        for (int i = 0; i < 1000; i++)
            call(names[i], (uint64_t)i);
    E("gr_root");
    end();
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 1001);
    uint32_t root = region_id("gr_root");
    int good = 0;
    for (int i = 0; i < 1000; i++) {
        const struct ppw_rec_timer *t = TIMER(&p, region_id(names[i]), root);
        good += t && t->count == 3 && t->incl_sum_ns == 3 * (uint64_t)i;
    }
    CHECK_INT(good, 1000);
    const struct ppw_rec_timer *t = TIMER(&p, root);
    CHECK(t && t->subcalls == 3000 && t->probes_child == 3000);
    free(p.data);
}

/* fork child: the inherited file is dropped; open calls end in the new one */
static void test_abandon(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    S("ab_main");
    call("ab_before", 1);
    uint32_t parent_index = T->index;
    ppw_measure_thread_abandon(T);
    T->index = next_index++;
    ppw_measure_thread_begin(T); /* keeps the state */
    CHECK(T->measure != NULL);
    call("ab_after", 2);
    tick(3);
    E("ab_main");
    end();
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    uint32_t m = region_id("ab_main");
    const struct ppw_rec_timer *t = TIMER(&p, m);
    CHECK(t && t->count == 1 && t->incl_sum_ns == 6 && t->subcalls == 2);
    CHECK(TIMER(&p, region_id("ab_after"), m) != NULL);
    CHECK(TIMER(&p, region_id("ab_before"), m) == NULL);
    free(p.data);
    CHECK_INT(load(parent_index, &p), 0); /* as the parent last wrote it */
    CHECK(!(p.h->flags & PPW_FILE_CLOSED));
    free(p.data);
}

/* A fork()ed child: the parent's calibration, every region named again in
 * the child's run file; inherited states of other threads are freed. */
static void test_fork_child(void)
{
    struct ppw_thread *other = new_thread();
    ppw_measure_thread_begin(other);
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 0, 0);
    S("fk_main");
    const struct ppw_rec_calib *parent_calib = NULL;
    for (int i = 0; i < stub_nrecords; i++)
        if (stub_records[i].kind == PPW_RUN_CALIB)
            parent_calib = (const struct ppw_rec_calib *)stub_records[i].fixed;
    uint32_t nregions = 0;
    for (int i = 0; i < stub_nrecords; i++)
        nregions += stub_records[i].kind == PPW_RUN_REGION;
    fflush(NULL);
    ppw_measure_fork_prepare();
    pid_t pid = fork();
    if (pid == 0) {
        ppw_measure_fork_child();
        int first = stub_nrecords, bad = 0;
        struct ppw_rec_calib before = *parent_calib;
        ppw_measure_init();
        uint32_t rewritten = 0;
        for (int i = first; i < stub_nrecords; i++) {
            rewritten += stub_records[i].kind == PPW_RUN_REGION;
            if (stub_records[i].kind == PPW_RUN_CALIB)
                bad |= memcmp(stub_records[i].fixed, &before, sizeof before) != 0;
        }
        bad |= rewritten != nregions;
        ppw_measure_thread_abandon(other);
        bad |= other->measure != NULL;
        ppw_measure_thread_abandon(T);
        bad |= T->measure == NULL;
        S("fk_child_new"); /* registers a region: the registry lock is free */
        E("fk_child_new");
        bad |= region_id("fk_child_new") == 0;
        _exit(bad);
    }
    ppw_measure_fork_parent();
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    E("fk_main");
    end();
    stub_self = other;
    ppw_measure_thread_end(other);
}

/* Threads share region ids; each region is registered once. */
static const char *mt_names[50];

static void *worker(void *arg)
{
    stub_self = arg;
    for (int rep = 0; rep < 20; rep++)
        for (int i = 0; i < 50; i++) {
            S(mt_names[i]);
            E(mt_names[i]);
        }
    return NULL;
}

static void test_threads(void)
{
    ppw_config.modes = PPW_MODE_PROFILE;
    ppw_config.callpath_depth = PPW_CALLPATH_MAX;
    ppw_config.throttle_calls = 0;
    stub_fake_clock = 0;
    enum { N = 4 };
    struct ppw_thread *ts[N];
    pthread_t th[N];
    for (int i = 0; i < 50; i++) {
        char *n = malloc(16);
        snprintf(n, 16, "mt_%d", i);
        mt_names[i] = n;
    }
    for (int i = 0; i < N; i++) {
        ts[i] = new_thread();
        ppw_measure_thread_begin(ts[i]);
        pthread_create(&th[i], NULL, worker, ts[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    int total = 0;
    for (int i = 0; i < stub_nrecords; i++)
        total += stub_records[i].kind == PPW_RUN_REGION &&
                 strncmp(stub_records[i].strings[0], "mt_", 3) == 0;
    CHECK_INT(total, 50);
    for (int i = 0; i < N; i++) {
        ppw_measure_thread_end(ts[i]);
        struct profile p;
        CHECK_INT(load(ts[i]->index, &p), 0);
        CHECK_INT(count_kind(&p, PPW_SLOT_TIMER), 50);
        int good = 0;
        for (int r = 0; r < 50; r++) {
            const struct ppw_rec_timer *t = TIMER(&p, region_id(mt_names[r]));
            good += t && t->count == 20;
        }
        CHECK_INT(good, 50);
        free(p.data);
    }
}

/* Probe windows, on a clock that advances 10 ns at every read: a timed
 * START or END reads it four times (the gap's first read, entry, its own
 * read, exit), so its window is 20 ns with 10 on each side of its own
 * read; a throttled one reads it three times. */
static void test_probe_windows(void)
{
    begin(PPW_MODE_PROFILE, PPW_CALLPATH_MAX, 100, 1000000);
    stub_clock_step = 10;
    /* The 400 timed events in one stretch, then the throttled ones: a
     * window falls on a timed event once in 32 to 96 events only where no
     * throttled events are interleaved (they take windows too). */
    for (int i = 0; i < 100; i++) /* timed, then pw_a is throttled */
        call("pw_a", 0);
    for (int i = 0; i < 100; i++) /* timed, then pw_b is throttled too */
        call("pw_b", 0);
    for (int i = 0; i < 6300; i++) {
        call("pw_b", 0);
        call("pw_a", 0);
    }
    for (int i = 0; i < 100; i++)
        call("pw_a", 0);
    stub_clock_step = 20000; /* every window looks preempted */
    for (int i = 0; i < 640; i++)
        call("pw_a", 0);
    stub_clock_step = 0;
    end();
    struct profile p;
    CHECK_INT(load(T->index, &p), 0);
    CHECK_INT(count_kind(&p, PPW_SLOT_PROBE), 1);
    const struct ppw_rec_probe *w = probe_of(&p);
    CHECK(w != NULL);
    if (w) {
        CHECK_INT(w->window_period, PPW_PROBE_WINDOW_PERIOD);
        /* 200 timed pairs, 25400 + 1280 throttled events: one in 32 to 96
         * of them timed */
        uint64_t timed = w->start_count + w->end_count;
        CHECK(timed >= 400 / 96 && timed <= 400 / 32 + 1);
        CHECK_INT(w->start_ns, 20 * w->start_count);
        CHECK_INT(w->start_tail_ns, 10 * w->start_count);
        CHECK_INT(w->end_ns, 20 * w->end_count);
        CHECK_INT(w->end_head_ns, 10 * w->end_count);
        CHECK(w->throttled_count >= 25600 / 96 && w->throttled_count <= 25600 / 32 + 1);
        CHECK_INT(w->throttled_ns, 10 * w->throttled_count);
        /* every window starts with two reads 10 ns apart */
        CHECK_INT(w->clock_ns, 10 * (w->start_count + w->end_count + w->throttled_count));
        CHECK(w->interrupted >= 1280 / 96 && w->interrupted <= 1280 / 32 + 1);
    }
    free(p.data);
}

static void test_calibration(void)
{
    uint32_t mode_sets[2] = {PPW_MODE_PROFILE, BOTH};
    for (int k = 0; k < 2; k++) {
        ppw_config.modes = mode_sets[k];
        ppw_config.callpath_depth = PPW_CALLPATH_MAX;
        ppw_config.throttle_calls = 5; /* must not throttle the calibration itself */
        ppw_config.throttle_ns = 10000;
        stub_fake_clock = 0;
        stub_self = NULL;
        int first = stub_nrecords;
        CHECK_INT(ppw_measure_init(), 0);
        const struct ppw_rec_config *cf = NULL;
        const struct ppw_rec_calib *cb = NULL;
        for (int i = first; i < stub_nrecords; i++) {
            if (stub_records[i].kind == PPW_RUN_CONFIG)
                cf = (const struct ppw_rec_config *)stub_records[i].fixed;
            if (stub_records[i].kind == PPW_RUN_CALIB)
                cb = (const struct ppw_rec_calib *)stub_records[i].fixed;
            CHECK(stub_records[i].kind != PPW_RUN_REGION); /* writes nothing else */
        }
        CHECK(cf && cf->modes == mode_sets[k] && cf->callpath_depth == PPW_CALLPATH_MAX &&
              cf->throttle_calls == 5 && cf->throttle_ns == 10000);
        CHECK(cb != NULL);
        if (!cb)
            continue;
        CHECK(cb->iterations >= 3000);
        CHECK(isfinite(cb->pair_ns) && cb->pair_ns > 0);
        CHECK(isfinite(cb->inner_ns) && cb->inner_ns > 0 && cb->inner_ns <= cb->pair_ns);
        CHECK(isfinite(cb->throttled_pair_ns) && cb->throttled_pair_ns > 0);
        CHECK(isfinite(cb->clock_ns) && cb->clock_ns > 0);
        /* windows were timed as in a program: every kind seen */
        CHECK_INT(cb->window_period, PPW_PROBE_WINDOW_PERIOD);
        CHECK(cb->window_start_ns > 0 && cb->window_end_ns > 0 && cb->window_inner_ns > 0 &&
              cb->window_throttled_ns > 0);
        CHECK(cb->window_inner_ns < cb->window_start_ns + cb->window_end_ns);
        CHECK(cb->window_clock_ns > 0 && cb->window_clock_ns < cb->window_start_ns);
        printf("  calibration (%s): pair %.1f ns, inner %.1f ns, throttled pair %.1f ns, "
               "clock %.1f ns, %llu pairs; windows start %.1f end %.1f inner %.1f throttled "
               "%.1f gap %.1f ns\n",
               k ? "profile+trace" : "profile", cb->pair_ns, cb->inner_ns, cb->throttled_pair_ns,
               cb->clock_ns, (unsigned long long)cb->iterations, cb->window_start_ns,
               cb->window_end_ns, cb->window_inner_ns, cb->window_throttled_ns,
               cb->window_clock_ns);
    }
}

int main(void)
{
    char dir[] = "/tmp/ppw-test-measure-XXXXXX";
    if (!mkdtemp(dir) || (stub_dirfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0) {
        perror("test_measure: temporary directory");
        return 1;
    }
    ppw_config.modes = PPW_MODE_PROFILE;
    ppw_config.throttle_calls = 0;
    stub_fake_clock = 0;
    if (ppw_measure_init() != 0)
        FAIL_AT("ppw_measure_init");

    RUN(test_counts);
    RUN(test_nested);
    RUN(test_callpaths);
    RUN(test_recursion);
    RUN(test_mismatch);
    RUN(test_throttle);
    RUN(test_throttle_recursion);
    RUN(test_atomic_and_open);
    RUN(test_trace);
    RUN(test_trace_throttled);
    RUN(test_entry_points);
    RUN(test_early_start);
    RUN(test_off_closes_gates);
    RUN(test_user_events);
    RUN(test_profile_failure);
    RUN(test_growth);
    RUN(test_abandon);
    RUN(test_fork_child);
    RUN(test_threads);
    RUN(test_probe_windows);
    RUN(test_calibration);
    RUN(test_user_exhaustion);

    char cmd[64 + sizeof dir];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_measure: could not remove %s\n", dir);
    return harness_exit();
}
