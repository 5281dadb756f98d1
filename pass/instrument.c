/* GASP event instrumentation.  Per function: skip guards first, then the
 * sites are collected (wrapped calls, returns), and only then is the IR
 * changed.  Every inserted call sits in its own block behind one
 * `gasp_event_notify != null` test computed at entry, because the tool's
 * functions are weak references: without a tool the program runs as built
 * without ppw. */
#include "instrument.h"

#include "options.h"
#include "support.h"

#include <ppw/gasp_events.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char notify_name[] = "gasp_event_notify";
static const char init_name[] = "gasp_init";
/* The module constructor this pass adds; finding it means the module was
 * instrumented already (a second run would double every event). */
static const char ctor_name[] = "__ppw_gasp_init";
/* The earliest priority outside the range reserved for the implementation. */
static const int ctor_priority = 101;
/* gasp_event_notify's fixed arguments: context, tag, type, file, line, col. */
enum { FIXED_ARGS = 6, SITE_ARGS = 2, MAX_PAYLOAD = SITE_ARGS + 33 };

struct call_row {
    unsigned tag;
    const char *callee;
    enum ppw_op op;
    unsigned operand_mask;
    int has_result;
};

static const struct call_row call_rows[] = {
#define CALL_ROW(tag, callee, op, mask, result) {tag, callee, op, mask, result},
    PPW_GASP_CALLS(CALL_ROW)
#undef CALL_ROW
};

#define CALL_ROW_COUNT (sizeof call_rows / sizeof call_rows[0])

struct file_string {
    const char *name;
    size_t length;
    LLVMValueRef global;
};

/* Where an event happened, as gasp_event_notify receives it. */
struct source_place {
    LLVMValueRef file; /* a private string, or null */
    unsigned line, col;
};

struct instrumenter {
    LLVMModuleRef module;
    LLVMContextRef context;
    LLVMBuilderRef builder;
    const struct ppw_pass_opts *opts;
    LLVMTypeRef i32, i64, ptr, notify_type;
    LLVMValueRef notify;
    unsigned zeroext_kind, naked_kind, returns_twice_kind;
    struct ppw_ptrmap callee_rows; /* callee function -> call_rows index + 1 */
    struct file_string *files;
    size_t file_count, file_capacity;
    /* What was done, for the verbose summary and the warnings. */
    unsigned functions, calls, odd_calls, musttail_skips;
};

/* A call to wrap and its row in call_rows. */
struct call_site {
    LLVMValueRef call;
    int row;
};

/* One function's sites, collected before anything changes. */
struct sites {
    struct call_site *calls;
    size_t call_count, call_capacity;
    LLVMValueRef *returns;
    size_t return_count, return_capacity;
    int exit_blocked; /* a return follows a musttail call: no exit event fits */
};

/* ---- module-level values ------------------------------------------------ */

static LLVMValueRef private_string(struct instrumenter *in, const char *text, size_t length,
                                   const char *name)
{
    LLVMValueRef init = LLVMConstStringInContext2(in->context, text, length, 0);
    LLVMValueRef global = LLVMAddGlobal(in->module, LLVMTypeOf(init), name);
    LLVMSetInitializer(global, init);
    LLVMSetLinkage(global, LLVMPrivateLinkage);
    LLVMSetGlobalConstant(global, 1);
    LLVMSetAlignment(global, 1);
    /* No unnamed_addr: a distinct address per function is what lets a tool
     * key functions by their funcsig pointer. */
    return global;
}

/* One string per file name per module, so a tool may compare pointers. */
static LLVMValueRef file_string(struct instrumenter *in, const char *name, size_t length)
{
    if (!name || !length)
        return LLVMConstNull(in->ptr);
    for (size_t i = 0; i < in->file_count; i++)
        if (in->files[i].length == length && !memcmp(in->files[i].name, name, length))
            return in->files[i].global;
    in->files = ppw_grow(in->files, &in->file_capacity, in->file_count + 1, sizeof *in->files, 8);
    LLVMValueRef global = private_string(in, name, length, "__ppw_gasp_file");
    in->files[in->file_count++] = (struct file_string){name, length, global};
    return global;
}

/* The tool's function: an existing declaration or definition is used as
 * it is; otherwise a weak declaration.  NULL when the name is taken by
 * something that is not a function. */
static LLVMValueRef tool_function(struct instrumenter *in, const char *name, LLVMTypeRef type)
{
    LLVMValueRef existing = LLVMGetNamedFunction(in->module, name);
    if (existing)
        return existing;
    if (LLVMGetNamedGlobal(in->module, name) ||
        LLVMGetNamedGlobalAlias(in->module, name, strlen(name)))
        return NULL;
    LLVMValueRef function = LLVMAddFunction(in->module, name, type);
    LLVMSetLinkage(function, LLVMExternalWeakLinkage);
    return function;
}

/* static void __ppw_gasp_init(void) { if (gasp_init) gasp_init(GASP_LANG_C, 0, 0); } */
static int add_init_constructor(struct instrumenter *in)
{
    LLVMValueRef null = LLVMConstNull(in->ptr);
    LLVMTypeRef init_params[] = {in->i32, in->ptr, in->ptr};
    LLVMTypeRef init_type = LLVMFunctionType(in->ptr, init_params, 3, 0);
    LLVMValueRef init = tool_function(in, init_name, init_type);
    if (!init)
        return -1;
    LLVMTypeRef void_type = LLVMVoidTypeInContext(in->context);
    LLVMValueRef ctor =
        LLVMAddFunction(in->module, ctor_name, LLVMFunctionType(void_type, NULL, 0, 0));
    LLVMSetLinkage(ctor, LLVMInternalLinkage);
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(in->context, ctor, "entry");
    LLVMBasicBlockRef call = LLVMAppendBasicBlockInContext(in->context, ctor, "init");
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(in->context, ctor, "done");
    LLVMPositionBuilderAtEnd(in->builder, entry);
    LLVMSetCurrentDebugLocation2(in->builder, NULL);
    LLVMBuildCondBr(in->builder, LLVMBuildICmp(in->builder, LLVMIntNE, init, null, "present"), call,
                    done);
    LLVMPositionBuilderAtEnd(in->builder, call);
    LLVMValueRef args[] = {LLVMConstInt(in->i32, GASP_LANG_C, 0), null, null};
    LLVMBuildCall2(in->builder, init_type, init, args, 3, "");
    LLVMBuildBr(in->builder, done);
    LLVMPositionBuilderAtEnd(in->builder, done);
    LLVMBuildRetVoid(in->builder);
    ppw_append_global_ctor(in->module, ctor, ctor_priority);
    return 0;
}

/* ---- skip guards -------------------------------------------------------- */

static int has_prefix(const char *text, const char *prefix)
{
    return !strncmp(text, prefix, strlen(prefix));
}

static int has_fn_attr(LLVMValueRef function, unsigned kind)
{
    return LLVMGetEnumAttributeAtIndex(function, LLVMAttributeFunctionIndex, kind) != NULL;
}

/* Functions the pass leaves alone entirely. */
static int is_instrumentable(const struct instrumenter *in, LLVMValueRef function)
{
    if (LLVMIsDeclaration(function) || LLVMGetLinkage(function) == LLVMAvailableExternallyLinkage)
        return 0;
    if (has_fn_attr(function, in->naked_kind)) /* only inline asm may be in there */
        return 0;
    size_t length = 0;
    const char *name = LLVMGetValueName2(function, &length);
    /* The tool's own code: probes there would recurse into the tool. */
    return !has_prefix(name, "__ppw") && !has_prefix(name, "gasp_");
}

static const char marker_entry[] = "instrument-function-entry-inlined";
static const char marker_exit[] = "instrument-function-exit-inlined";

/* Clang emits nothing for no_instrument_function, except that a function so
 * marked lacks the attribute -finstrument-functions-after-inlining gives all
 * others.  ppw-cc adds that flag (and inst-marker) to learn which functions
 * the user exempted; the attributes go, so no __cyg_profile calls follow. */
static int take_marker(const struct instrumenter *in, LLVMValueRef function)
{
    if (!in->opts->inst_marker)
        return 1;
    int allowed = LLVMGetStringAttributeAtIndex(function, LLVMAttributeFunctionIndex, marker_entry,
                                                sizeof marker_entry - 1) != NULL;
    LLVMRemoveStringAttributeAtIndex(function, LLVMAttributeFunctionIndex, marker_entry,
                                     sizeof marker_entry - 1);
    LLVMRemoveStringAttributeAtIndex(function, LLVMAttributeFunctionIndex, marker_exit,
                                     sizeof marker_exit - 1);
    return allowed;
}

/* ---- collecting sites --------------------------------------------------- */

static int widenable(LLVMTypeRef type)
{
    LLVMTypeKind kind = LLVMGetTypeKind(type);
    return kind == LLVMPointerTypeKind ||
           (kind == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(type) <= 64);
}

/* Whether a call can carry its row's payload: the forwarded operands and
 * the result exist and are integers or pointers. */
static int fits_row(const struct call_row *row, LLVMValueRef call)
{
    unsigned args = LLVMGetNumArgOperands(call);
    for (unsigned i = 0; i < 24; i++)
        if (((PPW_OPERANDS_OF(row->operand_mask) >> i) & 1) &&
            (i >= args || !widenable(LLVMTypeOf(LLVMGetOperand(call, i)))))
            return 0;
    return !row->has_result || widenable(LLVMTypeOf(call));
}

static int is_musttail_call(LLVMValueRef inst)
{
    return inst && LLVMIsACallInst(inst) && LLVMGetTailCallKind(inst) == LLVMTailCallKindMustTail;
}

static void collect_call(struct instrumenter *in, struct sites *sites, LLVMValueRef call)
{
    LLVMValueRef callee = LLVMGetCalledValue(call);
    int row =
        callee && LLVMIsAFunction(callee) ? ppw_ptrmap_get(&in->callee_rows, callee, 0) - 1 : -1;
    if (row < 0)
        return;
    if (is_musttail_call(call)) { /* nothing may follow it but the return */
        in->musttail_skips++;
        return;
    }
    if (has_fn_attr(callee, in->returns_twice_kind) ||
        LLVMGetCallSiteEnumAttribute(call, LLVMAttributeFunctionIndex, in->returns_twice_kind) ||
        !fits_row(&call_rows[row], call)) {
        in->odd_calls++;
        return;
    }
    sites->calls = ppw_grow(sites->calls, &sites->call_capacity, sites->call_count + 1,
                            sizeof *sites->calls, 8);
    sites->calls[sites->call_count++] = (struct call_site){call, row};
}

static void collect_return(struct sites *sites, LLVMValueRef ret)
{
    LLVMValueRef before = LLVMGetPreviousInstruction(ret);
    if (before && LLVMIsABitCastInst(before))
        before = LLVMGetPreviousInstruction(before);
    if (is_musttail_call(before))
        sites->exit_blocked = 1;
    sites->returns = ppw_grow(sites->returns, &sites->return_capacity, sites->return_count + 1,
                              sizeof *sites->returns, 4);
    sites->returns[sites->return_count++] = ret;
}

static void collect_sites(struct instrumenter *in, LLVMValueRef function, struct sites *sites)
{
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(function); block;
         block = LLVMGetNextBasicBlock(block)) {
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst;
             inst = LLVMGetNextInstruction(inst)) {
            if (LLVMIsACallInst(inst))
                collect_call(in, sites, inst);
            else if (LLVMIsAReturnInst(inst))
                collect_return(sites, inst);
        }
    }
}

/* ---- inserting events --------------------------------------------------- */

/* Splits ahead of `before` into `if (guard) { ... }` and positions the
 * builder inside, with `loc` (or none) as the debug location. */
static void enter_guarded_block(struct instrumenter *in, LLVMValueRef guard, LLVMValueRef before,
                                LLVMMetadataRef loc)
{
    LLVMValueRef then_end = ppw_split_if_then(guard, before);
    LLVMPositionBuilderBefore(in->builder, then_end);
    LLVMSetCurrentDebugLocation2(in->builder, loc);
}

static void build_notify(struct instrumenter *in, unsigned tag, gasp_evttype_t type,
                         const struct source_place *place, LLVMValueRef *payload,
                         unsigned payload_count)
{
    LLVMValueRef args[FIXED_ARGS + MAX_PAYLOAD] = {
        LLVMConstNull(in->ptr), /* the calling thread's GASP_LANG_C context */
        LLVMConstInt(in->i32, tag, 0),
        LLVMConstInt(in->i32, (unsigned)type, 0),
        place->file,
        LLVMConstInt(in->i32, place->line, 0),
        LLVMConstInt(in->i32, place->col, 0),
    };
    for (unsigned i = 0; i < payload_count; i++)
        args[FIXED_ARGS + i] = payload[i];
    LLVMBuildCall2(in->builder, in->notify_type, in->notify, args, FIXED_ARGS + payload_count, "");
}

/* A value as the 64-bit integer GASP varargs carry. */
static LLVMValueRef widen(struct instrumenter *in, LLVMValueRef value, int is_unsigned)
{
    LLVMTypeRef type = LLVMTypeOf(value);
    if (LLVMGetTypeKind(type) == LLVMPointerTypeKind)
        return LLVMBuildPtrToInt(in->builder, value, in->i64, "");
    unsigned bits = LLVMGetIntTypeWidth(type);
    if (bits == 64)
        return value;
    if (is_unsigned || bits == 1)
        return LLVMBuildZExt(in->builder, value, in->i64, "");
    return LLVMBuildSExt(in->builder, value, in->i64, "");
}

/* C signedness, which IR integers lack: the memory rows' integers are
 * size_t; elsewhere a zeroext attribute says unsigned, and the rest are C
 * ints (MPI counts, ranks and tags). */
static int is_unsigned_operand(struct instrumenter *in, const struct call_row *row,
                               LLVMValueRef call, unsigned attribute_index)
{
    if (row->op == PPW_OP_MEM_ALLOC || row->op == PPW_OP_MEM_FREE)
        return 1;
    return LLVMGetCallSiteEnumAttribute(call, attribute_index, in->zeroext_kind) != NULL;
}

static unsigned build_payload(struct instrumenter *in, const struct call_row *row,
                              LLVMValueRef call, int with_result, LLVMValueRef *payload)
{
    unsigned count = 0;
    for (unsigned i = 0; i < 24; i++)
        if ((PPW_OPERANDS_OF(row->operand_mask) >> i) & 1)
            payload[count++] =
                widen(in, LLVMGetOperand(call, i), is_unsigned_operand(in, row, call, i + 1));
    if (PPW_ELEMENT_SIZE_OF(row->operand_mask))
        payload[count++] = LLVMConstInt(in->i64, PPW_ELEMENT_SIZE_OF(row->operand_mask), 0);
    if (with_result && row->has_result)
        payload[count++] =
            widen(in, call, is_unsigned_operand(in, row, call, LLVMAttributeReturnIndex));
    return count;
}

static struct source_place call_place(struct instrumenter *in, LLVMValueRef call)
{
    unsigned line = LLVMGetDebugLocLine(call), length = 0;
    if (!line) /* no location, or an artificial line 0 */
        return (struct source_place){LLVMConstNull(in->ptr), 0, 0};
    const char *file = LLVMGetDebugLocFilename(call, &length);
    return (struct source_place){file_string(in, file, length), line, LLVMGetDebugLocColumn(call)};
}

/* The call's site record (ppw/gasp.h: struct ppw_gasp_site), its gate
 * open: {1, 0}. */
static LLVMValueRef site_record(struct instrumenter *in)
{
    LLVMTypeRef fields[] = {in->i32, in->i32};
    LLVMTypeRef type = LLVMStructTypeInContext(in->context, fields, 2, 0);
    LLVMValueRef init[] = {LLVMConstInt(in->i32, 1, 0), LLVMConstInt(in->i32, 0, 0)};
    LLVMValueRef site = LLVMAddGlobal(in->module, type, "__ppw_gasp_site");
    LLVMSetInitializer(site, LLVMConstStructInContext(in->context, init, 2, 0));
    LLVMSetLinkage(site, LLVMPrivateLinkage);
    LLVMSetAlignment(site, 8);
    return site;
}

/* The site's per-thread countdown of calls to let pass: the program's
 * own TLS, so that a call the gate keeps never leaves its code.  It
 * starts at 1, so that a thread's first call reads the gate. */
static LLVMValueRef site_countdown(struct instrumenter *in)
{
    LLVMValueRef countdown = LLVMAddGlobal(in->module, in->i32, "__ppw_gasp_countdown");
    LLVMSetInitializer(countdown, LLVMConstInt(in->i32, 1, 0));
    LLVMSetLinkage(countdown, LLVMInternalLinkage);
    LLVMSetThreadLocal(countdown, 1);
    LLVMSetAlignment(countdown, 4);
    return countdown;
}

/* Marks a conditional branch's first successor as rare (branch_weights
 * 1:2000), so that the compiler lays the common path out straight. */
static void mark_unlikely(struct instrumenter *in, LLVMValueRef branch)
{
    LLVMMetadataRef ops[] = {
        LLVMMDStringInContext2(in->context, "branch_weights", 14),
        LLVMValueAsMetadata(LLVMConstInt(in->i32, 1, 0)),
        LLVMValueAsMetadata(LLVMConstInt(in->i32, 2000, 0)),
    };
    LLVMValueRef weights =
        LLVMMetadataAsValue(in->context, LLVMMDNodeInContext2(in->context, ops, 3));
    LLVMSetMetadata(branch, LLVMGetMDKindIDInContext(in->context, "prof", 4), weights);
}

/* Whether the call's site may go quiet when the tool throttles it: every
 * row but those whose events the tool needs at each call.  dlopen's and
 * dlclose's refresh the module map; the other initialisation and
 * termination rows (MPI_Init, MPI_Finalize) run once.  An MPI call may go
 * quiet only where it can be sent past libppw's PMPI wrapper (pmpi_entry),
 * which would otherwise record each call the pass did not send. */
static int site_may_go_quiet(const struct call_row *row)
{
    return row->op != PPW_OP_INIT && row->op != PPW_OP_TERM;
}

/* For a call to MPI_X: the profiling interface's entry PMPI_X, which a
 * call the site does not send goes to: it skips libppw's MPI_X wrapper,
 * which otherwise records a call whose START the pass did not send
 * (runtime/mpi.c).  Declared weak when the module lacks it (an
 * MPI stub library may have no PMPI_ names: the call then stays MPI_X,
 * see wrap_call).  NULL when the callee is not named MPI_, when MPI_X is
 * defined in this module (the program's own, which must run), or when the
 * name is taken by something that is not a function. */
static LLVMValueRef pmpi_entry(struct instrumenter *in, const struct call_row *row,
                               LLVMValueRef call)
{
    char name[64];
    if (strncmp(row->callee, "MPI_", 4) != 0 || !LLVMIsDeclaration(LLVMGetCalledValue(call)) ||
        snprintf(name, sizeof name, "P%s", row->callee) >= (int)sizeof name)
        return NULL;
    return tool_function(in, name, LLVMGetCalledFunctionType(call));
}

/* For an MPI call at a quiet site: the callee, MPI_X or PMPI_X (see
 * pmpi_entry), given whether this copy of the call sends its events. */
static void select_mpi_entry(struct instrumenter *in, LLVMValueRef call, LLVMValueRef pmpi,
                             LLVMValueRef tool, LLVMValueRef sends)
{
    /* PMPI_X only for a call libppw's site did not send: MPI_X when START
     * went out (the wrapper then passes it on), when libppw is absent
     * (another PMPI tool may be there), and when the MPI library has no
     * PMPI_X. */
    LLVMBuilderRef b = in->builder;
    LLVMPositionBuilderBefore(b, call);
    LLVMValueRef callee = LLVMGetCalledValue(call);
    LLVMValueRef keep = LLVMBuildOr(b, LLVMBuildNot(b, tool, ""), LLVMBuildIsNull(b, pmpi, ""), "");
    if (sends)
        keep = LLVMBuildOr(b, keep, sends, "");
    LLVMValueRef entry = LLVMBuildSelect(b, keep, callee, pmpi, "gasp.mpi.entry");
    LLVMSetOperand(call, LLVMGetNumOperands(call) - 1, entry);
}

/* A call at a site that may go quiet (ppw/gasp.h).  The hot path steps
 * the site's countdown, a decrement of the program's TLS and a branch
 * (on x86-64 `decl %fs:x; jne`), then makes the call as the program
 * wrote it: nothing to test after it, no register held across it.  When
 * the countdown reaches zero a copy of the call runs on a cold path that
 * reads the gate:
 *   0      nothing is sent, and the countdown is set beyond reach;
 *   1      this call is sent, and the countdown set to 1 (every call);
 *   K > 1  this call is sent, and the countdown set to K.
 * So one call in K reaches libppw, and a call at a throttled or closed
 * site costs two instructions. */
static void wrap_quiet_call(struct instrumenter *in, LLVMValueRef tool, const struct call_row *row,
                            LLVMValueRef call, LLVMValueRef site, LLVMValueRef pmpi,
                            const struct source_place *place, LLVMMetadataRef loc)
{
    LLVMBuilderRef b = in->builder;
    LLVMValueRef zero = LLVMConstInt(in->i32, 0, 0), one = LLVMConstInt(in->i32, 1, 0);
    LLVMMetadataRef own_loc = LLVMInstructionGetDebugLoc(call);
    LLVMPositionBuilderBefore(b, call);
    LLVMSetCurrentDebugLocation2(b, loc);
    LLVMValueRef countdown = site_countdown(in);
    LLVMValueRef left = LLVMBuildSub(b, LLVMBuildLoad2(b, in->i32, countdown, "gasp.countdown"),
                                     one, "");
    LLVMBuildStore(b, left, countdown);
    /* == 0, not <= 0: the decrement's own flags then decide the branch */
    LLVMValueRef due = LLVMBuildICmp(b, LLVMIntEQ, left, zero, "gasp.countdown.due");
    LLVMBasicBlockRef head = LLVMGetInstructionParent(due);
    LLVMValueRef cold_end, hot_end;
    ppw_split_if_then_else(due, call, &cold_end, &hot_end);
    mark_unlikely(in, LLVMGetBasicBlockTerminator(head));

    /* The hot path: the call itself. */
    LLVMInstructionRemoveFromParent(call);
    LLVMPositionBuilderBefore(b, hot_end);
    LLVMSetCurrentDebugLocation2(b, own_loc); /* Insert would set the builder's */
    LLVMInsertIntoBuilder(b, call);

    /* The cold path: the gate, START, a copy of the call, END. */
    LLVMValueRef copy = LLVMInstructionClone(call);
    LLVMPositionBuilderBefore(b, cold_end);
    LLVMSetCurrentDebugLocation2(b, own_loc);
    LLVMInsertIntoBuilder(b, copy);
    LLVMPositionBuilderBefore(b, copy);
    LLVMSetCurrentDebugLocation2(b, loc);
    LLVMValueRef gate = LLVMBuildLoad2(b, in->i32, site, "gasp.site.gate");
    LLVMSetOrdering(gate, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(gate, 4);
    LLVMValueRef open = LLVMBuildICmp(b, LLVMIntNE, gate, zero, "");
    LLVMBuildStore(b, LLVMBuildSelect(b, open, gate, LLVMConstInt(in->i32, INT32_MAX, 0), ""),
                   countdown);
    LLVMValueRef sends = LLVMBuildAnd(b, tool, open, "gasp.site.on");
    LLVMValueRef payload[MAX_PAYLOAD] = {site, LLVMBuildSExt(b, gate, in->i64, "gasp.site.read")};
    enter_guarded_block(in, sends, copy, loc);
    build_notify(in, row->tag | GASP_PPW_SITE, GASP_START, place, payload,
                 SITE_ARGS + build_payload(in, row, copy, 0, payload + SITE_ARGS));
    enter_guarded_block(in, sends, cold_end, loc);
    build_notify(in, row->tag | GASP_PPW_SITE, GASP_END, place, payload,
                 SITE_ARGS + build_payload(in, row, copy, 1, payload + SITE_ARGS));
    if (pmpi) {
        select_mpi_entry(in, call, pmpi, tool, NULL);
        select_mpi_entry(in, copy, pmpi, tool, sends);
    }

    /* The join: the result from whichever path ran. */
    if (LLVMGetFirstUse(call)) {
        LLVMBasicBlockRef join = LLVMGetSuccessor(hot_end, 0);
        LLVMPositionBuilder(b, join, LLVMGetFirstInstruction(join));
        LLVMSetCurrentDebugLocation2(b, loc);
        LLVMValueRef result = LLVMBuildPhi(b, LLVMTypeOf(call), "");
        LLVMReplaceAllUsesWith(call, result);
        LLVMValueRef results[] = {call, copy};
        LLVMBasicBlockRef from[] = {LLVMGetInstructionParent(hot_end),
                                    LLVMGetInstructionParent(cold_end)};
        LLVMAddIncoming(result, results, from, 2);
    }
}

/* `fallback_loc` is for calls without a location of their own: in a
 * function with debug info, a call to a GASP function that has some would
 * otherwise fail the verifier. */
static void wrap_call(struct instrumenter *in, LLVMValueRef guard, const struct call_site *site,
                      LLVMMetadataRef fallback_loc)
{
    const struct call_row *row = &call_rows[site->row];
    LLVMValueRef call = site->call;
    struct source_place place = call_place(in, call);
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(call);
    if (!loc)
        loc = fallback_loc;
    LLVMValueRef record = site_record(in);
    LLVMValueRef pmpi = NULL;
    in->calls++;
    if (site_may_go_quiet(row) &&
        (!ppw_gasp_tag_is_mpi(row->tag) || (pmpi = pmpi_entry(in, row, call)) != NULL)) {
        wrap_quiet_call(in, guard, row, call, record, pmpi, &place, loc);
        return;
    }
    LLVMValueRef after = LLVMGetNextInstruction(call); /* calls never end a block */
    LLVMValueRef payload[MAX_PAYLOAD] = {record, LLVMConstInt(in->i64, 1, 0)};
    unsigned tag = row->tag | GASP_PPW_SITE;
    enter_guarded_block(in, guard, call, loc);
    build_notify(in, tag, GASP_START, &place, payload,
                 SITE_ARGS + build_payload(in, row, call, 0, payload + SITE_ARGS));
    enter_guarded_block(in, guard, after, loc);
    build_notify(in, tag, GASP_END, &place, payload,
                 SITE_ARGS + build_payload(in, row, call, 1, payload + SITE_ARGS));
}

/* GASP's funcsig: the source name, or the symbol for OpenMP outlined code
 * (its debug name is artificial) and functions without debug info. */
static const char *function_signature(LLVMValueRef function, size_t *length)
{
    const char *symbol = LLVMGetValueName2(function, length);
    LLVMMetadataRef subprogram = LLVMGetSubprogram(function);
    if (!subprogram || strstr(symbol, ".omp_outlined") || strstr(symbol, ".omp_task_entry."))
        return symbol;
    const char *name = ppw_di_name(subprogram);
    if (!name[0])
        return symbol;
    *length = strlen(name);
    return name;
}

/* The function's scope line, column 0; NULL without debug info. */
static LLVMMetadataRef entry_location(struct instrumenter *in, LLVMValueRef function)
{
    LLVMMetadataRef subprogram = LLVMGetSubprogram(function);
    if (!subprogram)
        return NULL;
    unsigned line = ppw_di_scope_line(subprogram);
    return LLVMDIBuilderCreateDebugLocation(
        in->context, line ? line : LLVMDISubprogramGetLine(subprogram), 0, subprogram, NULL);
}

/* The function's enable switch (GASP_C_FUNC_GATED): a private byte, 1
 * until the tool clears it to throttle the function. */
static LLVMValueRef function_gate(struct instrumenter *in)
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(in->context);
    LLVMValueRef gate = LLVMAddGlobal(in->module, i8, "__ppw_gasp_gate");
    LLVMSetInitializer(gate, LLVMConstInt(i8, 1, 0));
    LLVMSetLinkage(gate, LLVMPrivateLinkage);
    LLVMSetAlignment(gate, 1);
    return gate;
}

/* guard && *gate, the gate read once (atomically: another thread's tool
 * call may clear it) so that START and END stay paired. */
static LLVMValueRef gated_guard(struct instrumenter *in, LLVMValueRef guard, LLVMValueRef gate)
{
    LLVMTypeRef i8 = LLVMInt8TypeInContext(in->context);
    LLVMValueRef on = LLVMBuildLoad2(in->builder, i8, gate, "gasp.gate");
    LLVMSetOrdering(on, LLVMAtomicOrderingMonotonic);
    LLVMSetAlignment(on, 1);
    LLVMValueRef open = LLVMBuildICmp(in->builder, LLVMIntNE, on, LLVMConstInt(i8, 0, 0), "");
    return LLVMBuildAnd(in->builder, guard, open, "gasp.func.on");
}

static void add_entry_exit(struct instrumenter *in, LLVMValueRef function, LLVMValueRef guard,
                           LLVMValueRef entry_point, LLVMMetadataRef entry_loc,
                           const struct sites *sites)
{
    LLVMMetadataRef subprogram = LLVMGetSubprogram(function);
    struct source_place place = {LLVMConstNull(in->ptr), 0, 0};
    if (subprogram) {
        const char *file = ppw_di_file(subprogram);
        place.file = file_string(in, file, strlen(file));
        place.line = LLVMDISubprogramGetLine(subprogram);
    }
    size_t length = 0;
    const char *signature = function_signature(function, &length);
    /* One string per function: GASP tools may match START and END by pointer. */
    LLVMValueRef payload[2] = {private_string(in, signature, length, "__ppw_gasp_func"),
                               function_gate(in)};
    /* The builder is still where the guard was computed, at the top of the
     * entry block. */
    LLVMValueRef func_guard = gated_guard(in, guard, payload[1]);

    enter_guarded_block(in, func_guard, entry_point, entry_loc);
    build_notify(in, GASP_C_FUNC_GATED, GASP_START, &place, payload, 2);
    for (size_t i = 0; i < sites->return_count; i++) {
        LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(sites->returns[i]);
        enter_guarded_block(in, func_guard, sites->returns[i], loc ? loc : entry_loc);
        build_notify(in, GASP_C_FUNC_GATED, GASP_END, &place, payload, 2);
    }
    in->functions++;
}

/* The first instruction after the entry block's allocas: they must stay in
 * the entry block to remain static. */
static LLVMValueRef after_entry_allocas(LLVMValueRef function)
{
    LLVMValueRef after = LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(function));
    for (LLVMValueRef inst = after; inst; inst = LLVMGetNextInstruction(inst))
        if (LLVMIsAAllocaInst(inst))
            after = LLVMGetNextInstruction(inst);
    return after;
}

/* Frame pointers in every function of the program (its own, leaves
 * too), whatever -fomit-frame-pointer says: libppw follows them from an
 * OpenMP region's entry to its callers, where a full unwind per region
 * would cost as much as a short region's work (docs/runtime.md, "Spawned
 * tasks"); perf's call chains use them too. */
static void keep_frame_pointer(struct instrumenter *in, LLVMValueRef function)
{
    static const char key[] = "frame-pointer", value[] = "all";
    LLVMAttributeRef attr = LLVMCreateStringAttribute(in->context, key, sizeof key - 1, value,
                                                      sizeof value - 1);
    LLVMAddAttributeAtIndex(function, LLVMAttributeFunctionIndex, attr);
}

/* The mark of a module whose functions keep frame pointers: libppw's
 * ring sampler, which follows them in the kernel, samples only programs
 * that have it (weak: one per program, whatever its modules; libppw
 * refers to it weakly, so the linker exports it). */
static void mark_frame_pointers(struct instrumenter *in)
{
    static const char name[] = "__ppw_frame_pointers";
    if (LLVMGetNamedGlobal(in->module, name))
        return;
    LLVMTypeRef byte = LLVMInt8TypeInContext(in->context);
    LLVMValueRef mark = LLVMAddGlobal(in->module, byte, name);
    LLVMSetInitializer(mark, LLVMConstInt(byte, 1, 0));
    LLVMSetLinkage(mark, LLVMWeakAnyLinkage);
    LLVMSetGlobalConstant(mark, 1);
}

static void instrument_function(struct instrumenter *in, LLVMValueRef function,
                                int entry_exit_allowed)
{
    int entry_exit = entry_exit_allowed && ppw_options_event_selected(in->opts, GASP_C_FUNC);
    struct sites sites = {0};
    collect_sites(in, function, &sites);
    if (entry_exit && sites.exit_blocked) {
        entry_exit = 0;
        in->musttail_skips++;
    }
    if (sites.call_count || entry_exit) {
        LLVMValueRef entry_point = after_entry_allocas(function);
        /* First in the function, so that it dominates every wrapped call. */
        LLVMPositionBuilderBefore(in->builder,
                                  LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(function)));
        LLVMSetCurrentDebugLocation2(in->builder, NULL);
        LLVMValueRef guard =
            LLVMBuildICmp(in->builder, LLVMIntNE, in->notify, LLVMConstNull(in->ptr), "gasp.on");
        LLVMMetadataRef entry_loc = entry_location(in, function);
        if (entry_exit)
            add_entry_exit(in, function, guard, entry_point, entry_loc, &sites);
        for (size_t i = 0; i < sites.call_count; i++)
            wrap_call(in, guard, &sites.calls[i], entry_loc);
    }
    free(sites.calls);
    free(sites.returns);
}

/* ---- the module --------------------------------------------------------- */

/* Maps each callee of a selected row to the row; 0 when nothing is selected. */
static int map_selected_callees(struct instrumenter *in)
{
    int any = ppw_options_event_selected(in->opts, GASP_C_FUNC);
    for (size_t row = 0; row < CALL_ROW_COUNT; row++) {
        if (!ppw_options_event_selected(in->opts, call_rows[row].tag))
            continue;
        any = 1;
        LLVMValueRef callee = LLVMGetNamedFunction(in->module, call_rows[row].callee);
        if (callee)
            ppw_ptrmap_put(&in->callee_rows, callee, (int)row + 1);
    }
    return any;
}

static void report(const struct instrumenter *in, const char *source)
{
    if (in->odd_calls)
        fprintf(stderr,
                "ppw: warning: %s: %u call%s to GASP-wrapped functions with an unexpected "
                "signature not instrumented\n",
                source, in->odd_calls, in->odd_calls == 1 ? "" : "s");
    if (in->opts->verbose)
        fprintf(stderr,
                "ppw: %s: GASP events: %u functions with entry/exit, %u calls wrapped, "
                "%u musttail sites left alone\n",
                source, in->functions, in->calls, in->musttail_skips);
}

static void init_instrumenter(struct instrumenter *in, LLVMModuleRef module,
                              const struct ppw_pass_opts *opts)
{
    in->module = module;
    in->context = LLVMGetModuleContext(module);
    in->builder = LLVMCreateBuilderInContext(in->context);
    in->opts = opts;
    in->i32 = LLVMInt32TypeInContext(in->context);
    in->i64 = LLVMInt64TypeInContext(in->context);
    in->ptr = LLVMPointerTypeInContext(in->context, 0);
    LLVMTypeRef params[] = {in->ptr, in->i32, in->i32, in->ptr, in->i32, in->i32};
    in->notify_type = LLVMFunctionType(LLVMVoidTypeInContext(in->context), params, FIXED_ARGS, 1);
    in->zeroext_kind = LLVMGetEnumAttributeKindForName("zeroext", 7);
    in->naked_kind = LLVMGetEnumAttributeKindForName("naked", 5);
    in->returns_twice_kind = LLVMGetEnumAttributeKindForName("returns_twice", 13);
}

int ppw_instrument_module(LLVMModuleRef module, const struct ppw_pass_opts *opts)
{
    if (LLVMGetNamedFunction(module, ctor_name))
        return 0;
    struct instrumenter in = {0};
    init_instrumenter(&in, module, opts);
    size_t length = 0;
    const char *source = LLVMGetSourceFileName(module, &length);
    if (map_selected_callees(&in)) {
        in.notify = tool_function(&in, notify_name, in.notify_type);
        if (!in.notify)
            fprintf(stderr, "ppw: warning: %s: '%s' is not a function; no GASP events inserted\n",
                    source, notify_name);
    }
    int kept_frame_pointers = 0;
    for (LLVMValueRef function = LLVMGetFirstFunction(module); function;
         function = LLVMGetNextFunction(function)) {
        if (LLVMIsDeclaration(function))
            continue;
        /* Taken from every definition: ppw-cc's marker must never reach codegen. */
        int entry_exit_allowed = take_marker(&in, function);
        if (in.notify) {
            keep_frame_pointer(&in, function);
            kept_frame_pointers = 1;
        }
        if (in.notify && is_instrumentable(&in, function))
            instrument_function(&in, function, entry_exit_allowed);
    }
    if (kept_frame_pointers)
        mark_frame_pointers(&in);
    if ((in.functions || in.calls) && add_init_constructor(&in) < 0)
        fprintf(stderr, "ppw: warning: %s: '%s' is not a function; no GASP constructor\n", source,
                init_name);
    report(&in, source);
    ppw_ptrmap_free(&in.callee_rows);
    free(in.files);
    LLVMDisposeBuilder(in.builder);
    return in.notify || opts->inst_marker;
}
