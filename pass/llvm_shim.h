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

/* Pass options, parsed once by the plugin from -ppw-* command-line flags. */
struct ppw_pass_opts {
    int verbose;   /* -ppw-verbose: print a summary per module */
    int no_export; /* -ppw-no-export: analyse but embed nothing */
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
LLVMValueRef ppw_dbg_assign_address(LLVMValueRef call);

#ifdef __cplusplus
}
#endif
#endif
