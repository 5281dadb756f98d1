#include "dbgvar.h"

#include "llvm_shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The DWARF tags the pass looks at (DWARF 5, section 7.5). */
enum {
    TAG_ARRAY = 0x01,
    TAG_CLASS = 0x02,
    TAG_ENUMERATION = 0x04,
    TAG_MEMBER = 0x0d,
    TAG_POINTER = 0x0f,
    TAG_REFERENCE = 0x10,
    TAG_STRUCTURE = 0x13,
    TAG_SUBROUTINE = 0x15,
    TAG_TYPEDEF = 0x16,
    TAG_UNION = 0x17,
    TAG_BASE = 0x24,
    TAG_CONST = 0x26,
    TAG_VOLATILE = 0x35,
    TAG_RESTRICT = 0x37,
    TAG_RVALUE_REFERENCE = 0x42,
    TAG_ATOMIC = 0x47,
};

enum { MAX_TYPE_DEPTH = 32 };

static int is_qualifier(unsigned tag)
{
    return tag == TAG_TYPEDEF || tag == TAG_CONST || tag == TAG_VOLATILE || tag == TAG_RESTRICT ||
           tag == TAG_ATOMIC;
}

LLVMMetadataRef ppw_dbgvar_strip(LLVMMetadataRef type)
{
    for (int depth = 0; type && depth < MAX_TYPE_DEPTH; depth++) {
        if (!is_qualifier(ppw_di_tag(type)))
            return type;
        type = ppw_di_base_type(type);
    }
    return type;
}

int ppw_dbgvar_is_pointer(LLVMMetadataRef type)
{
    unsigned tag = ppw_di_tag(ppw_dbgvar_strip(type));
    return tag == TAG_POINTER || tag == TAG_REFERENCE || tag == TAG_RVALUE_REFERENCE;
}

LLVMMetadataRef ppw_dbgvar_pointee(LLVMMetadataRef type)
{
    LLVMMetadataRef stripped = ppw_dbgvar_strip(type);
    if (!ppw_dbgvar_is_pointer(stripped))
        return NULL;
    return ppw_di_base_type(stripped);
}

int ppw_dbgvar_is_array(LLVMMetadataRef type)
{
    return ppw_di_tag(ppw_dbgvar_strip(type)) == TAG_ARRAY;
}

int ppw_dbgvar_is_scalar(LLVMMetadataRef type)
{
    unsigned tag = ppw_di_tag(ppw_dbgvar_strip(type));
    return tag == TAG_BASE || tag == TAG_ENUMERATION;
}

LLVMMetadataRef ppw_dbgvar_element(LLVMMetadataRef type)
{
    LLVMMetadataRef stripped = ppw_dbgvar_strip(type);
    if (ppw_di_tag(stripped) == TAG_ARRAY)
        return ppw_di_base_type(stripped);
    return type;
}

int ppw_dbgvar_member_at(LLVMMetadataRef type, uint64_t offset, const char **name,
                         LLVMMetadataRef *member_type, uint64_t *member_offset)
{
    LLVMMetadataRef record = ppw_dbgvar_strip(type);
    for (int depth = 0; record && ppw_di_tag(record) == TAG_ARRAY && depth < MAX_TYPE_DEPTH;
         depth++) {
        LLVMMetadataRef element = ppw_dbgvar_strip(ppw_di_base_type(record));
        uint64_t element_size = element ? LLVMDITypeGetSizeInBits(element) / 8 : 0;
        if (element_size)
            offset %= element_size;
        record = element;
    }
    unsigned tag = ppw_di_tag(record);
    if (tag != TAG_STRUCTURE && tag != TAG_UNION && tag != TAG_CLASS)
        return 0;
    unsigned count = ppw_di_element_count(record);
    for (unsigned i = 0; i < count; i++) {
        LLVMMetadataRef member = ppw_di_element(record, i);
        if (!member || ppw_di_tag(member) != TAG_MEMBER)
            continue;
        uint64_t start = LLVMDITypeGetOffsetInBits(member) / 8;
        uint64_t size = (LLVMDITypeGetSizeInBits(member) + 7) / 8;
        if (offset < start || (size && offset >= start + size) || (!size && offset != start))
            continue;
        *name = ppw_di_name(member);
        *member_type = ppw_di_base_type(member);
        *member_offset = start;
        return (*name)[0] != '\0';
    }
    return 0;
}

static const char *record_keyword(unsigned tag)
{
    switch (tag) {
    case TAG_STRUCTURE: return "struct";
    case TAG_UNION: return "union";
    case TAG_ENUMERATION: return "enum";
    case TAG_CLASS: return "class";
    default: return "";
    }
}

static const char *array_suffix(struct ppw_arena *arena, LLVMMetadataRef array)
{
    unsigned dims = 0;
    ppw_di_array_dim(array, 0, &dims);
    char buffer[256] = "";
    size_t used = 0;
    for (unsigned dim = 0; dim < dims && used < sizeof buffer - 24; dim++) {
        int64_t count = ppw_di_array_dim(array, dim, NULL);
        int written =
            count >= 0 ? snprintf(buffer + used, sizeof buffer - used, "[%lld]", (long long)count)
                       : snprintf(buffer + used, sizeof buffer - used, "[]");
        if (written > 0)
            used += (size_t)written;
    }
    if (!dims)
        return "[]";
    return ppw_arena_strdup(arena, buffer);
}

static const char *type_name_at(struct ppw_arena *arena, LLVMMetadataRef type, int depth)
{
    if (!type)
        return "void";
    if (depth > MAX_TYPE_DEPTH)
        return "...";
    unsigned tag = ppw_di_tag(type);
    const char *name = ppw_di_name(type);
    LLVMMetadataRef base = ppw_di_base_type(type);
    switch (tag) {
    case TAG_TYPEDEF: return name[0] ? name : type_name_at(arena, base, depth + 1);
    case TAG_POINTER:
        if (ppw_di_tag(ppw_dbgvar_strip(base)) == TAG_SUBROUTINE)
            return "function pointer";
        return ppw_arena_printf(arena, "%s *", type_name_at(arena, base, depth + 1));
    case TAG_REFERENCE:
    case TAG_RVALUE_REFERENCE:
        /* OpenMP passes shared variables by reference: show the variable's type. */
        return type_name_at(arena, base, depth + 1);
    case TAG_CONST:
        return ppw_arena_printf(arena, "const %s", type_name_at(arena, base, depth + 1));
    case TAG_VOLATILE:
        return ppw_arena_printf(arena, "volatile %s", type_name_at(arena, base, depth + 1));
    case TAG_RESTRICT:
    case TAG_ATOMIC: return type_name_at(arena, base, depth + 1);
    case TAG_ARRAY:
        return ppw_arena_printf(arena, "%s%s", type_name_at(arena, base, depth + 1),
                                array_suffix(arena, type));
    case TAG_STRUCTURE:
    case TAG_UNION:
    case TAG_ENUMERATION:
    case TAG_CLASS:
        return ppw_arena_printf(arena, "%s %s", record_keyword(tag),
                                name[0] ? name : "<anonymous>");
    case TAG_SUBROUTINE: return "function";
    default: return name[0] ? name : "?";
    }
}

const char *ppw_dbgvar_global_key(struct ppw_arena *arena, LLVMValueRef global,
                                  LLVMMetadataRef variable)
{
    size_t length = 0;
    const char *symbol = LLVMGetValueName2(global, &length);
    if (ppw_di_global_is_local_to_unit(variable))
        return ppw_arena_printf(arena, "%s:%s", ppw_di_file(variable), symbol);
    return ppw_arena_strdup(arena, symbol);
}

const char *ppw_dbgvar_type_name(struct ppw_arena *arena, LLVMMetadataRef type)
{
    return type_name_at(arena, type, 0);
}

static void types_record(struct ppw_dbgvar_types *types, const char *keyword, const char *name,
                         LLVMMetadataRef type)
{
    if (types->count == types->capacity) {
        types->capacity = types->capacity ? types->capacity * 2 : 32;
        types->names = ppw_xrealloc(types->names, types->capacity, sizeof *types->names);
        types->types = ppw_xrealloc(types->types, types->capacity, sizeof *types->types);
    }
    size_t length = strlen(keyword) + strlen(name) + 2;
    char *full = ppw_xcalloc(1, length);
    snprintf(full, length, "%s.%s", keyword, name);
    types->names[types->count] = full;
    types->types[types->count] = type;
    types->count++;
}

static void types_add_at(struct ppw_dbgvar_types *types, LLVMMetadataRef type, int depth)
{
    if (!type || depth > MAX_TYPE_DEPTH || ppw_ptrmap_get(&types->seen, type, 0))
        return;
    ppw_ptrmap_put(&types->seen, type, 1);
    unsigned tag = ppw_di_tag(type);
    if ((tag == TAG_STRUCTURE || tag == TAG_UNION) && ppw_di_name(type)[0])
        types_record(types, tag == TAG_STRUCTURE ? "struct" : "union", ppw_di_name(type), type);
    types_add_at(types, ppw_di_base_type(type), depth + 1);
    if (tag == TAG_STRUCTURE || tag == TAG_UNION) {
        unsigned count = ppw_di_element_count(type);
        for (unsigned i = 0; i < count; i++)
            types_add_at(types, ppw_di_base_type(ppw_di_element(type, i)), depth + 1);
    }
}

void ppw_dbgvar_types_add(struct ppw_dbgvar_types *types, LLVMMetadataRef type)
{
    types_add_at(types, type, 0);
}

LLVMMetadataRef ppw_dbgvar_types_find(const struct ppw_dbgvar_types *types, const char *ir_name)
{
    if (!ir_name)
        return NULL;
    /* Clang renames clashing IR struct types with a numeric suffix. */
    size_t length = strlen(ir_name);
    size_t end = length;
    while (end > 0 && ir_name[end - 1] >= '0' && ir_name[end - 1] <= '9')
        end--;
    if (end > 0 && end < length && ir_name[end - 1] == '.')
        length = end - 1;
    for (size_t i = 0; i < types->count; i++)
        if (strlen(types->names[i]) == length && !strncmp(types->names[i], ir_name, length))
            return types->types[i];
    return NULL;
}

void ppw_dbgvar_types_free(struct ppw_dbgvar_types *types)
{
    for (size_t i = 0; i < types->count; i++)
        free((void *)types->names[i]);
    free(types->names);
    free(types->types);
    ppw_ptrmap_free(&types->seen);
    memset(types, 0, sizeof *types);
}
