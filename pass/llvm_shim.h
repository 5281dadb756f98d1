/* C-callable accessors that LLVM-C 19 lacks, implemented in plugin.cpp.
 * Everything else in the pass uses LLVM-C directly. */
#ifndef PPW_PASS_LLVM_SHIM_H
#define PPW_PASS_LLVM_SHIM_H

#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for one flag per PPW_GASP_TAGS row (options.c checks the count). */
#define PPW_PASS_MAX_EVENTS 128

/* Pass options, parsed once per process from the tokens of the environment
 * variable PPW_PASS_OPTIONS (options.c; docs/config.md lists them). */
struct ppw_pass_opts {
    int verbose;   /* verbose: print a summary per module */
    int no_export; /* no-export: analyse but embed nothing */
    /* inst-marker: ppw-cc added -finstrument-functions-after-inlining, so a
     * function without its attribute is no_instrument_function; the pass
     * removes the attributes again. */
    int inst_marker;
    /* Selected GASP events, one flag per PPW_GASP_TAGS row (row 0 is
     * GASP_C_FUNC); see ppw_options_event_selected in options.h. */
    unsigned char inst_events[PPW_PASS_MAX_EVENTS];
    /* Non-empty when the options cannot be honoured (an unreadable
     * inst-only file): the compile must fail with this message. */
    char error[512];
};

/* Entry point implemented in driver.c. */
void ppw_driver_run_module(LLVMModuleRef module, const struct ppw_pass_opts *opts);

/* DWARF tag of a debug-info node (DW_TAG_*), 0 when md is not a DINode. */
unsigned ppw_di_tag(LLVMMetadataRef md);
/* Name of a DIVariable, DIType or DISubprogram; "" when absent. */
const char *ppw_di_name(LLVMMetadataRef md);
/* Linkage name of a DISubprogram or DIGlobalVariable; "" when absent. */
const char *ppw_di_linkage_name(LLVMMetadataRef md);
/* Type of a DIVariable. */
LLVMMetadataRef ppw_di_variable_type(LLVMMetadataRef var);
/* 1-based argument number of a DILocalVariable, 0 for locals. */
unsigned ppw_di_variable_arg(LLVMMetadataRef var);
int ppw_di_variable_is_artificial(LLVMMetadataRef var);
/* Base type of a derived type (pointer, typedef, member, const...) or of an
 * array composite; NULL when absent (void). */
LLVMMetadataRef ppw_di_base_type(LLVMMetadataRef type);
/* Elements of a composite type: members for structs and unions. */
unsigned ppw_di_element_count(LLVMMetadataRef type);
LLVMMetadataRef ppw_di_element(LLVMMetadataRef type, unsigned index);
/* Number of elements of array dimension `dim`, -1 when unknown (flexible,
 * VLA) or when type has fewer dimensions. */
int64_t ppw_di_array_dim(LLVMMetadataRef type, unsigned dim, unsigned *dim_count);
/* File name of any DIScope-like node (variable, type, subprogram). */
const char *ppw_di_file(LLVMMetadataRef md);
unsigned ppw_di_line(LLVMMetadataRef md);

/* Return type of a DISubprogram (NULL for void). */
LLVMMetadataRef ppw_di_subprogram_return_type(LLVMMetadataRef subprogram);

/* For a global: its DIGlobalVariable, or NULL. */
LLVMMetadataRef ppw_global_di_variable(LLVMValueRef global);
int ppw_di_global_is_local_to_unit(LLVMMetadataRef gv);
/* DISubprogram a function-scope static belongs to, or NULL. */
LLVMMetadataRef ppw_di_global_function_scope(LLVMMetadataRef gv);

/* For a llvm.dbg.{declare,value,assign} call: the described value (NULL when
 * it is undef, poison, empty or a DIArgList), the variable, and whether the
 * expression ends in DW_OP_deref (the value points at the storage's address).
 * For dbg.assign the address operand is returned by ppw_dbg_assign_address. */
LLVMValueRef ppw_dbg_value(LLVMValueRef call);
LLVMMetadataRef ppw_dbg_variable(LLVMValueRef call);
int ppw_dbg_expr_derefs(LLVMValueRef call);
/* The bytes DW_OP_plus_uconst adds before the first DW_OP_deref (the
 * storage's address is in a field of the described memory: the second shared
 * variable of an OpenMP task, at __context + 8); 0 without them. */
unsigned long long ppw_dbg_expr_deref_offset(LLVMValueRef call);
LLVMValueRef ppw_dbg_assign_address(LLVMValueRef call);

/* The scopeLine of a DISubprogram (where its body starts), 0 when absent. */
unsigned ppw_di_scope_line(LLVMMetadataRef subprogram);

/* Splits `before`'s block into `if (condition) { new block }` ahead of
 * `before` (llvm::SplitBlockAndInsertIfThen) and returns the new block's
 * terminator, ahead of which the caller inserts the guarded code. */
LLVMValueRef ppw_split_if_then(LLVMValueRef condition, LLVMValueRef before);
/* The same with an else block: `if (condition) { then } else { else }`
 * ahead of `before`, and the two new blocks' terminators (both branch to
 * the block that starts at `before`). */
void ppw_split_if_then_else(LLVMValueRef condition, LLVMValueRef before, LLVMValueRef *then_end,
                            LLVMValueRef *else_end);

/* Appends `function` to llvm.global_ctors with `priority`. */
void ppw_append_global_ctor(LLVMModuleRef module, LLVMValueRef function, int priority);

#ifdef __cplusplus
}
#endif
#endif
