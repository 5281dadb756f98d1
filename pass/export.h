/* Serializes a module's blame graphs into one chunk of the .ppw.blame
 * section (docs/FORMATS.md §1) and attaches it as module-level assembly, so
 * the graphs travel inside the object, and later the executable. */
#ifndef PPW_PASS_EXPORT_H
#define PPW_PASS_EXPORT_H

#include "blamegraph.h"

#include <llvm-c/Core.h>

struct ppw_result_global {
    const char *name, *key, *type, *file;
    unsigned line;
};

struct ppw_export_unit {
    const char *source, *comp_dir, *producer;
    unsigned analysed, skipped_without_debug_info;
    const struct ppw_result_func *functions;
    size_t function_count;
    const struct ppw_result_global *globals;
    size_t global_count;
};

/* Returns 0, or -1 when the target is not ELF (nothing is attached). */
int ppw_export_unit(LLVMModuleRef module, const struct ppw_export_unit *unit);

#endif
