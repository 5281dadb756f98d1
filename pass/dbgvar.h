/* Debug-info helpers: what a DIType is after typedefs and qualifiers, its
 * members and elements, its C spelling, and a map from IR struct names to
 * their debug-info composites (for memory reached through void pointers). */
#ifndef PPW_PASS_DBGVAR_H
#define PPW_PASS_DBGVAR_H

#include "support.h"

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <stdint.h>

/* The type without typedefs and cv/restrict/atomic qualifiers. */
LLVMMetadataRef ppw_dbgvar_strip(LLVMMetadataRef type);
int ppw_dbgvar_is_pointer(LLVMMetadataRef type);
/* Pointee of a pointer or reference type; NULL for void or non-pointers. */
LLVMMetadataRef ppw_dbgvar_pointee(LLVMMetadataRef type);
/* Element type of an array type, or the type itself when it is no array. */
LLVMMetadataRef ppw_dbgvar_element(LLVMMetadataRef type);
int ppw_dbgvar_is_array(LLVMMetadataRef type);
/* A number or enum (after typedefs): one value, no parts, pointing at
 * nothing (a pointer's row stands for the memory it points to). */
int ppw_dbgvar_is_scalar(LLVMMetadataRef type);

/* Finds the struct or union member containing byte `offset`, looking
 * through arrays of structs.  Returns 1 and fills the outputs on success. */
int ppw_dbgvar_member_at(LLVMMetadataRef type, uint64_t offset, const char **name,
                         LLVMMetadataRef *member_type, uint64_t *member_offset);

/* A global's program-level identity: its symbol, qualified by file for
 * statics of a unit (different units may reuse a static's name). */
const char *ppw_dbgvar_global_key(struct ppw_arena *arena, LLVMValueRef global,
                                  LLVMMetadataRef variable);

/* The C spelling of a type, e.g. "struct grid *" or "double[4]". */
const char *ppw_dbgvar_type_name(struct ppw_arena *arena, LLVMMetadataRef type);

/* IR struct name ("struct.job", "struct.job.12") -> DICompositeType. */
struct ppw_dbgvar_types {
    struct ppw_ptrmap seen; /* DI types visited */
    const char **names;     /* composite names, "struct.<name>" form */
    LLVMMetadataRef *types;
    size_t count, capacity;
};

void ppw_dbgvar_types_add(struct ppw_dbgvar_types *types, LLVMMetadataRef type);
LLVMMetadataRef ppw_dbgvar_types_find(const struct ppw_dbgvar_types *types, const char *ir_name);
void ppw_dbgvar_types_free(struct ppw_dbgvar_types *types);

#endif
