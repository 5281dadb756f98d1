/* The ring sampler's leaf repair (docs/runtime.md, "The ring sampler").
 *
 * The kernel builds a sample's call chain by following frame pointers from
 * the interrupted registers.  A function that has not set up its frame at
 * the interrupted instruction (a libc or libomp leaf built without frame
 * pointers, or the frameless fast path of a shrink-wrapped function of the
 * program) is then skipped together with its caller's call site: the line
 * that names the data.  This unwinds the first frames again with their
 * call-frame information (libunwind, remote mode, over the stack bytes the
 * kernel copied with the sample) until it meets the kernel's chain. */
#ifndef PPW_RUNTIME_LEAF_H
#define PPW_RUNTIME_LEAF_H

#include <stdint.h>

#include "sigsafe.h"

struct ppw_leaf_sample {
    uint64_t ip, sp, bp;  /* the interrupted registers */
    const uint8_t *stack; /* the copy of the stack from sp up */
    uint64_t stack_size;
};

/* Unwind rules learned from earlier repairs, so that a leaf seen before
 * is unwound without libunwind: for an address, where the caller's frame
 * starts (CFA = SP + cfa_off; the return address below it) and where BP
 * was saved.  Zeroed memory is an empty table.  One table serves every
 * thread (they run the same code): each slot is read and written under
 * its own sequence count, a writer that finds it taken gives up, and a
 * reader that sees it change misses, so no thread ever waits, in a signal
 * handler or not.  (A slot another thread was writing when the process
 * forked stays unused in the child.)  32 bytes a rule, a set of 4 in two
 * cache lines. */
enum { PPW_LEAF_RULES = 4096 };
struct ppw_leaf_rule {
    uint64_t key;    /* the frame's address (a return address less 1); 0: empty */
    int64_t span;    /* BP - SP at the sighting the offsets come from */
    int32_t cfa_off; /* CFA - SP then */
    int32_t bp_save; /* the caller's BP saved at CFA - bp_save; 0: BP left alone */
    uint32_t seq;    /* odd while a writer changes the slot */
    uint16_t base;   /* the CFA's register, once sightings with two spans told */
    uint16_t unloads; /* ppw_modules_unload_count() it was learned under, its low bits: a
                         module's code may have moved since */
};
struct ppw_leaf_rules {
    _Alignas(128) struct ppw_leaf_rule slot[PPW_LEAF_RULES];
};

/* Repairs done by rules alone, without libunwind (tests, diagnostics). */
extern uint64_t ppw_leaf_by_rules;

/* Once, before any thread samples. */
void ppw_leaf_init(void);

/* Repairs chain[0..n) (chain[0] the interrupted PC, then return
 * addresses) into out[0..cap): the frames unwound from the sample up to
 * where the kernel's chain takes over, then the rest of it.  Returns the
 * repaired length; n itself, with out a copy of the chain, when the chain
 * needs no repair or the unwind cannot tell (no call-frame information):
 * the kernel's chain is then the best there is.  When the unwind reached
 * the outermost frame without meeting the chain, or found the chain wrong
 * beyond a frame they share, the frames unwound, *truncated set unless
 * the outermost frame was reached.
 * -1 when the unwinder is not available.  The caller has checked that
 * this thread may call dl_iterate_phdr (ppw_modules_walk_may_block).
 * rules (NULL: none) are used and learned: a repair whose every frame has
 * a trusted rule gives what libunwind would, without it. */
PPW_SIGSAFE int ppw_leaf_repair(const struct ppw_leaf_sample *sample, const uint64_t *chain,
                                uint32_t n, uint64_t *out, uint32_t cap, int *truncated,
                                struct ppw_leaf_rules *rules);

#endif
