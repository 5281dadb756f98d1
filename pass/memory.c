#include "memory.h"

#include "llvm_shim.h"

#include <ctype.h>
#include <ppw/static_format.h>
#include <stdlib.h>
#include <string.h>

/* Field paths deeper than this fold into their ancestor, which also bounds
 * recursive structures (list->next->next...). */
enum { MAX_NODE_DEPTH = 8, MAX_SOLVE_ROUNDS = 12 };

void ppw_memory_init(struct ppw_memory *memory, struct ppw_arena *arena,
                     struct ppw_dbgvar_types *types, LLVMTargetDataRef layout)
{
    memset(memory, 0, sizeof *memory);
    memory->arena = arena;
    memory->types = types;
    memory->layout = layout;
}

static void clear_memo(struct ppw_memory *memory)
{
    for (size_t i = 0; i < memory->memo_count; i++)
        ppw_intvec_free(&memory->memo_sets[i]);
    memory->memo_count = 0;
    ppw_ptrmap_free(&memory->memo);
    free(memory->memo_sets);
    free(memory->memo_rounds);
    memory->memo_sets = NULL;
    memory->memo_rounds = NULL;
    memory->memo_capacity = 0;
}

void ppw_memory_free(struct ppw_memory *memory)
{
    for (size_t i = 0; i < memory->node_count; i++) {
        ppw_intvec_free(&memory->nodes[i].children);
        ppw_intvec_free(&memory->nodes[i].contents);
        ppw_intvec_free(&memory->nodes[i].write_locs);
        ppw_intvec_free(&memory->nodes[i].write_blocks);
        ppw_intvec_free(&memory->nodes[i].write_seqs);
    }
    free(memory->nodes);
    clear_memo(memory);
    ppw_ptrmap_free(&memory->storage_node);
    ppw_ptrmap_free(&memory->argument_node);
    ppw_ptrmap_free(&memory->variable_node);
    ppw_ptrmap_free(&memory->accessors);
    free(memory->variable_names);
    memset(memory, 0, sizeof *memory);
}

int ppw_memory_new_node(struct ppw_memory *memory)
{
    memory->nodes = ppw_grow(memory->nodes, &memory->node_capacity, memory->node_count + 1,
                             sizeof *memory->nodes, 64);
    struct ppw_node *node = &memory->nodes[memory->node_count];
    memset(node, 0, sizeof *node);
    node->parent = node->pte_of = node->pte = -1;
    node->param_index = -1;
    node->element = -1;
    node->vertex = -1;
    node->export_id = -1;
    return (int)memory->node_count++;
}

static void name_global(struct ppw_memory *memory, int id, LLVMValueRef global)
{
    LLVMMetadataRef variable = ppw_global_di_variable(global);
    if (!variable || !ppw_di_name(variable)[0])
        return; /* string literals, OpenMP idents: hidden */
    struct ppw_node *node = &memory->nodes[id];
    node->var_name = ppw_di_name(variable);
    node->kind = ppw_di_global_function_scope(variable) ? PPW_VAR_STATIC : PPW_VAR_GLOBAL;
    node->type = ppw_di_variable_type(variable);
    node->decl_file = ppw_di_file(variable);
    node->decl_line = ppw_di_line(variable);
    node->flags |= PPW_VAR_EXIT_GLOBAL;
    node->key = ppw_dbgvar_global_key(memory->arena, global, variable);
    ppw_dbgvar_types_add(memory->types, node->type);
}

int ppw_memory_storage(struct ppw_memory *memory, LLVMValueRef storage)
{
    int id = ppw_ptrmap_get(&memory->storage_node, storage, -1);
    if (id >= 0)
        return id;
    id = ppw_memory_new_node(memory);
    ppw_ptrmap_put(&memory->storage_node, storage, id);
    if (LLVMIsAGlobalVariable(storage))
        name_global(memory, id, storage);
    else if (LLVMIsAArgument(storage))
        memory->nodes[id].is_param_root = 1;
    return id;
}

int ppw_memory_pointee(struct ppw_memory *memory, int node)
{
    if (memory->nodes[node].pte >= 0)
        return memory->nodes[node].pte;
    if (memory->nodes[node].depth >= MAX_NODE_DEPTH)
        return node;
    int id = ppw_memory_new_node(memory);
    struct ppw_node *pointee = &memory->nodes[id];
    const struct ppw_node *pointer = &memory->nodes[node];
    pointee->pte_of = node;
    pointee->depth = pointer->depth + 1;
    pointee->type = ppw_dbgvar_pointee(pointer->type);
    memory->nodes[node].pte = id;
    return id;
}

/* An ancestor reached by the same field of the same type stands for the
 * whole recursive chain. */
static int recursive_ancestor(const struct ppw_memory *memory, int node, const char *step,
                              LLVMMetadataRef type)
{
    for (int at = node; at >= 0;) {
        const struct ppw_node *current = &memory->nodes[at];
        if (current->step && !strcmp(current->step, step) && current->type == type)
            return at;
        at = current->parent >= 0 ? current->parent : current->pte_of;
    }
    return -1;
}

int ppw_memory_field(struct ppw_memory *memory, int node, const char *step, int indexed,
                     LLVMMetadataRef type)
{
    const struct ppw_intvec *children = &memory->nodes[node].children;
    for (size_t i = 0; i < children->count; i++) {
        int child = children->items[i];
        if (!strcmp(memory->nodes[child].step, step))
            return child;
    }
    int ancestor = recursive_ancestor(memory, node, step, type);
    if (ancestor >= 0)
        return ancestor;
    if (memory->nodes[node].depth >= MAX_NODE_DEPTH)
        return node;
    int id = ppw_memory_new_node(memory);
    struct ppw_node *field = &memory->nodes[id];
    field->parent = node;
    field->step = ppw_arena_strdup(memory->arena, step);
    field->indexed_step = indexed;
    field->type = type;
    field->depth = memory->nodes[node].depth + 1;
    field->kind = PPW_VAR_FIELD;
    ppw_intvec_push(&memory->nodes[node].children, id);
    return id;
}

int ppw_memory_is_null(LLVMValueRef value)
{
    return LLVMIsAConstantPointerNull(value) || LLVMIsUndef(value) || LLVMIsPoison(value);
}

static int is_constant_zero(LLVMValueRef value)
{
    return LLVMIsAConstantInt(value) && LLVMConstIntGetZExtValue(value) == 0;
}

static int has_member_at(LLVMMetadataRef type, uint64_t offset)
{
    const char *name = NULL;
    LLVMMetadataRef member_type = NULL;
    uint64_t member_offset = 0;
    return ppw_dbgvar_member_at(type, offset, &name, &member_type, &member_offset);
}

/* The field of `type` (debug type of the memory) at byte `offset`; falls
 * back on the IR struct's name when the debug type says nothing (void *). */
static int field_at(struct ppw_memory *memory, int node, int indexed, LLVMMetadataRef type,
                    LLVMTypeRef ir_struct, uint64_t offset, LLVMMetadataRef *member_type)
{
    const char *name = NULL;
    uint64_t member_offset = 0;
    if (!ppw_dbgvar_member_at(type, offset, &name, member_type, &member_offset) && ir_struct &&
        LLVMGetTypeKind(ir_struct) == LLVMStructTypeKind && LLVMGetStructName(ir_struct)) {
        LLVMMetadataRef named = ppw_dbgvar_types_find(memory->types, LLVMGetStructName(ir_struct));
        if (!ppw_dbgvar_member_at(named, offset, &name, member_type, &member_offset))
            name = NULL;
    }
    LLVMMetadataRef known = ppw_dbgvar_strip(type);
    if (!name && (offset == 0 || (known && !has_member_at(known, 0)))) {
        /* An unnamed member at offset 0 shares its struct's address (the
         * captured structs of OpenMP tasks have no member names), and the
         * parts of a scalar (a complex number) are the scalar. */
        *member_type = NULL;
        return node;
    }
    if (!name) {
        *member_type = NULL;
        name = ppw_arena_printf(memory->arena, "+%llu", (unsigned long long)offset);
    }
    return ppw_memory_field(memory, node, name, indexed, *member_type);
}

/* The name the source gives the array of pointers `node`: its field
 * or variable name ("vectors" for the memory level->vectors points to). */
static const char *array_name(const struct ppw_memory *memory, int node)
{
    for (int at = node; at >= 0;) {
        const struct ppw_node *current = &memory->nodes[at];
        if (current->var_name)
            return current->var_name;
        if (current->step)
            return current->element < 0 ? current->step : NULL;
        at = current->pte_of;
    }
    return NULL;
}

void ppw_memory_note_variable_name(struct ppw_memory *memory, const char *name)
{
    if (!name || !name[0])
        return;
    for (size_t i = 0; i < memory->variable_name_count; i++)
        if (!strcmp(memory->variable_names[i], name))
            return;
    memory->variable_names =
        ppw_grow(memory->variable_names, &memory->variable_name_capacity,
                 memory->variable_name_count + 1, sizeof *memory->variable_names, 32);
    memory->variable_names[memory->variable_name_count++] = name;
}

static int is_variable_name(const struct ppw_memory *memory, const char *name)
{
    for (size_t i = 0; i < memory->variable_name_count; i++)
        if (!strcmp(memory->variable_names[i], name))
            return 1;
    return 0;
}

/* Whether memory of this debug type holds pointers: a pointer, or an
 * array of them. */
static int holds_pointers(LLVMMetadataRef type)
{
    return type && ppw_dbgvar_is_pointer(ppw_dbgvar_element(type));
}

/* The element at constant position `index` of the array of pointers
 * `node` (seed 002 names data as declared: level->vectors[VECTOR_U] and
 * level->vectors[VECTOR_F] are different grids), named as the source
 * spells the subscript (a macro, an enumerator, a number); one node per
 * position.  -1 where the source is unreadable or spells a variable (the
 * optimizer unrolled a loop over the elements): not told apart then. */
static int pointer_element(struct ppw_memory *memory, int node, LLVMMetadataRef type,
                           LLVMValueRef gep, long long index)
{
    const char *spelled =
        memory->sources ? ppw_source_subscript(memory->sources, memory->arena, gep,
                                               array_name(memory, node),
                                               (unsigned long long)index)
                        : NULL;
    if (!spelled || is_variable_name(memory, spelled))
        return -1;
    const struct ppw_intvec *children = &memory->nodes[node].children;
    for (size_t i = 0; i < children->count; i++) {
        struct ppw_node *child = &memory->nodes[children->items[i]];
        if (child->element != index)
            continue;
        if (isdigit((unsigned char)child->step[1]) && !isdigit((unsigned char)spelled[0]))
            child->step = ppw_arena_printf(memory->arena, "[%s]", spelled);
        return children->items[i];
    }
    if (memory->nodes[node].depth >= MAX_NODE_DEPTH)
        return node;
    const char *step = ppw_arena_printf(memory->arena, "[%s]", spelled);
    int id = ppw_memory_new_node(memory);
    struct ppw_node *element = &memory->nodes[id];
    element->parent = node;
    element->step = step;
    element->element = index;
    element->type = ppw_dbgvar_element(type);
    element->depth = memory->nodes[node].depth + 1;
    element->kind = PPW_VAR_FIELD;
    /* Element 0 is read at the array's own address: exported even where
     * no access names the element's slot. */
    element->touched = 1;
    ppw_intvec_push(&memory->nodes[node].children, id);
    return id;
}

/* A pointer load straight from an array of pointers reads its element 0
 * where the source writes base[0] or base[VECTOR_TEMP]: the unindexed
 * targets become that element. */
static void first_elements(struct ppw_memory *memory, LLVMValueRef load, struct ppw_intvec *from)
{
    if (LLVMGetTypeKind(LLVMTypeOf(load)) != LLVMPointerTypeKind)
        return;
    for (size_t i = 0; i < from->count; i++) {
        int node = from->items[i] / 2;
        const struct ppw_node *array = &memory->nodes[node];
        if (from->items[i] % 2 || array->pte_of < 0 || !holds_pointers(array->type))
            continue;
        int element = pointer_element(memory, node, array->type, load, 0);
        if (element >= 0)
            from->items[i] = element * 2;
    }
}

/* Applies the GEP's indices to one target. */
static int apply_gep(struct ppw_memory *memory, int target, LLVMValueRef gep)
{
    int node = target / 2, indexed = target % 2;
    unsigned operand_count = (unsigned)LLVMGetNumOperands(gep);
    if (operand_count < 2)
        return target;
    LLVMTypeRef ir_type = LLVMGetGEPSourceElementType(gep);
    LLVMMetadataRef type = memory->nodes[node].type;
    LLVMValueRef first = LLVMGetOperand(gep, 1);
    int byte_addressed =
        LLVMGetTypeKind(ir_type) == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(ir_type) == 8;
    if (byte_addressed && LLVMIsAConstantInt(first) && !is_constant_zero(first)) {
        LLVMMetadataRef member_type = NULL;
        uint64_t offset = LLVMConstIntGetZExtValue(first);
        LLVMMetadataRef element = ppw_dbgvar_element(type);
        if (has_member_at(element, offset)) {
            int field = field_at(memory, node, indexed, element, NULL, offset, &member_type);
            /* A constant position in a struct's array of pointers
             * (lv->fixed[COEF_B], blocks[b].array[VAR_RHO]) is that
             * element, as the typed form -O0 emits finds it. */
            const char *name = NULL;
            LLVMMetadataRef found_type = NULL;
            uint64_t member_offset = 0;
            uint64_t pointer_bytes = memory->layout ? LLVMPointerSize(memory->layout) : 8;
            if (operand_count == 2 && ppw_dbgvar_is_array(member_type) &&
                holds_pointers(member_type) &&
                ppw_dbgvar_member_at(element, offset, &name, &found_type, &member_offset) &&
                (offset - member_offset) % pointer_bytes == 0) {
                int slot = pointer_element(memory, field, member_type, gep,
                                           (long long)((offset - member_offset) / pointer_bytes));
                if (slot >= 0)
                    return slot * 2;
            }
            return field * 2;
        }
        unsigned pointer_size = memory->layout ? LLVMPointerSize(memory->layout) : 8;
        long long signed_offset = LLVMConstIntGetSExtValue(first);
        int slot = !indexed && operand_count == 2 && holds_pointers(type) && signed_offset > 0 &&
                           signed_offset % pointer_size == 0
                       ? pointer_element(memory, node, type, gep, signed_offset / pointer_size)
                       : -1;
        return slot >= 0 ? slot * 2 : node * 2 + 1;
    }
    if (!indexed && operand_count == 2 && LLVMIsAConstantInt(first) &&
        LLVMConstIntGetSExtValue(first) > 0 && LLVMGetTypeKind(ir_type) == LLVMPointerTypeKind &&
        holds_pointers(type)) {
        int element = pointer_element(memory, node, type, gep, LLVMConstIntGetSExtValue(first));
        if (element >= 0)
            return element * 2;
    }
    if (!is_constant_zero(first))
        indexed = 1;
    for (unsigned i = 2; i < operand_count; i++) {
        LLVMValueRef index = LLVMGetOperand(gep, i);
        LLVMTypeKind kind = LLVMGetTypeKind(ir_type);
        int subscripted = indexed;
        if (ppw_dbgvar_is_array(type)) /* a field of an element of an array */
            indexed = 1;
        if (kind == LLVMStructTypeKind && LLVMIsAConstantInt(index)) {
            unsigned field = (unsigned)LLVMConstIntGetZExtValue(index);
            if (field >= LLVMCountStructElementTypes(ir_type))
                return node * 2 + indexed;
            uint64_t offset =
                memory->layout ? LLVMOffsetOfElement(memory->layout, ir_type, field) : 0;
            LLVMMetadataRef member_type = NULL;
            node = field_at(memory, node, indexed, ppw_dbgvar_element(type), ir_type, offset,
                            &member_type);
            type = member_type;
            indexed = 0;
            ir_type = LLVMStructGetTypeAtIndex(ir_type, field);
        } else if (kind == LLVMArrayTypeKind || kind == LLVMVectorTypeKind) {
            int element =
                kind == LLVMArrayTypeKind && !subscripted && i + 1 == operand_count &&
                        LLVMIsAConstantInt(index) && LLVMConstIntGetSExtValue(index) >= 0 &&
                        LLVMGetTypeKind(LLVMGetElementType(ir_type)) == LLVMPointerTypeKind &&
                        holds_pointers(type)
                    ? pointer_element(memory, node, type, gep, LLVMConstIntGetSExtValue(index))
                    : -1;
            if (element >= 0)
                return element * 2;
            indexed = 1;
            if (ppw_dbgvar_is_array(type))
                type = ppw_dbgvar_element(type);
            ir_type = LLVMGetElementType(ir_type);
        } else {
            return node * 2 + 1;
        }
    }
    return node * 2 + indexed;
}

static void add_all(struct ppw_intvec *into, const struct ppw_intvec *from)
{
    if (!from)
        return;
    for (size_t i = 0; i < from->count; i++)
        ppw_intvec_add_unique(into, from->items[i]);
}

/* When node holds an MPI window handle (memory->windows), the memory the
 * window exposes; else -1.  MPI writes the handle, so nothing in the IR
 * stored into it, and a load from it would otherwise stand for a pointee
 * of its own that names no data. */
static int window_memory(struct ppw_memory *memory, int node)
{
    if (!memory->windows)
        return -1;
    for (size_t i = 0; i < memory->windows->count; i++) {
        const struct ppw_window_rule *rule = &memory->windows->rules[i];
        int at = -1;
        if (rule->handle_storage) {
            if (ppw_ptrmap_get(&memory->storage_node, rule->handle_storage, -1) != node)
                continue;
            at = ppw_memory_storage(memory, rule->memory_storage);
        } else {
            const struct ppw_node *handle = &memory->nodes[node];
            if (handle->parent < 0 || !handle->step || strcmp(handle->step, rule->handle_step) ||
                ppw_dbgvar_strip(memory->nodes[handle->parent].type) != rule->parent_type)
                continue;
            at = ppw_memory_field(memory, handle->parent, rule->memory_step, 0, rule->memory_type);
        }
        return rule->pointee ? ppw_memory_pointee(memory, at) : at;
    }
    return -1;
}

void ppw_memory_load_targets(struct ppw_memory *memory, const struct ppw_intvec *from,
                             struct ppw_intvec *out)
{
    if (!from)
        return;
    for (size_t i = 0; i < from->count; i++) {
        int node = from->items[i] / 2;
        add_all(out, &memory->nodes[node].contents);
        int unknown = memory->nodes[node].stores_unknown || !memory->nodes[node].contents.count;
        /* A window handle stands for the window's memory even when the
         * program stored something first (MPI_Win win = MPI_WIN_NULL). */
        int window = memory->pointee_when_unknown ? window_memory(memory, node) : -1;
        if (window >= 0)
            ppw_intvec_add_unique(out, window * 2);
        else if (unknown && memory->pointee_when_unknown)
            ppw_intvec_add_unique(out, ppw_memory_pointee(memory, node) * 2);
    }
}

static LLVMOpcode value_opcode(LLVMValueRef value)
{
    if (LLVMIsAInstruction(value))
        return LLVMGetInstructionOpcode(value);
    if (LLVMIsAConstantExpr(value))
        return LLVMGetConstOpcode(value);
    return (LLVMOpcode)0;
}

static void argument_targets(struct ppw_memory *memory, LLVMValueRef argument,
                             struct ppw_intvec *out)
{
    int storage = ppw_ptrmap_get(&memory->storage_node, argument, -1);
    if (storage >= 0) { /* byval: the argument is the variable's storage */
        ppw_intvec_add_unique(out, storage * 2);
        return;
    }
    int param = ppw_ptrmap_get(&memory->argument_node, argument, -1);
    if (param < 0) {
        param = ppw_memory_new_node(memory);
        memory->nodes[param].is_param_root = 1;
        ppw_ptrmap_put(&memory->argument_node, argument, param);
    }
    ppw_intvec_add_unique(out, ppw_memory_pointee(memory, param) * 2);
}

/* ---- accessors: functions that return a pointer into an argument ---- */

static int returned_parameter(LLVMValueRef function, int depth, int *budget);

static int is_lifetime_marker(LLVMValueRef inst)
{
    LLVMValueRef callee = LLVMIsACallInst(inst) ? LLVMGetCalledValue(inst) : NULL;
    size_t length = 0;
    const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &length) : "";
    return !strncmp(name, "llvm.lifetime.", 14);
}

/* The parameter whose memory pointer value v points into, in function fn
 * (seen before mem2reg: a parameter is read back from its spill slot), or
 * -1.  Follows address arithmetic, casts, merges and nested accessors, at
 * most *budget values in all (a merge of merges fans out). */
static int parameter_base(LLVMValueRef fn, LLVMValueRef v, int depth, int *budget)
{
    while (v) {
        if (--*budget < 0)
            return -1;
        if (LLVMIsAArgument(v)) {
            unsigned count = LLVMCountParams(fn);
            for (unsigned k = 0; k < count; k++)
                if (LLVMGetParam(fn, k) == v)
                    return (int)k;
            return -1;
        }
        switch (value_opcode(v)) {
        case LLVMGetElementPtr:
        case LLVMBitCast:
        case LLVMAddrSpaceCast: v = LLVMGetOperand(v, 0); continue;
        case LLVMLoad: { /* a spill slot: every store into it stores one argument */
            LLVMValueRef slot = LLVMGetOperand(v, 0), stored = NULL;
            if (!LLVMIsAAllocaInst(slot))
                return -1;
            for (LLVMUseRef use = LLVMGetFirstUse(slot); use; use = LLVMGetNextUse(use)) {
                LLVMValueRef user = LLVMGetUser(use);
                if (LLVMIsAStoreInst(user) && LLVMGetOperand(user, 1) == slot) {
                    LLVMValueRef value = LLVMGetOperand(user, 0);
                    if (!LLVMIsAArgument(value) || (stored && stored != value))
                        return -1;
                    stored = value;
                } else if (!LLVMIsALoadInst(user) && !is_lifetime_marker(user)) {
                    return -1; /* the slot's address escapes: anything may be stored */
                }
            }
            v = stored;
            continue;
        }
        case LLVMPHI:
        case LLVMSelect: {
            int agreed = -2;
            unsigned count = value_opcode(v) == LLVMPHI ? LLVMCountIncoming(v) : 2;
            for (unsigned i = 0; i < count; i++) {
                LLVMValueRef in = value_opcode(v) == LLVMPHI ? LLVMGetIncomingValue(v, i)
                                                             : LLVMGetOperand(v, i + 1);
                int k = depth > 0 ? parameter_base(fn, in, depth - 1, budget) : -1;
                if (k < 0 || (agreed != -2 && agreed != k))
                    return -1;
                agreed = k;
            }
            return agreed;
        }
        case LLVMCall: {
            LLVMValueRef callee = LLVMGetCalledValue(v);
            int k = callee && LLVMIsAFunction(callee) && depth > 0
                        ? returned_parameter(callee, depth - 1, budget)
                        : -1;
            if (k < 0 || (unsigned)k >= LLVMGetNumArgOperands(v))
                return -1;
            v = LLVMGetOperand(v, (unsigned)k);
            continue;
        }
        default: return -1;
        }
    }
    return -1;
}

/* The parameter a defined function's returned pointer always points into
 * (an accessor: `double *row(grid, y) { return grid + y * nx; }`), or -1.
 * Not a definition the linker may replace (weak, linkonce: another unit's
 * may differ). */
static int returned_parameter(LLVMValueRef function, int depth, int *budget)
{
    LLVMLinkage linkage = LLVMGetLinkage(function);
    if (LLVMIsDeclaration(function) || linkage == LLVMWeakAnyLinkage ||
        linkage == LLVMLinkOnceAnyLinkage || linkage == LLVMExternalWeakLinkage ||
        LLVMGetTypeKind(LLVMGetReturnType(LLVMGlobalGetValueType(function))) !=
            LLVMPointerTypeKind)
        return -1;
    int agreed = -2;
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(function); block;
         block = LLVMGetNextBasicBlock(block)) {
        LLVMValueRef ret = LLVMGetBasicBlockTerminator(block);
        if (!ret || !LLVMIsAReturnInst(ret) || LLVMGetNumOperands(ret) < 1)
            continue;
        int k = parameter_base(function, LLVMGetOperand(ret, 0), depth, budget);
        if (k < 0 || (agreed != -2 && agreed != k))
            return -1;
        agreed = k;
    }
    return agreed >= 0 ? agreed : -1;
}

static void compute_targets(struct ppw_memory *memory, LLVMValueRef value, struct ppw_intvec *out)
{
    if (LLVMIsAAllocaInst(value) || LLVMIsAGlobalVariable(value)) {
        ppw_intvec_add_unique(out, ppw_memory_storage(memory, value) * 2);
        return;
    }
    if (LLVMIsAArgument(value)) {
        argument_targets(memory, value, out);
        return;
    }
    switch (value_opcode(value)) {
    case LLVMGetElementPtr: {
        const struct ppw_intvec *base = ppw_memory_targets(memory, LLVMGetOperand(value, 0));
        struct ppw_intvec copy = {0};
        add_all(&copy, base); /* apply_gep may grow the memo and move `base` */
        for (size_t i = 0; i < copy.count; i++)
            ppw_intvec_add_unique(out, apply_gep(memory, copy.items[i], value));
        ppw_intvec_free(&copy);
        return;
    }
    case LLVMBitCast:
    case LLVMAddrSpaceCast:
        add_all(out, ppw_memory_targets(memory, LLVMGetOperand(value, 0)));
        return;
    case LLVMPHI: {
        unsigned count = LLVMCountIncoming(value);
        for (unsigned i = 0; i < count; i++)
            add_all(out, ppw_memory_targets(memory, LLVMGetIncomingValue(value, i)));
        return;
    }
    case LLVMSelect:
        add_all(out, ppw_memory_targets(memory, LLVMGetOperand(value, 1)));
        add_all(out, ppw_memory_targets(memory, LLVMGetOperand(value, 2)));
        return;
    case LLVMLoad: {
        struct ppw_intvec from = {0};
        add_all(&from, ppw_memory_targets(memory, LLVMGetOperand(value, 0)));
        first_elements(memory, value, &from);
        ppw_memory_load_targets(memory, &from, out);
        ppw_intvec_free(&from);
        return;
    }
    case LLVMCall: {
        /* A threadprivate variable's copy for this thread is the variable
         * (llvm.threadlocal.address for TLS, __kmpc_threadprivate_cached
         * otherwise): as data, one variable. */
        LLVMValueRef callee = LLVMGetCalledValue(value);
        size_t length = 0;
        const char *name = callee && LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &length) : "";
        if (!strncmp(name, "llvm.threadlocal.address", 24))
            add_all(out, ppw_memory_targets(memory, LLVMGetOperand(value, 0)));
        else if (!strcmp(name, "__kmpc_threadprivate_cached") && LLVMGetNumArgOperands(value) > 2)
            add_all(out, ppw_memory_targets(memory, LLVMGetOperand(value, 2)));
        else if (callee && LLVMIsAFunction(callee)) {
            /* An accessor's result is its argument's memory, as if inlined;
             * known once per callee and function analysed. */
            int k = ppw_ptrmap_get(&memory->accessors, callee, -2), budget = 256;
            if (k == -2) {
                k = returned_parameter(callee, 4, &budget);
                ppw_ptrmap_put(&memory->accessors, callee, k);
            }
            if (k >= 0 && (unsigned)k < LLVMGetNumArgOperands(value))
                add_all(out, ppw_memory_targets(memory, LLVMGetOperand(value, (unsigned)k)));
        }
        return;
    }
    default: return; /* other calls, inttoptr: unknown */
    }
}

static int memo_new_slot(struct ppw_memory *memory, LLVMValueRef value)
{
    if (memory->memo_count == memory->memo_capacity) {
        memory->memo_capacity = memory->memo_capacity ? memory->memo_capacity * 2 : 256;
        memory->memo_sets =
            ppw_xrealloc(memory->memo_sets, memory->memo_capacity, sizeof *memory->memo_sets);
        memory->memo_rounds =
            ppw_xrealloc(memory->memo_rounds, memory->memo_capacity, sizeof *memory->memo_rounds);
    }
    size_t slot = memory->memo_count++;
    memset(&memory->memo_sets[slot], 0, sizeof memory->memo_sets[slot]);
    memory->memo_rounds[slot] = -1;
    ppw_ptrmap_put(&memory->memo, value, (int)slot + 1);
    return (int)slot;
}

const struct ppw_intvec *ppw_memory_targets(struct ppw_memory *memory, LLVMValueRef pointer)
{
    if (!pointer || ppw_memory_is_null(pointer))
        return NULL;
    int slot = ppw_ptrmap_get(&memory->memo, pointer, 0) - 1;
    if (slot < 0)
        slot = memo_new_slot(memory, pointer);
    if (memory->memo_rounds[slot] == memory->round ||
        (memory->frozen && memory->memo_rounds[slot] >= 0))
        return &memory->memo_sets[slot];
    /* Sets only grow from round to round; a phi cycle reached again within
     * this round sees the previous round's answer, and the next round
     * completes it. */
    memory->memo_rounds[slot] = memory->round;
    struct ppw_intvec result = {0};
    compute_targets(memory, pointer, &result);
    for (size_t i = 0; i < result.count; i++)
        memory->memo_grew |= ppw_intvec_add_unique(&memory->memo_sets[slot], result.items[i]);
    ppw_intvec_free(&result);
    return &memory->memo_sets[slot];
}

static int is_pointer(LLVMValueRef value)
{
    return LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMPointerTypeKind;
}

static int record_store(struct ppw_memory *memory, LLVMValueRef stored, LLVMValueRef address)
{
    if (!is_pointer(stored) || ppw_memory_is_null(stored) || LLVMIsAFunction(stored))
        return 0;
    struct ppw_intvec into = {0}, values = {0};
    add_all(&into, ppw_memory_targets(memory, address));
    add_all(&values, ppw_memory_targets(memory, stored));
    int changed = 0;
    for (size_t i = 0; i < into.count; i++) {
        struct ppw_node *node = &memory->nodes[into.items[i] / 2];
        for (size_t j = 0; j < values.count; j++)
            changed |= ppw_intvec_add_unique(&node->contents, values.items[j]);
        /* In phase one an empty set only means "not known yet". */
        if (!values.count && memory->pointee_when_unknown && !node->stores_unknown) {
            node->stores_unknown = 1;
            changed = 1;
        }
    }
    ppw_intvec_free(&into);
    ppw_intvec_free(&values);
    return changed;
}

/* memcpy of a struct holding pointers copies what they point to. */
static int record_copy(struct ppw_memory *memory, LLVMValueRef destination, LLVMValueRef source)
{
    struct ppw_intvec into = {0}, from = {0}, values = {0};
    add_all(&into, ppw_memory_targets(memory, destination));
    add_all(&from, ppw_memory_targets(memory, source));
    for (size_t i = 0; i < from.count; i++)
        add_all(&values, &memory->nodes[from.items[i] / 2].contents);
    int changed = 0;
    for (size_t i = 0; i < into.count; i++)
        for (size_t j = 0; j < values.count; j++)
            changed |=
                ppw_intvec_add_unique(&memory->nodes[into.items[i] / 2].contents, values.items[j]);
    ppw_intvec_free(&into);
    ppw_intvec_free(&from);
    ppw_intvec_free(&values);
    return changed;
}

static int is_memcpy_like(LLVMValueRef call)
{
    LLVMValueRef callee = LLVMGetCalledValue(call);
    if (!callee || !LLVMIsAFunction(callee) || !LLVMGetIntrinsicID(callee))
        return 0;
    size_t length = 0;
    const char *name = LLVMGetValueName2(callee, &length);
    return !strncmp(name, "llvm.memcpy", 11) || !strncmp(name, "llvm.memmove", 12);
}

static int solve_round(struct ppw_memory *memory, LLVMValueRef function)
{
    int changed = 0;
    memory->round++;
    memory->memo_grew = 0;
    for (LLVMBasicBlockRef block = LLVMGetFirstBasicBlock(function); block;
         block = LLVMGetNextBasicBlock(block))
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst;
             inst = LLVMGetNextInstruction(inst)) {
            LLVMOpcode opcode = LLVMGetInstructionOpcode(inst);
            if (opcode == LLVMStore)
                changed |= record_store(memory, LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1));
            else if (opcode == LLVMCall && is_memcpy_like(inst))
                changed |= record_copy(memory, LLVMGetOperand(inst, 0), LLVMGetOperand(inst, 1));
        }
    return changed || memory->memo_grew;
}

void ppw_memory_solve(struct ppw_memory *memory, LLVMValueRef function)
{
    /* Phase one follows only real stores; phase two lets memory nothing
     * known was stored into stand for its own pointee. */
    for (int phase = 0; phase < 2; phase++) {
        memory->pointee_when_unknown = phase;
        for (int round = 0; round < MAX_SOLVE_ROUNDS; round++)
            if (!solve_round(memory, function))
                break;
    }
    /* One more round with no change leaves every memoized set final; the
     * graph builder then reads them without recomputing. */
    memory->frozen = 1;
}

int ppw_memory_first_member(struct ppw_memory *memory, int node)
{
    LLVMMetadataRef member_type = NULL;
    LLVMMetadataRef type = ppw_dbgvar_element(memory->nodes[node].type);
    if (!has_member_at(type, 0))
        return node;
    return field_at(memory, node, 0, type, NULL, 0, &member_type);
}

int ppw_memory_member_at(struct ppw_memory *memory, int node, unsigned long long offset)
{
    if (offset == 0)
        return ppw_memory_first_member(memory, node);
    LLVMMetadataRef member_type = NULL;
    return field_at(memory, node, 0, ppw_dbgvar_element(memory->nodes[node].type), NULL, offset,
                    &member_type);
}

int ppw_memory_named_root(const struct ppw_memory *memory, int node)
{
    for (int at = node; at >= 0;) {
        const struct ppw_node *current = &memory->nodes[at];
        if (current->var_name)
            return at;
        at = current->parent >= 0 ? current->parent : current->pte_of;
    }
    return -1;
}

const char *ppw_memory_display_name(struct ppw_memory *memory, int node)
{
    struct ppw_node *current = &memory->nodes[node];
    if (current->var_name)
        return current->var_name;
    if (current->pte_of >= 0)
        return ppw_memory_display_name(memory, current->pte_of);
    if (current->parent < 0)
        return NULL;
    const char *parent = ppw_memory_display_name(memory, current->parent);
    if (!parent)
        return NULL;
    int through_pointer =
        memory->nodes[current->parent].pte_of >= 0 && !memory->nodes[current->parent].var_name;
    if (current->element >= 0) /* level->vectors[VECTOR_U] */
        return ppw_arena_printf(memory->arena, "%s%s", parent, current->step);
    return ppw_arena_printf(memory->arena, "%s%s%s%s", parent, current->indexed_step ? "[]" : "",
                            through_pointer && !current->indexed_step ? "->" : ".", current->step);
}
