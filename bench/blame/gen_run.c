/* Writes a synthetic run directory for bench/blame: NSTACKS unique stacks
 * and NSAMPLES samples of a real ppw-cc-built binary (bench/blame/gen_prog.c),
 * spread over three threads (main and two pthreads, with their spawn
 * records), so that ppw-blame report reads, glues, symbolizes and
 * attributes a run the size of a long real one.
 *
 *   gen_run SITES BIN LO HI DIR NSTACKS NSAMPLES
 *
 * SITES is BIN's code as `objdump -d` lines reduced by bench/blame/run:
 *   F NAME          a function starts
 *   I ADDR          an instruction of the current function (hex)
 *   C RET CALLEE    a call in it; RET is the return address (hex)
 * LO and HI are the link-time range of BIN's PT_LOAD segments (hex).
 *
 * Each stack is a random walk of call sites from main (or from a thread's
 * start routine) through real return addresses, 5 to 40 frames, ending at
 * an instruction of the leaf function.  The module map places BIN at a
 * PIE bias with its real build-id.  The first NSTACKS samples take each
 * stack once; the rest are skewed towards the first stacks.  Deterministic. */
#define _DEFAULT_SOURCE /* strdup, realpath */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "read_elf.h"
#include "run_writer.h"

#define BIAS 0x555555554000ull
#define NTHREADS 3
#define PID 31337
#define PERIOD_NS 1000000ull

struct site {
    uint64_t ret;
    char *callee_name;
    int callee; /* index into funcs, -1: not a function of BIN's code */
};

struct func {
    char *name;
    uint64_t *insn;
    size_t ninsn, insn_cap;
    struct site *sites;
    size_t nsites, sites_cap;
};

static struct func *funcs;
static size_t nfuncs, funcs_cap;

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t cap2 = *cap ? *cap * 2 : 16;
    while (cap2 < need)
        cap2 *= 2;
    p = realloc(p, cap2 * elem);
    if (!p) {
        fputs("gen_run: out of memory\n", stderr);
        exit(1);
    }
    *cap = cap2;
    return p;
}

static int find_func(const char *name)
{
    for (size_t i = 0; i < nfuncs; i++)
        if (strcmp(funcs[i].name, name) == 0)
            return (int)i;
    return -1;
}

static int read_sites(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "gen_run: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[1024], name[512];
    uint64_t addr;
    struct func *cur = NULL;
    while (fgets(line, sizeof line, in)) {
        if (sscanf(line, "F %511s", name) == 1) {
            funcs = grow(funcs, &funcs_cap, nfuncs + 1, sizeof *funcs);
            cur = &funcs[nfuncs++];
            memset(cur, 0, sizeof *cur);
            cur->name = strdup(name);
        } else if (cur && sscanf(line, "I %" SCNx64, &addr) == 1) {
            cur->insn = grow(cur->insn, &cur->insn_cap, cur->ninsn + 1, sizeof *cur->insn);
            cur->insn[cur->ninsn++] = addr;
        } else if (cur && sscanf(line, "C %" SCNx64 " %511s", &addr, name) == 2) {
            cur->sites = grow(cur->sites, &cur->sites_cap, cur->nsites + 1, sizeof *cur->sites);
            cur->sites[cur->nsites++] = (struct site){addr, strdup(name), -1};
        }
    }
    fclose(in);
    /* Walks follow calls into BIN's own functions only (not PLT stubs). */
    for (size_t i = 0; i < nfuncs; i++)
        for (size_t k = 0; k < funcs[i].nsites; k++) {
            struct site *s = &funcs[i].sites[k];
            int c = strchr(s->callee_name, '@') ? -1 : find_func(s->callee_name);
            s->callee = c >= 0 && funcs[c].ninsn ? c : -1;
        }
    return 0;
}

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* The unique stacks: frames back to back, innermost first. */
struct stacks {
    uint64_t *frames;
    size_t nframes, frames_cap;
    size_t *start; /* stack i is frames[start[i] .. start[i + 1]) */
    uint8_t *thread;
    size_t n, cap, thread_cap;
    size_t *table; /* open addressing: 1 + stack index, 0 empty */
    size_t table_size;
};

static uint64_t hash_frames(const uint64_t *f, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ f[i]) * 0x100000001b3ull;
    return h;
}

/* Adds the stack unless it is there; returns 1 when added. */
static int stacks_add(struct stacks *st, const uint64_t *f, size_t n, uint8_t thread)
{
    size_t mask = st->table_size - 1, i = hash_frames(f, n) & mask;
    for (; st->table[i]; i = (i + 1) & mask) {
        size_t k = st->table[i] - 1, len = st->start[k + 1] - st->start[k];
        if (len == n && memcmp(&st->frames[st->start[k]], f, n * sizeof *f) == 0)
            return 0;
    }
    st->frames = grow(st->frames, &st->frames_cap, st->nframes + n, sizeof *f);
    memcpy(&st->frames[st->nframes], f, n * sizeof *f);
    st->nframes += n;
    st->start = grow(st->start, &st->cap, st->n + 2, sizeof *st->start);
    st->thread = grow(st->thread, &st->thread_cap, st->n + 2, 1);
    st->thread[st->n] = thread;
    st->start[++st->n] = st->nframes;
    st->table[i] = st->n;
    return 1;
}

/* One random walk from root: frames innermost first, 5 to 40 of them;
 * returns their count, 0 when the walk ended too soon. */
static size_t walk(int root, uint64_t *out)
{
    size_t want = 5 + rng() % 36, depth = 0;
    uint64_t rets[40];
    int cur = root;
    while (depth + 1 < want && funcs[cur].nsites) {
        const struct site *s = &funcs[cur].sites[rng() % funcs[cur].nsites];
        if (s->callee < 0)
            break;
        rets[depth++] = s->ret + BIAS;
        cur = s->callee;
    }
    if (depth + 1 < 5)
        return 0;
    out[0] = funcs[cur].insn[rng() % funcs[cur].ninsn] + BIAS;
    for (size_t i = 0; i < depth; i++)
        out[1 + i] = rets[depth - 1 - i];
    return depth + 1;
}

static void put_stack(struct run_file *f, uint32_t id, const uint64_t *frames, size_t n)
{
    struct ppw_rec_stack s = {id, (uint16_t)n, PPW_STACK_LEAF_PC};
    rf_record(f, PPW_SMP_STACK, &s, sizeof s, frames, n * sizeof *frames, NULL);
}

static void put_sample(struct run_file *f, uint32_t stack, uint64_t time)
{
    struct ppw_rec_sample s = {stack, 0, time, PERIOD_NS};
    rf_record(f, PPW_SMP_SAMPLE, &s, sizeof s, NULL, 0, NULL);
}

/* The return address of main's k-th call to pthread_create. */
static uint64_t spawn_site(int main_fn, int k)
{
    for (size_t i = 0; i < funcs[main_fn].nsites; i++)
        if (strncmp(funcs[main_fn].sites[i].callee_name, "pthread_create", 14) == 0 && k-- == 0)
            return funcs[main_fn].sites[i].ret + BIAS;
    return 0;
}

static void write_run_file(struct run_file *f, const struct run_image *exe, const int *roots,
                           uint64_t end_ns, const uint64_t *nsamples)
{
    struct ppw_rec_run_info info = {PID, 1, 1000, 1700000000000000000ull, 2, 0, 1};
    const char *info_strings[] = {"benchhost", exe->path, "/tmp", NULL};
    rf_record(f, PPW_RUN_INFO, &info, sizeof info, NULL, 0, info_strings);
    uint32_t argv_head[2] = {1, 0};
    const char *argv[] = {exe->path, NULL};
    rf_record(f, PPW_RUN_ARGV, argv_head, sizeof argv_head, NULL, 0, argv);
    struct ppw_rec_metric metric = {
        PPW_METRIC_POSIX_CPU_TIMER, PPW_UNIT_NS, PERIOD_NS, 10, 34, 128, 0};
    const char *metric_strings[] = {"cpu-clock", "", NULL};
    rf_record(f, PPW_RUN_METRIC, &metric, sizeof metric, NULL, 0, metric_strings);
    struct ppw_rec_config config = {PPW_MODE_SAMPLE, 1, 0, 0, 0, 0};
    rf_record(f, PPW_RUN_CONFIG, &config, sizeof config, NULL, 0, NULL);
    rf_module(f, PPW_RUN_MODULE, exe, PPW_MODULE_EXE);
    for (uint32_t t = 0; t < NTHREADS; t++) {
        struct ppw_rec_thread th = {
            t, 1000 + t, t ? 0 : UINT32_MAX, t, t ? funcs[roots[t]].insn[0] + BIAS : 0, 1000 + t};
        rf_record(f, PPW_RUN_THREAD, &th, sizeof th, NULL, 0, NULL);
    }
    for (uint32_t t = NTHREADS; t-- > 0;) {
        struct ppw_rec_thread_end e = {t, 0, end_ns, end_ns, nsamples[t], 0, 0};
        rf_record(f, PPW_RUN_THREAD_END, &e, sizeof e, NULL, 0, NULL);
    }
    struct ppw_rec_finish finish = {end_ns + 1, NTHREADS};
    rf_record(f, PPW_RUN_FINISH, &finish, sizeof finish, NULL, 0, NULL);
}

static int parse_u64(const char *s, int base, uint64_t *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, base);
    return errno || !*s || *end ? -1 : 0;
}

/* Fills img from BIN: path, PIE bias, range, build-id. */
static int exe_image(const char *bin, uint64_t lo, uint64_t hi, struct run_image *img)
{
    struct ppw_elf *elf;
    struct ppw_err err = {0};
    memset(img, 0, sizeof *img);
    if (!realpath(bin, img->path) || ppw_elf_open(bin, &elf, &err) != 0) {
        fprintf(stderr, "gen_run: cannot open %s\n", bin);
        return -1;
    }
    const char *hex = ppw_elf_build_id(elf);
    for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && i < PPW_BUILD_ID_MAX; i++) {
        unsigned byte;
        sscanf(hex + 2 * i, "%2x", &byte);
        img->build_id[img->build_id_size++] = (uint8_t)byte;
    }
    ppw_elf_close(elf);
    img->bias = BIAS;
    img->lo = lo + BIAS;
    img->hi = hi + BIAS;
    return img->build_id_size ? 0 : -1;
}

int main(int argc, char **argv)
{
    uint64_t lo, hi, nstacks, nsamples;
    if (argc != 8 || parse_u64(argv[3], 16, &lo) || parse_u64(argv[4], 16, &hi) ||
        parse_u64(argv[6], 10, &nstacks) || parse_u64(argv[7], 10, &nsamples) || !nstacks ||
        nsamples < nstacks) {
        fputs("usage: gen_run SITES BIN LO HI DIR NSTACKS NSAMPLES (NSAMPLES >= NSTACKS >= 1)\n",
              stderr);
        return 2;
    }
    struct run_image exe;
    if (read_sites(argv[1]) || exe_image(argv[2], lo, hi, &exe))
        return 1;
    const char *root_names[NTHREADS] = {"main", "worker_0", "worker_1"};
    int roots[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        if ((roots[t] = find_func(root_names[t])) < 0) {
            fprintf(stderr, "gen_run: %s: no function %s\n", argv[1], root_names[t]);
            return 1;
        }

    struct stacks st = {0};
    st.table_size = 1;
    while (st.table_size < 2 * nstacks)
        st.table_size *= 2;
    st.table = calloc(st.table_size, sizeof *st.table);
    st.start = grow(NULL, &st.cap, 2, sizeof *st.start);
    st.start[0] = 0;
    uint64_t frames[40];
    /* Half the stacks on the main thread, a quarter on each worker. */
    for (uint64_t tries = 0; st.n < nstacks; tries++) {
        uint8_t t = (uint8_t)(st.n % 4 < 2 ? 0 : st.n % 4 - 1);
        size_t n = walk(roots[t], frames);
        if (n)
            stacks_add(&st, frames, n, t);
        if (tries > 100 * nstacks + 1000000) {
            fprintf(stderr, "gen_run: found only %zu unique stacks\n", st.n);
            return 1;
        }
    }

    struct run_file run, samples[NTHREADS], events;
    rf_init(&run, PPW_FILE_RUN, UINT32_MAX, PID, exe.build_id, exe.build_id_size);
    rf_init(&events, PPW_FILE_EVENTS, 0, PID, exe.build_id, exe.build_id_size);
    for (uint32_t t = 0; t < NTHREADS; t++)
        rf_init(&samples[t], PPW_FILE_SAMPLES, t, PID, exe.build_id, exe.build_id_size);
    uint32_t *id = calloc(nstacks, sizeof *id), next_id[NTHREADS] = {0};
    uint64_t time = 2000, counts[NTHREADS] = {0};
    for (uint64_t i = 0; i < nsamples; i++) {
        uint64_t k = i;
        if (i >= nstacks) { /* skewed: u^3 favours the first stacks */
            double u = (double)(rng() >> 11) / 9007199254740992.0;
            k = (uint64_t)((double)nstacks * u * u * u);
        }
        uint8_t t = st.thread[k];
        if (!id[k]) {
            id[k] = ++next_id[t];
            put_stack(&samples[t], id[k], &st.frames[st.start[k]], st.start[k + 1] - st.start[k]);
        }
        put_sample(&samples[t], id[k], time);
        counts[t]++;
        time += PERIOD_NS / NTHREADS;
    }
    for (uint32_t t = 1; t < NTHREADS; t++) {
        uint64_t at = spawn_site(roots[0], (int)t - 1);
        struct ppw_rec_spawn s = {t, 0, PPW_SPAWN_PTHREAD, 0, 1, 0, 0};
        rf_record(&events, PPW_EVT_SPAWN, &s, sizeof s, &at, sizeof at, NULL);
        if (!at) {
            fprintf(stderr, "gen_run: main makes no call %u to pthread_create\n", t);
            return 1;
        }
    }
    write_run_file(&run, &exe, roots, time, counts);

    int rc = 0;
    if (mkdir(argv[5], 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "gen_run: %s: %s\n", argv[5], strerror(errno));
        return 1;
    }
    struct run_file *files[] = {&run, &events, &samples[0], &samples[1], &samples[2]};
    const char *names[] = {"run.ppw", "t0.events.ppw", "t0.samples.ppw", "t1.samples.ppw",
                           "t2.samples.ppw"};
    for (int i = 0; i < 5; i++) {
        rf_finish(files[i]);
        rf_header(files[i])->flags |= PPW_FILE_CLOSED;
        rc |= rf_write(files[i], argv[5], names[i]);
        rf_free(files[i]);
    }
    printf("gen_run: %s: %zu unique stacks (%zu frames), %" PRIu64 " samples\n", argv[5], st.n,
           st.nframes, nsamples);
    return rc ? 1 : 0;
}
