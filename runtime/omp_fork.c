/* OpenMP parallel regions without OMPT (omp_fork.h).
 *
 * The stand-in __kmpc_fork_call is a few instructions of assembly that
 * read the choice and jump: to libomp's function (forward), or to
 * fork_hooked (hooked), which thus runs as if the program had called it,
 * with the program's return address and frame.  fork_hooked records the
 * spawn context there, as OMPT's parallel_begin callback would, and asks
 * libomp to run ppw_fork_body_args with the body, its tag and its
 * arguments, which sets each team thread's tag and calls the body.  A body
 * with more than PASSED_ARGS_MAX arguments goes through ppw_fork_body with
 * one, a struct region on the forking thread's stack that holds them:
 * libomp's fork returns only after every team thread has left the body, so
 * the struct outlives them.  libomp reads the arguments as void *,
 * whatever they are, and so do we.
 *
 * The first call before the choice (a constructor of another library may
 * fork before libppw's runs) saves the argument registers, makes it, and
 * dispatches again. */
#include "omp_fork.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "lifecycle.h"
#include "log.h"
#include "modules.h"
#include "ppw/run_format.h"
#include "sampler.h"
#include "sigsafe.h"
#include "spawn.h"
#include "thread.h"

enum { MODE_UNDECIDED = 0, MODE_FORWARD = 1, MODE_HOOKED = 2 };

#define HIDDEN __attribute__((visibility("hidden")))

/* Read by the stand-in: plain words, written once under decide_lock before
 * the mode (release), read after it (the stand-in's load of a word is an
 * acquire on x86-64). */
HIDDEN int ppw_fork_mode;
HIDDEN void *ppw_fork_real;

/* libomp's: calls body(&gtid, &tid, argv[0..argc)) (z_Linux_asm.S);
 * exit_frame is OMPT's, unused without a tool.  Bodies with up to 16
 * arguments are called through a switch, more through this (a libomp
 * without it gets OMPT instead). */
typedef int (*invoke_microtask_fn)(void *body, int gtid, int tid, int argc, void *argv[],
                                   void **exit_frame);
static invoke_microtask_fn invoke_microtask;

typedef void (*microtask_fn)(int32_t *gtid, int32_t *btid, ...);
typedef void (*fork_call_fn)(void *loc, int32_t argc, microtask_fn body, ...);

HIDDEN void ppw_fork_decide_final(void);
/* Exported, so that their names survive a stripped libppw: ppw-blame
 * knows them (run_format.h). */
PPW_EXPORT void ppw_fork_hooked(void *loc, int32_t argc, microtask_fn body, ...);
struct region;
PPW_EXPORT void ppw_fork_body(int32_t *gtid, int32_t *btid, struct region *r);
PPW_EXPORT void ppw_fork_body_args(int32_t *gtid, int32_t *btid, microtask_fn body, uintptr_t info,
                                   ...);
HIDDEN void ppw_fork_entry(void);

#if defined(__x86_64__) && defined(__linux__)
/* rdi loc, esi argc, rdx body, the rest the body's arguments; al counts
 * vector registers, as for any variadic call.  A negative count goes
 * to libomp untouched. */
__asm__(".text\n"
        ".globl __kmpc_fork_call\n"
        ".globl ppw_fork_entry\n"
        ".hidden ppw_fork_entry\n"
        ".type __kmpc_fork_call,@function\n"
        ".type ppw_fork_entry,@function\n"
        ".p2align 4\n"
        "__kmpc_fork_call:\n"
        "ppw_fork_entry:\n"
        ".cfi_startproc\n"
        "1:\n"
        "  movl ppw_fork_mode(%rip), %r11d\n"
        "  cmpl $2, %r11d\n"
        "  jne 2f\n"
        "  testl %esi, %esi\n"
        "  jns ppw_fork_hooked@PLT\n"
        "  jmp *ppw_fork_real(%rip)\n"
        "2:\n"
        "  cmpl $1, %r11d\n"
        "  jne 3f\n"
        "  jmp *ppw_fork_real(%rip)\n"
        "3:\n"
        "  pushq %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbp, 0\n"
        "  movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "  pushq %rdi\n"
        "  pushq %rsi\n"
        "  pushq %rdx\n"
        "  pushq %rcx\n"
        "  pushq %r8\n"
        "  pushq %r9\n"
        "  pushq %rax\n"
        "  subq $136, %rsp\n"
        "  movdqu %xmm0, 0(%rsp)\n"
        "  movdqu %xmm1, 16(%rsp)\n"
        "  movdqu %xmm2, 32(%rsp)\n"
        "  movdqu %xmm3, 48(%rsp)\n"
        "  movdqu %xmm4, 64(%rsp)\n"
        "  movdqu %xmm5, 80(%rsp)\n"
        "  movdqu %xmm6, 96(%rsp)\n"
        "  movdqu %xmm7, 112(%rsp)\n"
        "  call ppw_fork_decide_final\n"
        "  movdqu 0(%rsp), %xmm0\n"
        "  movdqu 16(%rsp), %xmm1\n"
        "  movdqu 32(%rsp), %xmm2\n"
        "  movdqu 48(%rsp), %xmm3\n"
        "  movdqu 64(%rsp), %xmm4\n"
        "  movdqu 80(%rsp), %xmm5\n"
        "  movdqu 96(%rsp), %xmm6\n"
        "  movdqu 112(%rsp), %xmm7\n"
        "  addq $136, %rsp\n"
        "  popq %rax\n"
        "  popq %r9\n"
        "  popq %r8\n"
        "  popq %rcx\n"
        "  popq %rdx\n"
        "  popq %rsi\n"
        "  popq %rdi\n"
        "  popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        ".cfi_restore %rbp\n"
        "  jmp 1b\n"
        ".cfi_endproc\n"
        ".size __kmpc_fork_call, .-__kmpc_fork_call\n"
        ".size ppw_fork_entry, .-ppw_fork_entry\n");
#define HAVE_STAND_IN 1
#else
#define HAVE_STAND_IN 0
#endif

static pthread_mutex_t decide_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- what the loaded modules import ---- */

/* Entries whose work needs OMPT's callbacks: explicit tasks (their entry
 * runs later, on any thread), teams, the if-clause fork of OpenMPIRBuilder
 * code (libomp forks inside), and libgomp's interface for GCC's code. */
static int needs_ompt(const char *name)
{
    static const char *const exact[] = {
        "__kmpc_omp_task_alloc", "__kmpc_omp_target_task_alloc",
        "__kmpc_taskloop",       "__kmpc_taskloop_5",
        "__kmpc_fork_teams",     "__kmpc_fork_call_if",
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strcmp(name, exact[i]) == 0)
            return 1;
    return strncmp(name, "GOMP_", 5) == 0;
}

struct import_scan {
    char found[128]; /* the first entry found, and its module */
};

static int check_import(const struct dl_phdr_info *info, const char *name, void **slot, void *arg)
{
    (void)slot;
    struct import_scan *scan = arg;
    if (!needs_ompt(name))
        return 0;
    snprintf(scan->found, sizeof scan->found, "%s imports %s",
             info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "the executable", name);
    return 1;
}

static int scan_module(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "linux-vdso"))
        return 0;
    return ppw_modules_each_import(info, check_import, data);
}

/* ---- finding libomp ---- */

static int find_libomp(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *path = info->dlpi_name, *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    if (!base || (strncmp(base, "libomp.", 7) && strncmp(base, "libiomp5.", 9)))
        return 0;
    void *handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (handle) {
        *(void **)data = dlsym(handle, "__kmpc_fork_call");
        dlclose(handle);
    }
    return *(void **)data != NULL;
}

static void *libomp_fork_call(void)
{
    void *real = dlsym(RTLD_NEXT, "__kmpc_fork_call");
    if (!real) /* libomp loaded by dlopen, after libppw, RTLD_LOCAL */
        dl_iterate_phdr(find_libomp, &real);
    return real == (void *)ppw_fork_entry ? NULL : real;
}

/* __kmp_invoke_microtask from the library that defines real. */
static invoke_microtask_fn libomp_invoke_microtask(void *real)
{
    Dl_info where, found_where;
    if (!dladdr(real, &where) || !where.dli_fname)
        return NULL;
    invoke_microtask_fn found;
    /* From the global scope first: a dlopen, even of a library already
     * loaded, leaves a block malloc'd in the program's main arena. */
    *(void **)&found = dlsym(RTLD_DEFAULT, "__kmp_invoke_microtask");
    if (found && dladdr(*(void **)&found, &found_where) &&
        found_where.dli_fbase == where.dli_fbase)
        return found;
    void *handle = dlopen(where.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
        return NULL;
    *(void **)&found = dlsym(handle, "__kmp_invoke_microtask");
    dlclose(handle);
    return found;
}

static void no_openmp_runtime(void)
{
    ppw_log("__kmpc_fork_call called, but no OpenMP runtime is loaded");
    abort();
}

/* ---- the choice ---- */

static const char *choose(void **real)
{
    static struct import_scan scan;
    if (!HAVE_STAND_IN)
        return "OMPT: libppw has no __kmpc_fork_call for this architecture";
    if (!(*real = libomp_fork_call()))
        return NULL;
    if (ppw_config.ompt_always)
        return "OMPT: PPW_OMPT=always";
    if (!ppw_running)
        return "OMPT: libppw is not running";
    if (ppw_config.modes & PPW_MODE_TRACE)
        return "OMPT: trace mode records each region's begin and end";
    if (!(invoke_microtask = libomp_invoke_microtask(*real)))
        return "OMPT: the OpenMP runtime has no __kmp_invoke_microtask";
    if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != (void *)ppw_fork_entry)
        return "OMPT: the program's calls to __kmpc_fork_call do not reach libppw's";
    if (dl_iterate_phdr(scan_module, &scan)) {
        static char text[200];
        snprintf(text, sizeof text, "OMPT: %s", scan.found);
        return text;
    }
    return "hooked";
}

static void decide(int final)
{
    if (__atomic_load_n(&ppw_fork_mode, __ATOMIC_ACQUIRE) != MODE_UNDECIDED)
        return;
    int saved = errno;
    ppw_lifecycle_ensure();
    pthread_mutex_lock(&decide_lock);
    if (__atomic_load_n(&ppw_fork_mode, __ATOMIC_RELAXED) == MODE_UNDECIDED) {
        void *real = NULL;
        const char *why = choose(&real);
        if (why || final) {
            int hooked = why && strcmp(why, "hooked") == 0;
            const char *reason = why ? why : "OMPT: no OpenMP runtime loaded";
            ppw_fork_real = real ? real : (void *)no_openmp_runtime;
            __atomic_store_n(&ppw_fork_mode, hooked ? MODE_HOOKED : MODE_FORWARD, __ATOMIC_RELEASE);
            if (hooked)
                ppw_log_verbose("OpenMP regions: spawn contexts by libppw's __kmpc_fork_call, "
                                "no OMPT tool");
            else
                ppw_log_verbose("OpenMP regions: %s", reason);
        }
    }
    pthread_mutex_unlock(&decide_lock);
    errno = saved;
}

__attribute__((used)) void ppw_fork_decide_final(void)
{
    decide(1);
}

void ppw_omp_fork_decide(void)
{
    decide(0);
}

int ppw_omp_fork_hooked(void)
{
    return __atomic_load_n(&ppw_fork_mode, __ATOMIC_ACQUIRE) == MODE_HOOKED;
}

/* ---- hooked regions ---- */

/* A region whose body takes at most this many arguments passes them on
 * through libomp, with the body and its tag in front (ppw_fork_body_args):
 * the team's threads then read nothing of the forking thread's stack, whose
 * cache line would otherwise cross to each of them at every region. */
#define PASSED_ARGS_MAX 14

/* A region with more arguments: on a cache line of its own in the forking
 * thread's frame, since the team's threads read it while that thread's
 * deeper frames change. */
struct __attribute__((aligned(64))) region {
    microtask_fn body;
    uint32_t tag;
    int32_t argc;
    void *args[];
};

static void call_body(microtask_fn body, int32_t *gtid, int32_t *btid, int32_t argc, void *const *a)
{
    switch (argc) {
#define A1 a[0]
#define A2 A1, a[1]
#define A3 A2, a[2]
#define A4 A3, a[3]
#define A5 A4, a[4]
#define A6 A5, a[5]
#define A7 A6, a[6]
#define A8 A7, a[7]
#define A9 A8, a[8]
#define A10 A9, a[9]
#define A11 A10, a[10]
#define A12 A11, a[11]
#define A13 A12, a[12]
#define A14 A13, a[13]
#define A15 A14, a[14]
#define A16 A15, a[15]
    case 0: body(gtid, btid); break;
    case 1: body(gtid, btid, A1); break;
    case 2: body(gtid, btid, A2); break;
    case 3: body(gtid, btid, A3); break;
    case 4: body(gtid, btid, A4); break;
    case 5: body(gtid, btid, A5); break;
    case 6: body(gtid, btid, A6); break;
    case 7: body(gtid, btid, A7); break;
    case 8: body(gtid, btid, A8); break;
    case 9: body(gtid, btid, A9); break;
    case 10: body(gtid, btid, A10); break;
    case 11: body(gtid, btid, A11); break;
    case 12: body(gtid, btid, A12); break;
    case 13: body(gtid, btid, A13); break;
    case 14: body(gtid, btid, A14); break;
    case 15: body(gtid, btid, A15); break;
    case 16: body(gtid, btid, A16); break;
    default: {
        void *exit_frame = NULL;
        invoke_microtask((void *)body, *gtid, *btid, argc, (void **)a, &exit_frame);
    }
    }
}

static void pop_tag(struct ppw_thread *t)
{
    if (t->tag_depth == 0)
        return;
    t->tag_depth--;
    if (t->tag_depth < PPW_TAG_STACK_MAX)
        t->spawn_tag = t->tag_stack[t->tag_depth];
}

/* The calling team thread enters a region of context tag; NULL when it
 * has nothing to record. */
static struct ppw_thread *region_enter(uint32_t tag)
{
    struct ppw_thread *t = tag ? ppw_thread_self() : NULL;
    if (!t)
        return NULL;
    int saved = errno;
    ppw_sampler_context_change(t); /* the samples so far belong to the context ending */
    if (t->region_lingers) {
        pop_tag(t);
        t->region_lingers = 0;
    }
    if (t->tag_depth < PPW_TAG_STACK_MAX)
        t->tag_stack[t->tag_depth] = t->spawn_tag;
    t->tag_depth++;
    t->spawn_tag = tag;
    errno = saved;
    return t;
}

/* The body returned; forked_here: the thread is the one that forked (its
 * team's thread 0). */
static void region_leave(struct ppw_thread *t, int forked_here)
{
    /* A worker's outermost region lingers: its join barrier and its wait
     * for the next region are this region's, not the context the worker
     * was created in (the first region's).  The forking thread and nested
     * regions go back to the enclosing context now. */
    if (!forked_here && t->tag_depth == 1) {
        t->region_lingers = 1;
        return;
    }
    int saved = errno;
    ppw_sampler_context_change(t);
    pop_tag(t);
    errno = saved;
}

/* Each team thread, the forking one included, runs the body here:
 * info holds the tag in its low 32 bits and the body's argument count
 * above, its arguments follow. */
void ppw_fork_body_args(int32_t *gtid, int32_t *btid, microtask_fn body, uintptr_t info, ...)
{
    void *args[PASSED_ARGS_MAX];
    int32_t argc = (int32_t)(info >> 32);
    va_list ap;
    va_start(ap, info);
    for (int32_t i = 0; i < argc && i < PASSED_ARGS_MAX; i++)
        args[i] = va_arg(ap, void *);
    va_end(ap);
    struct ppw_thread *t = region_enter((uint32_t)info);
    call_body(body, gtid, btid, argc, args);
    if (t)
        region_leave(t, *btid == 0);
}

/* The same for a body with more arguments, from a struct region. */
void ppw_fork_body(int32_t *gtid, int32_t *btid, struct region *r)
{
    struct ppw_thread *t = region_enter(r->tag);
    call_body(r->body, gtid, btid, r->argc, r->args);
    if (t)
        region_leave(t, *btid == 0);
}

/* Reached by a jump from the stand-in: its return address and frame are
 * the program's call's.  Named by PPW_FORK_WRAPPER_FUNCTION (ppw-blame
 * shows the program's fork call in its place). */
__attribute__((noinline, used)) void ppw_fork_hooked(void *loc, int32_t argc, microtask_fn body,
                                                     ...)
{
    fork_call_fn fork_call = (fork_call_fn)ppw_fork_real;
    uint32_t tag = 0;
    struct ppw_thread *t = ppw_thread_self();
    if (t && ppw_running && !t->in_ppw) {
        int saved = errno;
        tag = ppw_spawn_context(t, PPW_SPAWN_OMP_PARALLEL,
                                (uint64_t)(uintptr_t)__builtin_return_address(0),
                                __builtin_frame_address(0));
        errno = saved;
    }
    va_list ap;
    va_start(ap, body);
    if (argc <= PASSED_ARGS_MAX) {
        void *a[PASSED_ARGS_MAX];
        for (int32_t i = 0; i < argc; i++)
            a[i] = va_arg(ap, void *);
        va_end(ap);
        microtask_fn run = (microtask_fn)ppw_fork_body_args;
        void *info = (void *)((uintptr_t)argc << 32 | tag), *b = (void *)body;
        switch (argc) {
        case 0: fork_call(loc, 2, run, b, info); break;
        case 1: fork_call(loc, 3, run, b, info, A1); break;
        case 2: fork_call(loc, 4, run, b, info, A2); break;
        case 3: fork_call(loc, 5, run, b, info, A3); break;
        case 4: fork_call(loc, 6, run, b, info, A4); break;
        case 5: fork_call(loc, 7, run, b, info, A5); break;
        case 6: fork_call(loc, 8, run, b, info, A6); break;
        case 7: fork_call(loc, 9, run, b, info, A7); break;
        case 8: fork_call(loc, 10, run, b, info, A8); break;
        case 9: fork_call(loc, 11, run, b, info, A9); break;
        case 10: fork_call(loc, 12, run, b, info, A10); break;
        case 11: fork_call(loc, 13, run, b, info, A11); break;
        case 12: fork_call(loc, 14, run, b, info, A12); break;
        case 13: fork_call(loc, 15, run, b, info, A13); break;
        default: fork_call(loc, 16, run, b, info, A14); break;
        }
        return;
    }
    struct region *r = __builtin_alloca_with_align(sizeof *r + (size_t)argc * sizeof r->args[0],
                                                   8 * _Alignof(struct region));
    r->body = body;
    r->tag = tag;
    r->argc = argc;
    for (int32_t i = 0; i < argc; i++)
        r->args[i] = va_arg(ap, void *);
    va_end(ap);
    fork_call(loc, 1, (microtask_fn)ppw_fork_body, r);
}
