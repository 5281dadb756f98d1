// The only C++ in ppw: LLVM's plugin interface needs it, and LLVM-C 19 has no
// accessors for a few debug-info fields.  The pass logic is C (driver.c).
#include "llvm_shim.h"

#include "instrument.h"
#include "options.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <cstdlib>

using namespace llvm;

namespace {

// Clang loads -fpass-plugin libraries after parsing -mllvm, so options
// travel in the environment (ppw-cc sets it).  Parsed once per process, so
// each warning about them appears once per compile.
const ppw_pass_opts &read_options()
{
    static const ppw_pass_opts opts = [] {
        ppw_pass_opts parsed{};
        ppw_options_parse(std::getenv("PPW_PASS_OPTIONS"), &parsed);
        return parsed;
    }();
    return opts;
}

// The blame analysis, at PipelineStart: the IR is still close to the source.
struct PpwPass : PassInfoMixin<PpwPass> {
    PreservedAnalyses run(Module &module, ModuleAnalysisManager &)
    {
        ppw_driver_run_module(wrap(&module), &read_options());
        // Only module inline asm is added; no IR the analyses cache changes.
        return PreservedAnalyses::all();
    }
    static bool isRequired() { return true; } // run at -O0 and on optnone too
};

// GASP instrumentation, at OptimizerLast: after inlining, so probes land
// only in the functions that survive (LLVM 19 runs this EP at -O0 too).
struct PpwInstrumentPass : PassInfoMixin<PpwInstrumentPass> {
    PreservedAnalyses run(Module &module, ModuleAnalysisManager &)
    {
        const ppw_pass_opts &opts = read_options();
        if (opts.error[0]) {
            // An error diagnostic: clang prints it and fails the compile.
            module.getContext().emitError(opts.error);
            return PreservedAnalyses::all();
        }
        if (!ppw_instrument_module(wrap(&module), &opts))
            return PreservedAnalyses::all();
        return PreservedAnalyses::none();
    }
    static bool isRequired() { return true; }
};

const char *str_or_empty(StringRef s) { return s.empty() ? "" : s.data(); }

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK __attribute__((visibility("default"))) PassPluginLibraryInfo
llvmGetPassPluginInfo()
{
    return {LLVM_PLUGIN_API_VERSION, "ppw", "0.1.0", [](PassBuilder &builder) {
                builder.registerPipelineStartEPCallback(
                    [](ModulePassManager &mpm, OptimizationLevel) { mpm.addPass(PpwPass()); });
                builder.registerOptimizerLastEPCallback([](ModulePassManager &mpm,
                                                           OptimizationLevel) {
                    mpm.addPass(PpwInstrumentPass());
                });
                // For opt: -passes=ppw (analysis), -passes=ppw-instrument.
                builder.registerPipelineParsingCallback(
                    [](StringRef name, ModulePassManager &mpm,
                       ArrayRef<PassBuilder::PipelineElement>) {
                        if (name == "ppw")
                            mpm.addPass(PpwPass());
                        else if (name == "ppw-instrument")
                            mpm.addPass(PpwInstrumentPass());
                        else
                            return false;
                        return true;
                    });
            }};
}

// MDString data is NUL-terminated in LLVM's string pool, so returning data()
// as a C string is safe.

extern "C" unsigned ppw_di_tag(LLVMMetadataRef md)
{
    auto *node = dyn_cast_or_null<DINode>(unwrap(md));
    return node ? node->getTag() : 0;
}

extern "C" const char *ppw_di_name(LLVMMetadataRef md)
{
    Metadata *node = unwrap(md);
    if (auto *var = dyn_cast_or_null<DIVariable>(node))
        return str_or_empty(var->getName());
    if (auto *type = dyn_cast_or_null<DIType>(node))
        return str_or_empty(type->getName());
    if (auto *sp = dyn_cast_or_null<DISubprogram>(node))
        return str_or_empty(sp->getName());
    return "";
}

extern "C" const char *ppw_di_linkage_name(LLVMMetadataRef md)
{
    Metadata *node = unwrap(md);
    if (auto *sp = dyn_cast_or_null<DISubprogram>(node))
        return str_or_empty(sp->getLinkageName());
    if (auto *gv = dyn_cast_or_null<DIGlobalVariable>(node))
        return str_or_empty(gv->getLinkageName());
    return "";
}

extern "C" LLVMMetadataRef ppw_di_variable_type(LLVMMetadataRef var)
{
    auto *node = dyn_cast_or_null<DIVariable>(unwrap(var));
    return node ? wrap(node->getType()) : nullptr;
}

extern "C" unsigned ppw_di_variable_arg(LLVMMetadataRef var)
{
    auto *node = dyn_cast_or_null<DILocalVariable>(unwrap(var));
    return node ? node->getArg() : 0;
}

extern "C" int ppw_di_variable_is_artificial(LLVMMetadataRef var)
{
    auto *node = dyn_cast_or_null<DILocalVariable>(unwrap(var));
    return node && node->isArtificial();
}

extern "C" LLVMMetadataRef ppw_di_base_type(LLVMMetadataRef type)
{
    Metadata *node = unwrap(type);
    if (auto *derived = dyn_cast_or_null<DIDerivedType>(node))
        return wrap(derived->getBaseType());
    if (auto *composite = dyn_cast_or_null<DICompositeType>(node))
        return wrap(composite->getBaseType());
    return nullptr;
}

extern "C" unsigned ppw_di_element_count(LLVMMetadataRef type)
{
    auto *composite = dyn_cast_or_null<DICompositeType>(unwrap(type));
    return composite ? composite->getElements().size() : 0;
}

extern "C" LLVMMetadataRef ppw_di_element(LLVMMetadataRef type, unsigned index)
{
    auto *composite = dyn_cast_or_null<DICompositeType>(unwrap(type));
    if (!composite || index >= composite->getElements().size())
        return nullptr;
    return wrap(composite->getElements()[index]);
}

extern "C" int64_t ppw_di_array_dim(LLVMMetadataRef type, unsigned dim, unsigned *dim_count)
{
    auto *composite = dyn_cast_or_null<DICompositeType>(unwrap(type));
    if (dim_count)
        *dim_count = 0;
    if (!composite || composite->getTag() != dwarf::DW_TAG_array_type)
        return -1;
    DINodeArray dims = composite->getElements();
    if (dim_count)
        *dim_count = dims.size();
    if (dim >= dims.size())
        return -1;
    auto *range = dyn_cast_or_null<DISubrange>(dims[dim]);
    if (!range)
        return -1;
    auto count = range->getCount();
    if (auto *value = dyn_cast_if_present<ConstantInt *>(count))
        return value->getSExtValue();
    return -1;
}

extern "C" const char *ppw_di_file(LLVMMetadataRef md)
{
    Metadata *node = unwrap(md);
    DIFile *file = nullptr;
    if (auto *var = dyn_cast_or_null<DIVariable>(node))
        file = var->getFile();
    else if (auto *scope = dyn_cast_or_null<DIScope>(node))
        file = scope->getFile();
    return file ? str_or_empty(file->getFilename()) : "";
}

extern "C" unsigned ppw_di_line(LLVMMetadataRef md)
{
    Metadata *node = unwrap(md);
    if (auto *var = dyn_cast_or_null<DIVariable>(node))
        return var->getLine();
    if (auto *sp = dyn_cast_or_null<DISubprogram>(node))
        return sp->getLine();
    if (auto *type = dyn_cast_or_null<DIType>(node))
        return type->getLine();
    return 0;
}

extern "C" LLVMMetadataRef ppw_di_subprogram_return_type(LLVMMetadataRef subprogram)
{
    auto *sp = dyn_cast_or_null<DISubprogram>(unwrap(subprogram));
    if (!sp || !sp->getType())
        return nullptr;
    auto types = sp->getType()->getTypeArray();
    return types.size() ? wrap(types[0]) : nullptr;
}

extern "C" LLVMMetadataRef ppw_global_di_variable(LLVMValueRef global)
{
    auto *gv = dyn_cast_or_null<GlobalVariable>(unwrap(global));
    if (!gv)
        return nullptr;
    SmallVector<DIGlobalVariableExpression *, 1> exprs;
    gv->getDebugInfo(exprs);
    for (auto *expr : exprs)
        if (expr && expr->getVariable())
            return wrap(expr->getVariable());
    return nullptr;
}

extern "C" int ppw_di_global_is_local_to_unit(LLVMMetadataRef gv)
{
    auto *node = dyn_cast_or_null<DIGlobalVariable>(unwrap(gv));
    return node && node->isLocalToUnit();
}

extern "C" LLVMMetadataRef ppw_di_global_function_scope(LLVMMetadataRef gv)
{
    auto *node = dyn_cast_or_null<DIGlobalVariable>(unwrap(gv));
    if (!node)
        return nullptr;
    for (DIScope *scope = node->getScope(); scope; scope = scope->getScope()) {
        if (auto *sp = dyn_cast<DISubprogram>(scope))
            return wrap(sp);
        if (isa<DICompileUnit>(scope) || isa<DIFile>(scope))
            break;
    }
    return nullptr;
}

namespace {

DbgVariableIntrinsic *as_dbg(LLVMValueRef call)
{
    return dyn_cast_or_null<DbgVariableIntrinsic>(unwrap(call));
}

} // namespace

extern "C" LLVMValueRef ppw_dbg_value(LLVMValueRef call)
{
    auto *dbg = as_dbg(call);
    if (!dbg || dbg->hasArgList())
        return nullptr;
    Value *value = dbg->getVariableLocationOp(0);
    if (!value || isa<UndefValue>(value))
        return nullptr;
    return wrap(value);
}

extern "C" LLVMMetadataRef ppw_dbg_variable(LLVMValueRef call)
{
    auto *dbg = as_dbg(call);
    return dbg ? wrap(dbg->getVariable()) : nullptr;
}

extern "C" int ppw_dbg_expr_derefs(LLVMValueRef call)
{
    auto *dbg = as_dbg(call);
    if (!dbg || !dbg->getExpression())
        return 0;
    for (auto op : dbg->getExpression()->expr_ops())
        if (op.getOp() == dwarf::DW_OP_deref)
            return 1;
    return 0;
}

extern "C" unsigned long long ppw_dbg_expr_deref_offset(LLVMValueRef call)
{
    auto *dbg = as_dbg(call);
    unsigned long long offset = 0;
    if (!dbg || !dbg->getExpression())
        return 0;
    for (auto op : dbg->getExpression()->expr_ops()) {
        if (op.getOp() == dwarf::DW_OP_deref)
            return offset;
        if (op.getOp() == dwarf::DW_OP_plus_uconst)
            offset += op.getArg(0);
    }
    return 0;
}

extern "C" LLVMValueRef ppw_dbg_assign_address(LLVMValueRef call)
{
    auto *assign = dyn_cast_or_null<DbgAssignIntrinsic>(unwrap(call));
    if (!assign)
        return nullptr;
    Value *address = assign->getAddress();
    if (!address || isa<UndefValue>(address))
        return nullptr;
    return wrap(address);
}

extern "C" unsigned ppw_di_scope_line(LLVMMetadataRef subprogram)
{
    auto *sp = dyn_cast_or_null<DISubprogram>(unwrap(subprogram));
    return sp ? sp->getScopeLine() : 0;
}

extern "C" LLVMValueRef ppw_split_if_then(LLVMValueRef condition, LLVMValueRef before)
{
    auto *inst = unwrap<Instruction>(before);
    return wrap(SplitBlockAndInsertIfThen(unwrap(condition), inst->getIterator(), false));
}

extern "C" void ppw_split_if_then_else(LLVMValueRef condition, LLVMValueRef before,
                                       LLVMValueRef *then_end, LLVMValueRef *else_end)
{
    auto *inst = unwrap<Instruction>(before);
    Instruction *then_term = nullptr, *else_term = nullptr;
    SplitBlockAndInsertIfThenElse(unwrap(condition), inst->getIterator(), &then_term, &else_term);
    *then_end = wrap(then_term);
    *else_end = wrap(else_term);
}

extern "C" void ppw_append_global_ctor(LLVMModuleRef module, LLVMValueRef function, int priority)
{
    appendToGlobalCtors(*unwrap(module), unwrap<Function>(function), priority);
}
