/* Per module: analyse every defined function that has debug info, then
 * embed the graphs.  The analysis changes no instruction: it only appends
 * module-level assembly.  (The GASP instrumentation is a separate pass at
 * the end of the optimizer: instrument.c.) */
#include "blamegraph.h"
#include "memory.h"
#include "dbgvar.h"
#include "export.h"
#include "llvm_shim.h"

#include <llvm-c/Target.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Clang's intrinsic headers (emmintrin.h and the like) define their
 * wrappers static, always_inline and __nodebug__: no debug info, and not
 * the user's code, so not worth a warning about -g. */
static int is_header_wrapper(LLVMValueRef function)
{
    LLVMLinkage linkage = LLVMGetLinkage(function);
    if (linkage != LLVMInternalLinkage && linkage != LLVMPrivateLinkage)
        return 0;
    unsigned always_inline = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
    return LLVMGetEnumAttributeAtIndex(function, LLVMAttributeFunctionIndex, always_inline) !=
           NULL;
}

static int should_analyse(LLVMValueRef function, unsigned *skipped)
{
    if (LLVMIsDeclaration(function))
        return 0;
    /* available_externally bodies are emitted by another unit. */
    if (LLVMGetLinkage(function) == LLVMAvailableExternallyLinkage)
        return 0;
    if (!LLVMGetSubprogram(function)) {
        if (!is_header_wrapper(function))
            (*skipped)++;
        return 0;
    }
    return 1;
}

static size_t collect_globals(LLVMModuleRef module, struct ppw_arena *arena,
                              struct ppw_result_global **out)
{
    size_t count = 0, capacity = 0;
    *out = NULL;
    for (LLVMValueRef global = LLVMGetFirstGlobal(module); global;
         global = LLVMGetNextGlobal(global)) {
        LLVMMetadataRef variable = ppw_global_di_variable(global);
        if (!variable || !ppw_di_name(variable)[0] || LLVMIsDeclaration(global))
            continue;
        *out = ppw_grow(*out, &capacity, count + 1, sizeof **out, 16);
        struct ppw_result_global *record = &(*out)[count++];
        record->name = ppw_di_name(variable);
        record->key = ppw_dbgvar_global_key(arena, global, variable);
        record->type = ppw_dbgvar_type_name(arena, ppw_di_variable_type(variable));
        record->file = ppw_di_file(variable);
        record->line = ppw_di_line(variable);
    }
    return count;
}

static const char *unit_directory(LLVMModuleRef module)
{
    for (LLVMValueRef function = LLVMGetFirstFunction(module); function;
         function = LLVMGetNextFunction(function)) {
        LLVMMetadataRef subprogram = LLVMGetSubprogram(function);
        if (!subprogram)
            continue;
        unsigned length = 0;
        const char *directory = LLVMDIFileGetDirectory(LLVMDIScopeGetFile(subprogram), &length);
        return directory ? directory : "";
    }
    return "";
}

void ppw_driver_run_module(LLVMModuleRef module, const struct ppw_pass_opts *opts)
{
    /* LLVM-C 19 cannot iterate debug records; the intrinsic form it can. */
    LLVMBool had_records = LLVMIsNewDbgInfoFormat(module);
    if (had_records)
        LLVMSetIsNewDbgInfoFormat(module, 0);

    struct ppw_arena arena = {0};
    struct ppw_dbgvar_types types = {0};
    struct ppw_source_text sources = {0};
    struct ppw_windows windows = {0};
    struct ppw_blamegraph_context context = {&arena, &types, LLVMGetModuleDataLayout(module),
                                             &sources, NULL};
    ppw_blamegraph_find_windows(&context, module, &windows);
    context.windows = &windows;
    size_t capacity = 0, count = 0;
    unsigned skipped = 0;
    struct ppw_result_func *functions = NULL;
    for (LLVMValueRef function = LLVMGetFirstFunction(module); function;
         function = LLVMGetNextFunction(function)) {
        if (!should_analyse(function, &skipped))
            continue;
        functions = ppw_grow(functions, &capacity, count + 1, sizeof *functions, 16);
        ppw_blamegraph_analyse(&context, function, &functions[count++]);
    }

    size_t length = 0;
    const char *source = LLVMGetSourceFileName(module, &length);
    if (skipped)
        fprintf(stderr,
                "ppw: warning: %s: %u function%s without debug info not analysed "
                "(compile with -g)\n",
                source, skipped, skipped == 1 ? "" : "s");

    struct ppw_result_global *globals = NULL;
    struct ppw_export_unit unit = {0};
    unit.source = source;
    unit.comp_dir = unit_directory(module);
    unit.producer = "ppw 0.1.0, LLVM 19";
    unit.analysed = (unsigned)count;
    unit.skipped_without_debug_info = skipped;
    unit.functions = functions;
    unit.function_count = count;
    unit.global_count = collect_globals(module, &arena, &globals);
    unit.globals = globals;
    if (!opts->no_export && (count || unit.global_count))
        ppw_export_unit(module, &unit);
    if (opts->verbose)
        fprintf(stderr, "ppw: %s: %zu functions analysed, %zu globals\n", source, count,
                unit.global_count);

    for (size_t i = 0; i < count; i++)
        ppw_blamegraph_free_result(&functions[i]);
    free(functions);
    free(globals);
    free(windows.rules);
    ppw_dbgvar_types_free(&types);
    ppw_source_text_free(&sources);
    ppw_arena_free(&arena);
    if (had_records)
        LLVMSetIsNewDbgInfoFormat(module, 1);
}
