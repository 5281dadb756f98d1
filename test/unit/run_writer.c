#define _GNU_SOURCE /* dl_iterate_phdr, dladdr */
#include "run_writer.h"
#include "ppw/crc32c.h"

#include <assert.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ppw/gasp_events.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the writer copies structs as they are");

/* ---- files ---- */

void rf_init(struct run_file *f, uint32_t kind, uint32_t thread, uint32_t pid,
             const uint8_t *build_id, uint32_t build_id_size)
{
    struct ppw_file_header h = {.major = PPW_RUN_MAJOR,
                                .minor = PPW_RUN_MINOR,
                                .kind = kind,
                                .header_size = PPW_RUN_HEADER_SIZE,
                                .pid = pid,
                                .thread = thread,
                                .build_id_size = build_id_size};
    memcpy(h.magic, PPW_RUN_MAGIC, 4);
    memcpy(h.build_id, build_id, build_id_size);
    if (kind == PPW_FILE_PROFILE)
        h.slot_size = PPW_PROFILE_SLOT_SIZE;
    memset(&f->b, 0, sizeof f->b);
    bytes_put(&f->b, &h, sizeof h);
}

void rf_free(struct run_file *f)
{
    bytes_free(&f->b);
}

struct ppw_file_header *rf_header(struct run_file *f)
{
    return (struct ppw_file_header *)f->b.data;
}

size_t rf_record(struct run_file *f, uint32_t kind, const void *fixed, size_t fixed_size,
                 const void *extra, size_t extra_size, const char *const *strings)
{
    size_t at = f->b.len, size = 8 + fixed_size + extra_size;
    for (size_t i = 0; strings && strings[i]; i++)
        size += strlen(strings[i]) + 1;
    size = (size + 7) & ~(size_t)7;
    struct ppw_rec_frame frame = {kind, (uint32_t)size};
    bytes_put(&f->b, &frame, sizeof frame);
    bytes_put(&f->b, fixed, fixed_size);
    bytes_put(&f->b, extra, extra_size);
    for (size_t i = 0; strings && strings[i]; i++)
        bytes_put(&f->b, strings[i], strlen(strings[i]) + 1);
    bytes_zeros(&f->b, at + size - f->b.len);
    return at;
}

void rf_block_begin(struct rf_block_entries *e, uint64_t base_ns)
{
    memset(e, 0, sizeof *e);
    e->last_ns = base_ns;
}

static void block_u32(struct rf_block_entries *e, uint32_t value)
{
    assert(e->used + 4 <= sizeof e->bytes);
    memcpy(e->bytes + e->used, &value, 4);
    e->used += 4;
}

static void block_u64(struct rf_block_entries *e, uint64_t value)
{
    block_u32(e, (uint32_t)value);
    block_u32(e, (uint32_t)(value >> 32));
}

void rf_block_stack(struct rf_block_entries *e, uint32_t id, uint16_t flags,
                    const uint64_t *frames, uint16_t n)
{
    block_u32(e, (uint32_t)PPW_BLOCK_STACK << PPW_BLOCK_KIND_SHIFT | id);
    block_u32(e, n | (uint32_t)flags << 16);
    for (uint16_t i = 0; i < n; i++)
        block_u64(e, frames[i]);
}

void rf_block_sample(struct rf_block_entries *e, uint32_t stack, uint32_t tag, uint64_t time_ns,
                     uint64_t weight)
{
    if (tag != e->spawn) {
        block_u32(e, (uint32_t)PPW_BLOCK_SPAWN << PPW_BLOCK_KIND_SHIFT);
        block_u32(e, tag);
        e->spawn = tag;
    }
    if (weight <= UINT32_MAX && time_ns >= e->last_ns && time_ns - e->last_ns <= UINT32_MAX) {
        block_u32(e, (uint32_t)PPW_BLOCK_SAMPLE << PPW_BLOCK_KIND_SHIFT | stack);
        block_u32(e, (uint32_t)weight);
        block_u32(e, (uint32_t)(time_ns - e->last_ns));
    } else {
        block_u32(e, (uint32_t)PPW_BLOCK_SAMPLE_WIDE << PPW_BLOCK_KIND_SHIFT | stack);
        block_u64(e, weight);
        block_u64(e, time_ns);
    }
    e->last_ns = time_ns;
}

size_t rf_block(struct run_file *f, const struct rf_block_entries *e, uint64_t base_ns,
                uint32_t used, uint32_t capacity)
{
    assert(capacity >= e->used && capacity <= sizeof e->bytes);
    struct ppw_rec_block head = {used, capacity, base_ns};
    uint8_t room[sizeof e->bytes] = {0};
    memcpy(room, e->bytes, e->used);
    return rf_record(f, PPW_SMP_BLOCK, &head, sizeof head, room, capacity, NULL);
}

size_t rf_slot(struct run_file *f, const void *slot, size_t size)
{
    size_t at = f->b.len;
    bytes_put(&f->b, slot, size);
    bytes_zeros(&f->b, rf_header(f)->slot_size - size);
    return at;
}

void rf_finish(struct run_file *f)
{
    rf_header(f)->committed = f->b.len - PPW_RUN_HEADER_SIZE;
}

void rf_checksum(struct run_file *f)
{
    struct ppw_rec_checksum c = {0, 0, 0};
    rf_record(f, PPW_REC_CHECKSUM, &c, sizeof c, NULL, 0, NULL);
}

void run_file_reseal(unsigned char *data, size_t len)
{
    struct ppw_file_header h;
    if (len < sizeof h)
        return;
    memcpy(&h, data, sizeof h);
    if (h.header_size < PPW_RUN_HEADER_SIZE || h.header_size > len ||
        h.committed > len - h.header_size)
        return;
    size_t end = h.header_size + (size_t)h.committed;
    if (h.kind == PPW_FILE_PROFILE) {
        if (h.flags & PPW_FILE_SEALED) {
            uint64_t crc = ppw_crc32c(0, data + h.header_size, end - h.header_size);
            memcpy(data + offsetof(struct ppw_file_header, reserved), &crc, 8);
        }
        return;
    }
    size_t pos = h.header_size, from = h.header_size;
    while (pos + 8 <= end) {
        uint32_t kind, size;
        memcpy(&kind, data + pos, 4);
        memcpy(&size, data + pos + 4, 4);
        if (size < 8 || size % 8 || size > end - pos)
            return;
        if (kind == PPW_REC_CHECKSUM && size >= 8 + sizeof(struct ppw_rec_checksum)) {
            struct ppw_rec_checksum c = {ppw_crc32c(0, data + from, pos - from), 0, from};
            memcpy(data + pos + 8, &c, sizeof c);
            from = pos + size;
        }
        pos += size;
    }
}

int rf_write(const struct run_file *f, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unsigned char *copy = malloc(f->b.len ? f->b.len : 1);
    FILE *out = copy ? fopen(path, "wb") : NULL;
    if (copy) {
        memcpy(copy, f->b.data, f->b.len);
        run_file_reseal(copy, f->b.len);
    }
    if (!out || fwrite(copy, 1, f->b.len, out) != f->b.len) {
        fprintf(stderr, "rf_write %s: %s\n", path, strerror(errno));
        if (out)
            fclose(out);
        free(copy);
        return -1;
    }
    free(copy);
    return fclose(out) == 0 ? 0 : -1;
}

/* ---- this process's modules ---- */

struct image_search {
    uintptr_t addr;
    struct run_image *img;
    int found;
};

static void note_build_id(struct run_image *img, const unsigned char *p, size_t size)
{
    size_t at = 0;
    while (at + 12 <= size) {
        uint32_t namesz, descsz, type;
        memcpy(&namesz, p + at, 4);
        memcpy(&descsz, p + at + 4, 4);
        memcpy(&type, p + at + 8, 4);
        size_t name = at + 12, desc = name + ((namesz + 3) & ~3u);
        if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name, "GNU", 4) == 0 &&
            descsz <= PPW_BUILD_ID_MAX) {
            memcpy(img->build_id, p + desc, descsz);
            img->build_id_size = descsz;
            return;
        }
        at = desc + ((descsz + 3) & ~3u);
    }
}

static int visit_image(struct dl_phdr_info *info, size_t size, void *ctx)
{
    struct image_search *s = ctx;
    uint64_t lo = UINT64_MAX, hi = 0;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t start = info->dlpi_addr + ph->p_vaddr;
        lo = start < lo ? start : lo;
        hi = start + ph->p_memsz > hi ? start + ph->p_memsz : hi;
    }
    if (s->addr < lo || s->addr >= hi)
        return 0;
    struct run_image *img = s->img;
    img->bias = info->dlpi_addr;
    img->lo = lo;
    img->hi = hi;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_NOTE && !img->build_id_size)
            note_build_id(img,
                          (const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
                          info->dlpi_phdr[i].p_memsz);
    if (info->dlpi_name && info->dlpi_name[0])
        snprintf(img->path, sizeof img->path, "%s", info->dlpi_name);
    else if (!realpath("/proc/self/exe", img->path))
        return -1;
    s->found = 1;
    return 1;
}

int run_image_of(const void *addr, struct run_image *img)
{
    struct image_search s = {(uintptr_t)addr, img, 0};
    memset(img, 0, sizeof *img);
    dl_iterate_phdr(visit_image, &s);
    return s.found ? 0 : -1;
}

/* ---- fixture functions: distinct bodies, so no identical-code folding ---- */

volatile int run_fixture_sink;

__attribute__((noinline)) int run_fixture_leaf(int x)
{
    run_fixture_sink = x;
    return x + 1;
}

__attribute__((noinline)) int run_fixture_compute(int x)
{
    run_fixture_sink = x * 3;
    return run_fixture_leaf(x) * 2;
}

__attribute__((noinline)) int run_fixture_spawn(int x)
{
    run_fixture_sink = x - 7;
    return run_fixture_compute(x) - 5;
}

__attribute__((noinline)) void *run_fixture_worker(void *arg)
{
    run_fixture_sink = 11;
    return arg;
}

/* ---- the sample run ---- */

extern int main(int argc, char **argv);

enum { NO_THREAD = UINT32_MAX };

static void put_stack(struct run_file *f, uint32_t id, uint16_t flags, const uint64_t *frames,
                      uint16_t n)
{
    struct ppw_rec_stack s = {id, n, flags};
    rf_record(f, PPW_SMP_STACK, &s, sizeof s, frames, n * sizeof *frames, NULL);
}

static void put_sample(struct run_file *f, uint32_t stack, uint32_t tag, uint64_t time)
{
    struct ppw_rec_sample s = {stack, tag, time, 1000000};
    rf_record(f, PPW_SMP_SAMPLE, &s, sizeof s, NULL, 0, NULL);
}

static void put_spawn(struct run_file *f, uint32_t tag, uint32_t parent, uint32_t kind,
                      uint32_t creator, const uint64_t *frames, uint16_t n)
{
    struct ppw_rec_spawn s = {tag, parent, kind, creator, n, 0, 0};
    rf_record(f, PPW_EVT_SPAWN, &s, sizeof s, frames, n * sizeof *frames, NULL);
}

static void put_trace(struct run_file *f, uint64_t time, uint32_t region, uint16_t evttype,
                      const uint64_t *args, uint16_t nargs, const char *text)
{
    struct ppw_rec_trace t = {time, region, evttype, (uint16_t)(nargs | (text ? 0x8000 : 0))};
    const char *strings[] = {text, NULL};
    rf_record(f, PPW_EVT_TRACE, &t, sizeof t, args, nargs * sizeof *args, strings);
}

static void put_omp(struct run_file *f, uint64_t time, uint32_t instance, uint32_t tag,
                    uint32_t event)
{
    struct ppw_rec_omp o = {time, instance, tag, event, 0};
    rf_record(f, PPW_EVT_OMP, &o, sizeof o, NULL, 0, NULL);
}

void rf_module(struct run_file *f, uint32_t kind, const struct run_image *img, uint32_t flags)
{
    struct ppw_rec_module m = {.load_bias = img->bias,
                               .lo = img->lo,
                               .hi = img->hi,
                               .build_id_size = img->build_id_size,
                               .flags = flags};
    memcpy(m.build_id, img->build_id, img->build_id_size);
    const char *strings[] = {kind == PPW_RUN_MODULE ? img->path : "", NULL};
    rf_record(f, kind, &m, sizeof m, NULL, 0, strings);
}

static void put_region(struct run_file *f, uint32_t id, uint32_t kind, uint32_t tag, uint32_t op,
                       const char *name, uint32_t line)
{
    struct ppw_rec_region g = {id, kind, tag, op, line, 1};
    const char *strings[] = {name, "prog.c", NULL};
    rf_record(f, PPW_RUN_REGION, &g, sizeof g, NULL, 0, strings);
}

static void build_run_file(struct sample_run *sr, unsigned flags)
{
    struct run_file *f = &sr->run;
    struct ppw_rec_run_info info = {sr->pid, 1, 1000, 1700000000000000000ull, 2, 0, 1};
    const char *info_strings[] = {"testhost", sr->exe.path, "/tmp", NULL};
    rf_record(f, PPW_RUN_INFO, &info, sizeof info, NULL, 0, info_strings);
    uint32_t argv_head[2] = {3, 0}, env_head[2] = {1, 0};
    const char *argv[] = {"./prog", "--size", "10", NULL}, *env[] = {"OMP_NUM_THREADS=2", NULL};
    rf_record(f, PPW_RUN_ARGV, argv_head, sizeof argv_head, NULL, 0, argv);
    rf_record(f, PPW_RUN_ENV, env_head, sizeof env_head, NULL, 0, env);
    struct ppw_rec_metric metric = {
        PPW_METRIC_POSIX_CPU_TIMER, PPW_UNIT_NS, 1000000, 10, 34, 128, 0};
    const char *metric_strings[] = {"cpu-clock", "PAPI not available", NULL};
    rf_record(f, PPW_RUN_METRIC, &metric, sizeof metric, NULL, 0, metric_strings);
    struct ppw_rec_config config = {PPW_MODE_PROFILE | PPW_MODE_TRACE | PPW_MODE_SAMPLE, 2, 100000,
                                    1000, 1000, 1000};
    rf_record(f, PPW_RUN_CONFIG, &config, sizeof config, NULL, 0, NULL);
    struct ppw_rec_calib calib = {.iterations = 1000,
                                  .pair_ns = 100.0,
                                  .inner_ns = 30.0,
                                  .throttled_pair_ns = 10.0,
                                  .clock_ns = 20.0,
                                  .handler_ns = 1500.0,
                                  .window_start_ns = 40.0,
                                  .window_end_ns = 50.0,
                                  .window_inner_ns = 25.0,
                                  .window_throttled_ns = 5.0,
                                  .window_clock_ns = 20.0,
                                  .window_period = 64};
    rf_record(f, PPW_RUN_CALIB, &calib, sizeof calib, NULL, 0, NULL);
    rf_module(f, PPW_RUN_MODULE, &sr->exe, PPW_MODULE_EXE);
    rf_module(f, PPW_RUN_MODULE, &sr->libc, 0);
    struct run_image omp = {
        "/nonexistent/libomp.so.5", 0x7e0000000000, SAMPLE_OMP_LO, SAMPLE_OMP_LO + 0x10000, {0}, 0};
    rf_module(f, PPW_RUN_MODULE, &omp, PPW_MODULE_PARALLEL);
    struct run_image gone = {
        "/nonexistent/libgone.so", 0x7e0000000000, 0x7e0000001000, 0x7e0000002000, {0}, 0};
    rf_module(f, PPW_RUN_MODULE, &gone, 0);
    rf_module(f, PPW_RUN_UNMODULE, &gone, 0);
    put_region(f, 1, PPW_REGION_FUNCTION, 1000, PPW_OP_FUNCTION, "main", 10);
    put_region(f, 2, PPW_REGION_FUNCTION, 1000, PPW_OP_FUNCTION, "work", 20);
    put_region(f, 3, PPW_REGION_CALLSITE, 1001, PPW_OP_MEM_ALLOC, "malloc", 22);
    put_region(f, 4, PPW_REGION_USER, 100, PPW_OP_USER_REGION, "phase", 30);
    struct ppw_rec_thread t0 = {0, 1000, NO_THREAD, 0, 0, 1000};
    struct ppw_rec_thread t1 = {1, 1001, 0, 1, sr->at.worker, 2000};
    rf_record(f, PPW_RUN_THREAD, &t0, sizeof t0, NULL, 0, NULL);
    rf_record(f, PPW_RUN_THREAD, &t1, sizeof t1, NULL, 0, NULL);
    const char *note[] = {"sample buffer grew", NULL};
    uint32_t severity[2] = {1, 0};
    rf_record(f, PPW_RUN_NOTE, severity, sizeof severity, NULL, 0, note);
    if (flags & SAMPLE_RUN_CRASHED)
        return;
    struct ppw_rec_thread_end e1 = {1, PPW_THREAD_END_AT_EXIT, 9000, 7000, 3, 500, 100},
                              e0 = {0, 0, 10000, 9000, 3, PPW_WAIT_UNKNOWN, 0};
    rf_record(f, PPW_RUN_THREAD_END, &e1, sizeof e1, NULL, 0, NULL);
    rf_record(f, PPW_RUN_THREAD_END, &e0, sizeof e0, NULL, 0, NULL);
    struct ppw_rec_finish finish = {10000, 2};
    rf_record(f, PPW_RUN_FINISH, &finish, sizeof finish, NULL, 0, NULL);
}

static void build_samples(struct sample_run *sr)
{
    const struct sample_addrs *a = &sr->at;
    /* Non-leaf frames are return addresses: 1 byte into the function. */
    uint64_t whole[] = {a->leaf, a->compute + 1, a->main + 1, a->libc_start_main + 1};
    uint64_t cut[] = {a->leaf, a->compute + 1};
    /* a task's code above the parallel runtime's scheduler, then libc */
    uint64_t omp_a = SAMPLE_OMP_LO + 0x100, omp_b = SAMPLE_OMP_LO + 0x200;
    uint64_t in_task[] = {a->leaf, a->worker + 1, omp_a + 1, omp_b + 1, a->clone + 1};
    uint64_t in_worker[] = {a->compute + 1, a->worker + 1};
    uint64_t in_runtime[] = {omp_a, a->worker + 1, omp_b + 1, a->clone + 1};
    if (sr->blocks) {
        /* Thread 0 in one block, with room to spare; thread 1 in two, the
         * second starting at spawn tag 0 again. */
        struct rf_block_entries e;
        rf_block_begin(&e, 2500);
        rf_block_stack(&e, 1, PPW_STACK_LEAF_PC, whole, 4);
        rf_block_sample(&e, 1, 0, 3000, 1000000);
        rf_block_stack(&e, 2, PPW_STACK_LEAF_PC | PPW_STACK_TRUNCATED, cut, 2);
        rf_block_sample(&e, 2, 0, 4000, 1000000);
        rf_block_sample(&e, 1, 0, 5000, 1000000);
        rf_block(&sr->samples[0], &e, 2500, e.used, e.used + 64);
        rf_block_begin(&e, 6000);
        rf_block_stack(&e, 1, PPW_STACK_LEAF_PC, in_task, 5);
        rf_block_sample(&e, 1, 3, 6000, 1000000);
        rf_block_stack(&e, 2, 0, in_worker, 2);
        rf_block_sample(&e, 2, 0, 7000, 1000000);
        rf_block(&sr->samples[1], &e, 6000, e.used, e.used);
        rf_block_begin(&e, 7500);
        rf_block_stack(&e, 3, PPW_STACK_LEAF_PC, in_runtime, 4);
        rf_block_sample(&e, 3, 2, 8000, 1000000);
        rf_block(&sr->samples[1], &e, 7500, e.used, e.used);
    } else {
        put_stack(&sr->samples[0], 1, PPW_STACK_LEAF_PC, whole, 4);
        put_sample(&sr->samples[0], 1, 0, 3000);
        put_stack(&sr->samples[0], 2, PPW_STACK_LEAF_PC | PPW_STACK_TRUNCATED, cut, 2);
        put_sample(&sr->samples[0], 2, 0, 4000);
        put_sample(&sr->samples[0], 1, 0, 5000);
        put_stack(&sr->samples[1], 1, PPW_STACK_LEAF_PC, in_task, 5);
        put_sample(&sr->samples[1], 1, 3, 6000);
        put_stack(&sr->samples[1], 2, 0, in_worker, 2);
        put_sample(&sr->samples[1], 2, 0, 7000);
        put_stack(&sr->samples[1], 3, PPW_STACK_LEAF_PC, in_runtime, 4);
        put_sample(&sr->samples[1], 3, 2, 8000);
    }
    rf_header(&sr->samples[1])->dropped[PPW_DROP_NOT_READY] = 2;
    rf_header(&sr->samples[1])->reserved = 4; /* 1.7: ring losses */
    rf_header(&sr->samples[0])->handler_ns = 12345;
}

static void build_events(struct sample_run *sr)
{
    const struct sample_addrs *a = &sr->at;
    uint64_t at_create[] = {a->spawn + 1, a->main + 1, a->libc_start_main + 1};
    uint64_t at_parallel[] = {a->worker + 1};
    uint64_t at_task[] = {a->compute + 1};
    put_spawn(&sr->events[0], 1, 0, PPW_SPAWN_PTHREAD, 0, at_create, 3);
    uint64_t size = 64, args_end[] = {64, 0x1234}, phase = 7;
    put_trace(&sr->events[0], 1100, 1, GASP_START, NULL, 0, NULL);
    put_trace(&sr->events[0], 1200, 3, GASP_START, &size, 1, NULL);
    put_trace(&sr->events[0], 1300, 3, GASP_END, args_end, 2, NULL);
    put_trace(&sr->events[0], 1400, 4, GASP_ATOMIC, &phase, 1, "phase 1");
    put_trace(&sr->events[0], 9900, 1, GASP_END, NULL, 0, NULL);
    put_spawn(&sr->events[1], 2, 1, PPW_SPAWN_OMP_PARALLEL, 1, at_parallel, 1);
    put_spawn(&sr->events[1], 3, 2, PPW_SPAWN_OMP_TASK, 1, at_task, 1);
    put_spawn(&sr->events[1], 4, 0, PPW_SPAWN_PTHREAD, 1, at_parallel, 1);
    /* thread 1 opens a parallel region (instance 1) and runs its implicit
     * task, which creates a task (instance 2) and runs it */
    put_omp(&sr->events[1], 2100, 1, 2, PPW_OMP_SPAWN_PARALLEL);
    put_omp(&sr->events[1], 2110, 1, 2, PPW_OMP_BEGIN);
    put_omp(&sr->events[1], 2200, 2, 3, PPW_OMP_SPAWN_TASK);
    put_omp(&sr->events[1], 2300, 2, 3, PPW_OMP_BEGIN);
    put_omp(&sr->events[1], 2400, 2, 3, PPW_OMP_END);
    put_omp(&sr->events[1], 2500, 1, 2, PPW_OMP_END);
}

static void put_timer(struct run_file *f, uint32_t depth, uint32_t region, uint32_t caller,
                      const uint64_t v[11], double sumsq)
{
    struct ppw_rec_timer t = {.slot_kind = PPW_SLOT_TIMER,
                              .depth = depth,
                              .path = {region, caller},
                              .count = v[0],
                              .subcalls = v[1],
                              .incl_min_ns = v[2],
                              .incl_max_ns = v[3],
                              .incl_sum_ns = v[4],
                              .excl_sum_ns = v[5],
                              .excl_sumsq_ns2 = sumsq,
                              .probes_inner = v[6],
                              .probes_throttled = v[7],
                              .probes_child = v[8],
                              .throttled_child = v[9],
                              .flags = (uint32_t)v[10]};
    rf_slot(f, &t, sizeof t);
}

/* With pair 100, inner 30, throttled pair 10 ns (compensated totals):
 *   main           thread 0: incl 1000000 - 2000*100 - 500*10 - 1*30    = 794970
 *                            excl  200000 - 1000*70 - 100*10 - 1*30     = 128970
 *   work <- main   thread 0: incl  800000 - 1000*100 - 1000*30          = 670000
 *                            excl  700000 - 1000*70 - 1000*30           = 600000
 *   work           thread 1: incl = excl = 400000 - 500*40              = 380000
 *   malloc <- work both, merged (30 calls): 220 - 30*30 < 0, clamped to 0 (twice)
 * Thread 1 throttled work after 500 calls (mean 800 ns), 52000 calls since.
 * Thread 1's probe windows are 10 ns longer than the calibration's (START
 * 50, END 60 against 40 and 50; inner parts 20 + 25 against 25), of which
 * 5 are its slower clock (gaps of 25 ns against 20): its pair costs
 * 100 + 5 + 5 = 110 ns and its inner part 30 + (45 - 50) - (25 - 40) = 40
 * (in situ); too few throttled windows leave its throttled pair at 10.
 * Thread 0 has no windows. */
static void build_profiles(struct sample_run *sr, unsigned flags)
{
    const uint64_t main_t[] = {1,
                               1000,
                               1000000,
                               1000000,
                               1000000,
                               200000,
                               2000,
                               500,
                               1000,
                               100,
                               flags & SAMPLE_RUN_CRASHED ? PPW_TIMER_OPEN : 0};
    const uint64_t work_main[] = {1000, 20, 500,  1500, 800000,           700000,
                                  1000, 0,  1000, 0,    PPW_TIMER_UNWOUND};
    const uint64_t malloc0[] = {20, 0, 3, 10, 120, 120, 0, 0, 0, 0, 0};
    const uint64_t work1[] = {500, 10, 400, 2000, 400000, 400000, 0, 0, 0, 0, 0};
    const uint64_t malloc1[] = {10, 0, 5, 20, 100, 100, 0, 0, 0, 0, 0};
    put_timer(&sr->profile[0], 1, 1, 0, main_t, 4e10);
    put_timer(&sr->profile[0], 2, 2, 1, work_main, 5e8);
    put_timer(&sr->profile[0], 2, 3, 2, malloc0, 800);
    put_timer(&sr->profile[1], 1, 2, 0, work1, 3.2e8);
    put_timer(&sr->profile[1], 2, 3, 2, malloc1, 1200);
    struct ppw_rec_throttle th = {PPW_SLOT_THROTTLE, 2, 500, 800, 52000, 0, 0, 0};
    rf_slot(&sr->profile[1], &th, sizeof th);
    struct ppw_rec_probe w = {.slot_kind = PPW_SLOT_PROBE,
                              .window_period = 64,
                              .start_count = 64,
                              .start_ns = 64 * 50,
                              .start_tail_ns = 64 * 20,
                              .end_count = 64,
                              .end_ns = 64 * 60,
                              .end_head_ns = 64 * 25,
                              .throttled_count = 3,
                              .throttled_ns = 3 * 30,
                              .interrupted = 1,
                              .clock_ns = 131 * 25};
    rf_slot(&sr->profile[1], &w, sizeof w);
}

static int find_addrs(struct sample_run *sr)
{
    struct sample_addrs *a = &sr->at;
    void *libc_start = dlsym(RTLD_DEFAULT, "__libc_start_main"),
         *clone = dlsym(RTLD_DEFAULT, "clone");
    a->leaf = (uintptr_t)run_fixture_leaf;
    a->compute = (uintptr_t)run_fixture_compute;
    a->spawn = (uintptr_t)run_fixture_spawn;
    a->worker = (uintptr_t)run_fixture_worker;
    a->main = (uintptr_t)main;
    a->libc_start_main = (uintptr_t)libc_start;
    a->clone = (uintptr_t)clone;
    if (!libc_start || !clone || run_image_of((void *)(uintptr_t)a->main, &sr->exe) ||
        run_image_of(libc_start, &sr->libc) || !sr->exe.build_id_size) {
        fprintf(stderr, "sample_run_build: cannot find this program's or libc's image\n");
        return -1;
    }
    return 0;
}

int sample_run_build(struct sample_run *sr, unsigned flags)
{
    memset(sr, 0, sizeof *sr);
    sr->pid = 4242;
    if (find_addrs(sr))
        return -1;
    const uint8_t *id = sr->exe.build_id;
    uint32_t id_size = sr->exe.build_id_size;
    rf_init(&sr->run, PPW_FILE_RUN, NO_THREAD, sr->pid, id, id_size);
    for (uint32_t t = 0; t < 2; t++) {
        rf_init(&sr->samples[t], PPW_FILE_SAMPLES, t, sr->pid, id, id_size);
        rf_init(&sr->events[t], PPW_FILE_EVENTS, t, sr->pid, id, id_size);
        rf_init(&sr->profile[t], PPW_FILE_PROFILE, t, sr->pid, id, id_size);
    }
    build_run_file(sr, flags);
    sr->blocks = flags & SAMPLE_RUN_BLOCKS;
    build_samples(sr);
    build_events(sr);
    build_profiles(sr, flags);
    rf_finish(&sr->run);
    for (int t = 0; t < 2; t++) {
        rf_finish(&sr->samples[t]);
        rf_finish(&sr->events[t]);
        rf_finish(&sr->profile[t]);
        if (!(flags & SAMPLE_RUN_CRASHED) || t == 0) {
            rf_header(&sr->samples[t])->flags |= PPW_FILE_CLOSED;
            rf_header(&sr->events[t])->flags |= PPW_FILE_CLOSED;
            rf_header(&sr->profile[t])->flags |= PPW_FILE_CLOSED;
        }
    }
    if (!(flags & SAMPLE_RUN_CRASHED))
        rf_header(&sr->run)->flags |= PPW_FILE_CLOSED;
    return 0;
}

int sample_run_write(const struct sample_run *sr, const char *dir)
{
    static const char *const kinds[] = {"samples", "events", "profile"};
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "sample_run_write %s: %s\n", dir, strerror(errno));
        return -1;
    }
    if (sr->run.b.len && rf_write(&sr->run, dir, "run.ppw"))
        return -1;
    for (int t = 0; t < 2; t++) {
        const struct run_file *files[] = {&sr->samples[t], &sr->events[t], &sr->profile[t]};
        for (int k = 0; k < 3; k++) {
            char name[64];
            snprintf(name, sizeof name, "t%d.%s.ppw", t, kinds[k]);
            if (files[k]->b.len && rf_write(files[k], dir, name))
                return -1;
        }
    }
    return 0;
}

void sample_run_free(struct sample_run *sr)
{
    rf_free(&sr->run);
    for (int t = 0; t < 2; t++) {
        rf_free(&sr->samples[t]);
        rf_free(&sr->events[t]);
        rf_free(&sr->profile[t]);
    }
}
