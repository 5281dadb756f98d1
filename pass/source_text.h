/* The program's own source lines, read on demand while a module is
 * analysed: the pass names what debug info leaves anonymous (the constant
 * subscripting an array of pointers is a macro or enumerator, and DWARF
 * keeps only its value). */
#ifndef PPW_PASS_SOURCE_TEXT_H
#define PPW_PASS_SOURCE_TEXT_H

#include "support.h"

#include <llvm-c/Core.h>

struct ppw_source_file;

struct ppw_source_text {
    struct ppw_source_file *files; /* each file read once, kept for the module */
    /* instruction -> 1 + index into located: where its source line is
     * (itself or a user), asked again on every round of points-to */
    struct ppw_ptrmap located_index;
    LLVMValueRef *located;
    size_t located_count, located_capacity;
};

/* How the source spells the constant subscript `index` of the array of
 * pointers named `base` (a field or variable name) on the line of `inst`
 * or, when the optimizer dropped its location, of the first instruction
 * using it: the identifier or integer between the brackets of
 * `base[...]`.  NULL when the line is unreadable or ambiguous. */
const char *ppw_source_subscript(struct ppw_source_text *text, struct ppw_arena *arena,
                                 LLVMValueRef inst, const char *base, unsigned long long index);

void ppw_source_text_free(struct ppw_source_text *text);

#endif
