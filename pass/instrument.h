/* GASP event instrumentation (docs/gasp.md).  Runs after the optimizer
 * (plugin.cpp registers it at OptimizerLast), so inlined code carries no
 * probes of its own: late probes perturb least. */
#ifndef PPW_PASS_INSTRUMENT_H
#define PPW_PASS_INSTRUMENT_H

#include "llvm_shim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Inserts the GASP calls that opts selects: START/END around every direct
 * call to a PPW_GASP_CALLS callee and, for GASP_C_FUNC, at function entry
 * and before every return; plus a constructor that calls gasp_init.  The
 * tool's functions are weak references and every call is guarded, so the
 * module runs unchanged without one.  Returns 1 when the module changed. */
int ppw_instrument_module(LLVMModuleRef module, const struct ppw_pass_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
