/* Control dependence from post-dominators (Ferrante, Ottenstein and Warren;
 * post-dominators by Cooper, Harvey and Kennedy's iterative algorithm on
 * the reverse CFG).  Blocks that cannot reach an exit (infinite loops)
 * count as exits themselves, so every block gets a post-dominator.  Natural
 * loops from dominators tell a loop's exit tests from the branches inside
 * it. */
#ifndef PPW_PASS_CFG_H
#define PPW_PASS_CFG_H

#include "support.h"

#include <llvm-c/Core.h>

struct ppw_cfg {
    LLVMBasicBlockRef *blocks;
    size_t block_count;
    struct ppw_ptrmap block_index;  /* block -> index */
    struct ppw_intvec *successors;  /* per block */
    int *post_dominator;            /* immediate post-dominator; block_count = exit */
    struct ppw_intvec *controllers; /* per block: blocks whose branch decides it runs */
    /* per block: those controllers whose branch is an exit test: it leaves
     * a loop holding both, or the function (an early return); it decides
     * whether the block runs again or at all, not what the block computes */
    struct ppw_intvec *exit_test_controllers;
    unsigned char *leaves_loop; /* per block: its branch leaves a natural loop holding it */
};

void ppw_cfg_build(struct ppw_cfg *cfg, LLVMValueRef function);
int ppw_cfg_index(const struct ppw_cfg *cfg, LLVMBasicBlockRef block);
void ppw_cfg_free(struct ppw_cfg *cfg);

#endif
