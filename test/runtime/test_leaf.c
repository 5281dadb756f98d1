/* The ring sampler's leaf repair (runtime/leaf.c) on samples built by hand:
 * the registers and stack copy the kernel would give for an interrupted
 * instruction, over functions whose call-frame information this file
 * writes itself (x86-64 assembly below), so neither the compiler nor the
 * machine decides what the unwinder sees.
 *
 * The frames, innermost first: leaf_fn, called from caller_fn at
 * caller_site, called from grand_fn at grand_site, called from outer_fn at
 * outer_site.  The fake stack (addresses are the array's own):
 *
 *   sp + 0x00  return address caller_site  (leaf_fn has popped its frame)
 *   sp + 0x30  caller_fn's frame: saved BP = sp + 0x60, return grand_site
 *   sp + 0x60  grand_fn's frame:  saved BP = sp + 0x90, return outer_site
 *   sp + 0x90  outer_fn's frame:  saved BP = 0, return 0 (the end)
 *
 * The kernel follows BP from the sample: it reads grand_site at BP + 8,
 * then outer_site, and so skips caller_site, the line that called the
 * leaf.  Derivation of each expected chain is next to its check. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "leaf.h"
#include "modules.h"
#include "unwind.h"

/* leaf.c marks its unwinds for the sampler's walk; nothing walks here. */
uint32_t *ppw_unwind_enter(void)
{
    return NULL;
}

void ppw_unwind_leave(uint32_t *slot)
{
    (void)slot;
}

/* dlclose calls: a test moves it to make the rules stale. */
static uint64_t unloads;
uint64_t ppw_modules_unload_count(void)
{
    return unloads;
}

/* modules.c redirects libunwind's calloc while it makes its address
 * space; here the heap will do. */
int ppw_modules_call_redirected(const void *in_module, const char *name, void *replacement,
                                void (*call)(void *), void *arg)
{
    (void)in_module, (void)name, (void)replacement;
    call(arg);
    return -1;
}

#if defined(__x86_64__)
/* Each function: a frame-pointer prologue, a body, and clang 19's
 * epilogue, which after `pop %rbp` moves the CFA to RSP + 8 and leaves the
 * rule that BP is saved at CFA - 16 (one word below RSP by then).
 * leaf_entry is leaf_fn's first instruction, before its frame exists;
 * leaf_ret its ret; each caller's label follows its call. */
#define FRAME_FUNCTION(name, entry, body, before_ret)                                              \
    ".p2align 4\n"                                                                                 \
    ".type " name ", @function\n" name ":\n"                                                       \
    ".cfi_startproc\n" entry "pushq %rbp\n"                                                        \
    ".cfi_def_cfa_offset 16\n"                                                                     \
    ".cfi_offset %rbp, -16\n"                                                                      \
    "movq %rsp, %rbp\n"                                                                            \
    ".cfi_def_cfa_register %rbp\n" body "popq %rbp\n"                                              \
    ".cfi_def_cfa %rsp, 8\n" before_ret "ret\n"                                                    \
    ".cfi_endproc\n"                                                                               \
    ".size " name ", .-" name "\n"
__asm__(".text\n" FRAME_FUNCTION("leaf_fn", "leaf_entry:\n", "nop\n", "leaf_ret:\n")
            FRAME_FUNCTION("caller_fn", "", "call leaf_fn\ncaller_site:\nnop\n", "")
                FRAME_FUNCTION("grand_fn", "", "call caller_fn\ngrand_site:\nnop\n", "")
                    FRAME_FUNCTION("outer_fn", "", "call grand_fn\nouter_site:\nnop\n", "")
    /* No call-frame information at all, as in glibc's clone3 around its
     * syscall. */
    ".p2align 4\n.type bare_fn, @function\nbare_fn:\nnop\nbare_pc:\nret\n.size bare_fn, .-bare_fn\n");

extern const char leaf_entry[], leaf_ret[], caller_site[], grand_site[], outer_site[], bare_pc[];

#define ADDR(label) ((uint64_t)(uintptr_t)(label))

enum { STACK_WORDS = 64 };
static uint64_t stack_words[STACK_WORDS];

/* The fake stack above in words[], with sp at its start, and caller_fn's
 * frame `gap` bytes up (0x30 above: the other frames follow it at 0x30
 * each); the sampled BP is caller_fn's (leaf_fn has no frame at either
 * sampled instruction). */
static struct ppw_leaf_sample fake_sample_in(uint64_t *words, uint64_t ip, uint64_t gap)
{
    uint64_t sp = ADDR(words);
    memset(words, 0, STACK_WORDS * sizeof *words);
    words[0] = ADDR(caller_site);
    words[gap / 8] = sp + gap + 0x30, words[gap / 8 + 1] = ADDR(grand_site);
    words[gap / 8 + 6] = sp + gap + 0x60, words[gap / 8 + 7] = ADDR(outer_site);
    return (struct ppw_leaf_sample){ip, sp, sp + gap, (const uint8_t *)words,
                                    STACK_WORDS * sizeof *words};
}

static struct ppw_leaf_sample fake_sample_gap(uint64_t ip, uint64_t gap)
{
    return fake_sample_in(stack_words, ip, gap);
}

static struct ppw_leaf_rules *rules; /* NULL: repairs without rules */

static void check_repaired_gap(const char *what, uint64_t ip, uint64_t copied, uint64_t gap)
{
    struct ppw_leaf_sample s = fake_sample_gap(ip, gap);
    s.stack_size = copied;
    /* What the kernel's frame-pointer walk gives: the PC, then BP + 8 and
     * on up the saved frame pointers; caller_site is not among them. */
    uint64_t chain[3] = {ip, ADDR(grand_site), ADDR(outer_site)};
    uint64_t out[8] = {0};
    int truncated = -1;
    int n = ppw_leaf_repair(&s, chain, 3, out, 8, &truncated, rules);
    /* The unwind: leaf_fn's rule gives caller_site at sp and the CFA
     * sp + 8; caller_fn's gives grand_site at its BP + 8, the slot the
     * kernel read it from, so the chain takes over there, and outer_fn's
     * frame agrees with it too. */
    if (n != 4 || out[0] != ip || out[1] != ADDR(caller_site) || out[2] != ADDR(grand_site) ||
        out[3] != ADDR(outer_site))
        FAIL_AT("%s: repaired into %d frames: %#llx %#llx %#llx %#llx", what, n,
                (unsigned long long)out[0], (unsigned long long)out[1], (unsigned long long)out[2],
                (unsigned long long)out[3]);
    CHECK_INT(truncated, 0);
}

static void check_repaired_within(const char *what, uint64_t ip, uint64_t copied)
{
    check_repaired_gap(what, ip, copied, 0x30);
}

static void check_repaired(const char *what, uint64_t ip)
{
    check_repaired_within(what, ip, sizeof stack_words);
}

static void test_entry(void)
{
    /* At leaf_fn's first instruction: CFA = sp + 8, the return address at
     * sp, BP still caller_fn's. */
    check_repaired("at the entry", ADDR(leaf_entry));
}

static void test_epilogue(void)
{
    /* At leaf_fn's ret, after `pop %rbp`: the rule still names sp - 8 for
     * the saved BP, below the copy.  The pop loaded BP from there, so the
     * sampled BP is its value.  Twice: libunwind caches the rule for this
     * address after the first unwind and skips the module lookup. */
    check_repaired("at the ret after pop %rbp", ADDR(leaf_ret));
    check_repaired("at the ret again (cached rule)", ADDR(leaf_ret));
}
#endif

static void test_beyond_copy(void)
{
    /* The copy holds the return address alone, as when the caller's frame
     * is larger than the 4 KiB copied: caller_fn's rule needs BP + 8, out
     * of the copy, which is where the kernel read grand_site (the first
     * slot of its walk, from the sampled BP).  Without that word the
     * unwind stopped at caller_site, the chain stayed as the kernel gave
     * it and caller_site was lost.  The unwind still cannot go past
     * caller_fn (its saved BP is not known), so the chain takes over from
     * grand_site on. */
    check_repaired_within("with 8 bytes of stack copied", ADDR(leaf_entry), 8);
}

#if defined(__x86_64__)
/* Repairs by rules: each must give what libunwind gave.  leaf_fn at its
 * entry (CFA = SP + 8, BP left alone) and caller_fn at caller_site - 1
 * (CFA = BP + 16, BP saved at CFA - 16) are learned from the first repair
 * (gap 0x30: BP - SP is 0x30 at the leaf, 0x28 in caller_fn).  The second
 * repair, with the same spans, is by rules alone.  With gap 0x40 the
 * spans differ.  leaf_fn's base was told at once, by an unwind of the
 * sampled frame with BP moved (its CFA stayed: SP).  caller_fn's (a return
 * address: only the sampled frame is probed) was not: one sighting cannot
 * tell an SP-based CFA from a BP-based one, so libunwind unwinds again,
 * and that second span tells (its CFA kept its offset from BP).  From
 * then on any gap is by rules.  A dlclose makes them stale. */
static void test_rules(void)
{
    static struct ppw_leaf_rules table;
    rules = &table;
    uint64_t before = ppw_leaf_by_rules;
    check_repaired_gap("learning", ADDR(leaf_entry), sizeof stack_words, 0x30);
    CHECK(ppw_leaf_by_rules == before);
    check_repaired_gap("by rules", ADDR(leaf_entry), sizeof stack_words, 0x30);
    CHECK(ppw_leaf_by_rules == before + 1);
    check_repaired_gap("another span", ADDR(leaf_entry), sizeof stack_words, 0x40);
    CHECK(ppw_leaf_by_rules == before + 1);
    check_repaired_gap("by rules, any span", ADDR(leaf_entry), sizeof stack_words, 0x50);
    CHECK(ppw_leaf_by_rules == before + 2);
    /* The epilogue: BP's slot is below the copy (test_epilogue). */
    check_repaired("epilogue, learning", ADDR(leaf_ret));
    check_repaired("epilogue, by rules", ADDR(leaf_ret));
    CHECK(ppw_leaf_by_rules == before + 3);
    unloads++;
    check_repaired("after a dlclose", ADDR(leaf_entry));
    CHECK(ppw_leaf_by_rules == before + 3);
    rules = NULL;
}

/* A sample whose BP is no frame pointer: pthread_create's clone3 runs
 * with BP the new thread's descriptor, on the heap, whose first word
 * points to itself and second is not code.  The kernel follows it and
 * fills its chain with that second word up to its limit.  bare_pc has no
 * call-frame information, so the unwind cannot step at all.  A BP below
 * SP places no frame of this stack: the chain keeps the PC alone, marked
 * cut short, instead of 127 frames of heap. */
static void test_bp_not_a_frame(void)
{
    static uint64_t descriptor[2];
    descriptor[0] = ADDR(descriptor), descriptor[1] = 0x5a5a5a5a5a5a5a5aull;
    struct ppw_leaf_sample s = fake_sample_gap(ADDR(bare_pc), 0x30);
    uint64_t chain[16];
    chain[0] = ADDR(bare_pc);
    for (int i = 1; i < 16; i++)
        chain[i] = descriptor[1];
    s.bp = s.sp - 0x1000;
    uint64_t out[16] = {0};
    int truncated = 0;
    int n = ppw_leaf_repair(&s, chain, 16, out, 16, &truncated, rules);
    CHECK_INT(n, 1);
    CHECK(out[0] == ADDR(bare_pc));
    CHECK_INT(truncated, 1);
    /* The same BP pointing to itself within the copy: the kernel read
     * caller_site's frame once, then the saved BP named the same frame
     * again.  Frames lie ever higher, so the chain ends after its first
     * return address (grand_site, read at BP + 8).  The unwind from
     * leaf_fn's entry adds caller_site; grand_fn's frame, found from the
     * same BP, would lie where caller_fn's does, so it stops there.
     * Without rules, then with the rules the first repair learned. */
    s = fake_sample_gap(ADDR(leaf_entry), 0x30);
    stack_words[0x30 / 8] = s.bp; /* caller_fn's saved BP: itself */
    uint64_t loop[16] = {ADDR(leaf_entry)};
    for (int i = 1; i < 16; i++)
        loop[i] = ADDR(grand_site);
    static struct ppw_leaf_rules table;
    for (int pass = 0; pass < 3; pass++) {
        rules = pass ? &table : NULL;
        truncated = 0;
        n = ppw_leaf_repair(&s, loop, 16, out, 16, &truncated, rules);
        CHECK_INT(n, 3);
        CHECK(out[0] == ADDR(leaf_entry) && out[1] == ADDR(caller_site) &&
              out[2] == ADDR(grand_site));
        CHECK_INT(truncated, 1);
    }
    rules = NULL;
}
#endif

/* Threads repairing at once over one table of rules, as the ring
 * readers of a process do: each thread its own fake stack, BP - SP drawn
 * from three spans, so that rules are learned, read and told their base
 * on several threads together.  Every repair must give what
 * check_repaired_gap derives (the same frames libunwind gives), whichever
 * thread learned the rules it used, and most must be by rules once
 * learned: a torn rule would give other frames or none. */
enum { REPAIR_THREADS = 4, REPAIRS_PER_THREAD = 2000 };
struct repair_worker {
    uint64_t words[STACK_WORDS];
    struct ppw_leaf_rules *rules;
    int wrong;
};

static void *repair_worker(void *arg)
{
    struct repair_worker *w = arg;
    for (int i = 0; i < REPAIRS_PER_THREAD; i++) {
        uint64_t gap = 0x30 + 0x10 * (uint64_t)(i % 3);
        struct ppw_leaf_sample s = fake_sample_in(w->words, ADDR(leaf_entry), gap);
        uint64_t chain[3] = {ADDR(leaf_entry), ADDR(grand_site), ADDR(outer_site)};
        uint64_t out[8] = {0};
        int truncated = -1;
        int n = ppw_leaf_repair(&s, chain, 3, out, 8, &truncated, w->rules);
        if (n != 4 || out[0] != ADDR(leaf_entry) || out[1] != ADDR(caller_site) ||
            out[2] != ADDR(grand_site) || out[3] != ADDR(outer_site) || truncated != 0)
            w->wrong++;
    }
    return NULL;
}

static void test_rules_shared(void)
{
    static struct ppw_leaf_rules table; /* empty: learned while the threads run */
    static struct repair_worker workers[REPAIR_THREADS];
    pthread_t threads[REPAIR_THREADS];
    uint64_t before = ppw_leaf_by_rules;
    int started = 0;
    for (int i = 0; i < REPAIR_THREADS; i++) {
        workers[i].rules = &table;
        if (pthread_create(&threads[i], NULL, repair_worker, &workers[i]) == 0)
            started++;
    }
    CHECK_INT(started, REPAIR_THREADS);
    int wrong = 0;
    for (int i = 0; i < started; i++) {
        pthread_join(threads[i], NULL);
        wrong += workers[i].wrong;
    }
    CHECK_INT(wrong, 0);
    /* Each thread needs libunwind for at most its first few repairs (the
     * leaf's and caller_site's rules, the latter's base at a second span),
     * and again only where a writer held a rule it read. */
    CHECK(ppw_leaf_by_rules - before > (uint64_t)started * REPAIRS_PER_THREAD * 9 / 10);
}

int main(void)
{
#if defined(__x86_64__)
    ppw_leaf_init();
    RUN(test_entry);
    RUN(test_epilogue);
    RUN(test_beyond_copy);
    RUN(test_rules);
    RUN(test_bp_not_a_frame);
    RUN(test_rules_shared);
#endif
    return harness_exit();
}
