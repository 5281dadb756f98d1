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
 * this thread may call dl_iterate_phdr (ppw_modules_walk_may_block). */
PPW_SIGSAFE int ppw_leaf_repair(const struct ppw_leaf_sample *sample, const uint64_t *chain,
                                uint32_t n, uint64_t *out, uint32_t cap, int *truncated);

#endif
