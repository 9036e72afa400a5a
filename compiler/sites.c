/* Site records: kind, function and the source position from debug locations, plus the
 * translation unit's identity hash (FNV-1a 64 over the source name and every record). */
#include "xform.h"

#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static void hash_bytes(uint64_t *h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        *h = (*h ^ p[i]) * FNV_PRIME;
}

static void hash_string(uint64_t *h, const char *s)
{
    hash_bytes(h, s, strlen(s) + 1);    /* the NUL separates fields */
}

static void hash_u32(uint64_t *h, uint32_t v)
{
    unsigned char bytes[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                              (unsigned char)(v >> 24)};
    hash_bytes(h, bytes, 4);
}

/* The file of a debug scope, as the user reads it: the name as given to the compiler
 * (absolute, or relative to the directory of the compilation), without a leading "./". */
static char *scope_file(LLVMMetadataRef scope)
{
    LLVMMetadataRef file = scope ? LLVMDIScopeGetFile(scope) : NULL;
    unsigned len = 0;
    const char *name = file ? LLVMDIFileGetFilename(file, &len) : NULL;
    if (!name)
        return strdup("");
    while (len >= 2 && name[0] == '.' && name[1] == '/') {
        name += 2;
        len -= 2;
    }
    return strndup(name, len);
}

static uint32_t add_record(struct vigil_xform *x, enum vigil_site_kind kind, const char *function,
                           const char *file, uint32_t line, uint32_t column, uint32_t aux)
{
    if (x->hash == 0) {
        x->hash = FNV_OFFSET;
        hash_string(&x->hash, x->settings->source_name ? x->settings->source_name : "");
    }
    hash_u32(&x->hash, (uint32_t)kind);
    hash_string(&x->hash, function);
    hash_string(&x->hash, file);
    hash_u32(&x->hash, line);
    hash_u32(&x->hash, column);
    hash_u32(&x->hash, aux);
    return vigil_sitefmt_add(x->sites, kind, function, file, line, column, aux);
}

uint32_t xs_add(struct vigil_xform *x, enum vigil_site_kind kind, const char *function,
                LLVMMetadataRef loc, uint32_t aux)
{
    char *file = scope_file(loc ? LLVMDILocationGetScope(loc) : NULL);
    uint32_t line = loc ? LLVMDILocationGetLine(loc) : 0, column = loc ? LLVMDILocationGetColumn(loc) : 0;
    uint32_t index = add_record(x, kind, function, file, line, column, aux);
    free(file);
    return index;
}

uint32_t xs_add_entry(struct vigil_xform *x, const char *function, LLVMMetadataRef subprogram)
{
    char *file = scope_file(subprogram);
    uint32_t line = subprogram ? LLVMDISubprogramGetLine(subprogram) : 0;
    uint32_t index = add_record(x, VIGIL_SITE_ENTRY, function, file, line, 0, 0);
    free(file);
    return index;
}

LLVMMetadataRef xf_debug_loc(struct xfunc *f, LLVMValueRef inst)
{
    if (!f->subprogram)
        return NULL;
    LLVMMetadataRef loc = inst ? LLVMInstructionGetDebugLoc(inst) : NULL;
    return loc ? loc : LLVMDIBuilderCreateDebugLocation(f->x->ctx, 0, 0, f->subprogram, NULL);
}

void xf_insert_keeping_loc(LLVMBuilderRef b, LLVMValueRef inst, const char *name)
{
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(inst);
    LLVMInsertIntoBuilderWithName(b, inst, name);
    LLVMInstructionSetDebugLoc(inst, loc);
}
