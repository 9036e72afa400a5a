/* Site records: kind, function and the source position from debug locations, plus the
 * translation unit's identity hash (FNV-1a 64 over the source name and every record). */
#include "xform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "abi.h"

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

/* The file of a debug scope, as the user named it, without a leading "./". Clang splits a
 * file outside the compile directory into a directory that is a common ancestor and a name
 * relative to it (/tmp/t/x.c compiled in /tmp/build: "/tmp" and "t/x.c"): such a name is
 * joined to its directory; a name relative to the compile (working) directory stays as the
 * user wrote it. */
char *xs_scope_file(LLVMMetadataRef scope)
{
    LLVMMetadataRef file = scope ? LLVMDIScopeGetFile(scope) : NULL;
    unsigned len = 0, dlen = 0;
    const char *name = file ? LLVMDIFileGetFilename(file, &len) : NULL;
    if (!name)
        return strdup("");
    while (len >= 2 && name[0] == '.' && name[1] == '/') {
        name += 2;
        len -= 2;
    }
    const char *dir = len && name[0] != '/' ? LLVMDIFileGetDirectory(file, &dlen) : NULL;
    char cwd[4096];
    if (dir && dlen && dir[0] == '/' && getcwd(cwd, sizeof cwd) &&
        (strlen(cwd) != dlen || strncmp(cwd, dir, dlen) != 0)) {
        char *joined = malloc((size_t)dlen + len + 2);
        if (joined)
            snprintf(joined, (size_t)dlen + len + 2, "%.*s%s%.*s", (int)dlen, dir,
                     dir[dlen - 1] == '/' ? "" : "/", (int)len, name);
        return joined ? joined : strndup(name, len);
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
    uint32_t site = vigil_sitefmt_add(x->sites, kind, function, file, line, column, aux);
    if (kind == VIGIL_SITE_ENTRY || kind == VIGIL_SITE_BACKEDGE) {
        if (x->ndispatch == x->dispatch_cap) {
            x->dispatch_cap = x->dispatch_cap ? 2 * x->dispatch_cap : 256;
            x->dispatch_sites = realloc(x->dispatch_sites, x->dispatch_cap * sizeof *x->dispatch_sites);
        }
        if (site >= x->dispatch_of_cap) {
            uint32_t cap = x->dispatch_of_cap ? x->dispatch_of_cap : 1024;
            while (cap <= site)
                cap *= 2;
            x->dispatch_of = realloc(x->dispatch_of, cap * sizeof *x->dispatch_of);
            x->dispatch_of_cap = x->dispatch_of ? cap : 0;
        }
        if (!x->dispatch_sites || !x->dispatch_of) {
            fputs("vigil-cc: out of memory\n", stderr);
            abort();
        }
        x->dispatch_of[site] = x->ndispatch;
        x->dispatch_sites[x->ndispatch++] = site | (kind == VIGIL_SITE_BACKEDGE ? VIGIL_DISPATCH_BACKEDGE : 0);
    }
    return site;
}

uint32_t xs_dispatch(const struct vigil_xform *x, uint32_t site)
{
    return x->dispatch_of[site];   /* set by add_record for every dispatch site */
}

void xs_free(struct vigil_xform *x)
{
    free(x->dispatch_sites);
    free(x->dispatch_of);
    x->dispatch_sites = x->dispatch_of = NULL;
    x->ndispatch = x->dispatch_cap = x->dispatch_of_cap = 0;
}

/* Operand i of a debug-info node (MDNode operands: DILexicalBlock(File) 0 file, 1 scope;
 * DISubprogram 0 file, 1 scope, 2 name), or NULL. The C API has no getter for these. */
static LLVMValueRef node_operand(struct vigil_xform *x, LLVMMetadataRef node, unsigned i)
{
    LLVMValueRef v = LLVMMetadataAsValue(x->ctx, node);
    unsigned n = LLVMGetMDNodeNumOperands(v);
    if (i >= n || n > 64)
        return NULL;
    LLVMValueRef ops[64];
    LLVMGetMDNodeOperands(v, ops);
    return ops[i];
}

/* The source name of the function whose code loc is in, when the optimizer inlined that code
 * (loc has an inlined-at location): its innermost scope's subprogram, through the lexical
 * blocks around it. NULL otherwise (malloc'd). */
static char *inlined_function(struct vigil_xform *x, LLVMMetadataRef loc)
{
    if (!loc || !LLVMDILocationGetInlinedAt(loc))
        return NULL;
    LLVMMetadataRef scope = LLVMDILocationGetScope(loc);
    for (int depth = 0; scope && depth < 256; depth++) {
        LLVMMetadataKind kind = LLVMGetMetadataKind(scope);
        if (kind == LLVMDISubprogramMetadataKind) {
            LLVMValueRef name = node_operand(x, scope, 2);
            unsigned len = 0;
            const char *text = name ? LLVMGetMDString(name, &len) : NULL;
            return text && len ? strndup(text, len) : NULL;
        }
        if (kind != LLVMDILexicalBlockMetadataKind && kind != LLVMDILexicalBlockFileMetadataKind)
            return NULL;
        LLVMValueRef parent = node_operand(x, scope, 1);
        scope = parent ? LLVMValueAsMetadata(parent) : NULL;
    }
    return NULL;
}

uint32_t xs_add(struct vigil_xform *x, enum vigil_site_kind kind, const char *function,
                LLVMMetadataRef loc, uint32_t aux)
{
    char *file = xs_scope_file(loc ? LLVMDILocationGetScope(loc) : NULL);
    uint32_t line = loc ? LLVMDILocationGetLine(loc) : 0, column = loc ? LLVMDILocationGetColumn(loc) : 0;
    uint32_t index = add_record(x, kind, function, file, line, column, aux);
    free(file);
    /* Code the optimizer inlined: the site is the inlined function's, at its line (the
     * location's own line and file already are). */
    char *source = inlined_function(x, loc);
    if (source && strcmp(source, function) != 0) {
        hash_u32(&x->hash, index);   /* the table's identity covers it too */
        hash_string(&x->hash, source);
        vigil_sitefmt_set_inlined(x->sites, index, source);
    }
    free(source);
    return index;
}

void xs_set_flags(struct vigil_xform *x, uint32_t site, uint32_t flags)
{
    if (!flags)
        return;
    hash_u32(&x->hash, site);   /* the table's identity covers the flags too */
    hash_u32(&x->hash, flags);
    vigil_sitefmt_set_flags(x->sites, site, flags);
}

uint32_t xs_add_entry(struct vigil_xform *x, const char *function, LLVMMetadataRef subprogram)
{
    char *file = xs_scope_file(subprogram);
    uint32_t line = subprogram ? LLVMDISubprogramGetLine(subprogram) : 0;
    uint32_t index = add_record(x, VIGIL_SITE_ENTRY, function, file, line, 0, 0);
    free(file);
    return index;
}

LLVMMetadataRef xf_debug_loc(struct xfunc *f, LLVMValueRef inst)
{
    LLVMMetadataRef scope = f->subprogram;
    if (inst && f->instr_fn && LLVMGetBasicBlockParent(LLVMGetInstructionParent(inst)) == f->instr_fn)
        scope = f->instr_subprogram;   /* an outlined copy has a subprogram of its own */
    if (!scope)
        return NULL;
    LLVMMetadataRef loc = inst ? LLVMInstructionGetDebugLoc(inst) : NULL;
    return loc ? loc : LLVMDIBuilderCreateDebugLocation(f->x->ctx, 0, 0, scope, NULL);
}

void xf_insert_keeping_loc(LLVMBuilderRef b, LLVMValueRef inst, const char *name)
{
    LLVMMetadataRef loc = LLVMInstructionGetDebugLoc(inst);
    LLVMInsertIntoBuilderWithName(b, inst, name);
    LLVMInstructionSetDebugLoc(inst, loc);
}

/* Whether fn's address is used other than as the callee of a direct call (then an indirect
 * call may reach it). */
static int address_taken(LLVMValueRef fn)
{
    for (LLVMUseRef use = LLVMGetFirstUse(fn); use; use = LLVMGetNextUse(use)) {
        LLVMValueRef user = LLVMGetUser(use);
        if (LLVMIsACallInst(user) && LLVMGetCalledValue(user) == fn)
            continue;
        return 1;
    }
    return 0;
}

static uint32_t block_of(struct xfunc *f, LLVMBasicBlockRef block)
{
    uintptr_t index = (uintptr_t)ptrmap_get(&f->block_index, LLVMBasicBlockAsValue(block));
    return index ? (uint32_t)(index - 1) : VIGIL_CFG_NONE;
}

void xs_record_cfg(struct xfunc *f)
{
    struct vigil_xform *x = f->x;
    ptrmap_init(&f->block_index);
    for (size_t i = 0; i < f->blocks.n; i++)
        ptrmap_put(&f->block_index, f->blocks.v[i], (void *)(uintptr_t)(i + 1));
    f->cfg_function = vigil_sitefmt_add_function(x->sites, f->name, (uint32_t)f->blocks.n,
                                                 address_taken(f->fn) ? VIGIL_CFG_ADDRESS_TAKEN : 0);
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(LLVMValueAsBasicBlock(f->blocks.v[i]));
        unsigned n = term ? LLVMGetNumSuccessors(term) : 0;
        int is_switch = term && LLVMIsASwitchInst(term), is_cond = term && LLVMIsABranchInst(term) && LLVMIsConditional(term);
        for (unsigned k = 0; k < n; k++) {
            uint32_t to = block_of(f, LLVMGetSuccessor(term, k));
            uint32_t label = is_switch ? VIGIL_EDGE_CASE0 + k : is_cond ? (k == 0 ? VIGIL_EDGE_TRUE : VIGIL_EDGE_FALSE)
                                                                       : VIGIL_EDGE_ALWAYS;
            if (to == VIGIL_CFG_NONE)
                continue;
            vigil_sitefmt_add_edge(x->sites, (uint32_t)i, to, label);
            void *grown = realloc(f->cfg_edges, (f->cfg_nedges + 1) * sizeof *f->cfg_edges);
            if (grown) {   /* without it, fewer counters are found redundant: no harm */
                f->cfg_edges = grown;
                f->cfg_edges[f->cfg_nedges++] = (struct vigil_cfg_edge){(uint32_t)i, to, label};
            }
        }
    }
    for (size_t i = 0; i < f->blocks.n; i++) {
        LLVMBasicBlockRef block = LLVMValueAsBasicBlock(f->blocks.v[i]);
        LLVMValueRef term = LLVMGetBasicBlockTerminator(block);
        int exits = !term || LLVMGetNumSuccessors(term) == 0;
        for (LLVMValueRef inst = LLVMGetFirstInstruction(block); inst && !exits; inst = LLVMGetNextInstruction(inst))
            exits = xf_is_noreturn_call(inst);
        if (!exits)
            continue;
        vigil_sitefmt_add_exit(x->sites, (uint32_t)i);
        void *grown = realloc(f->cfg_exits, (f->cfg_nexits + 1) * sizeof *f->cfg_exits);
        if (grown) {
            f->cfg_exits = grown;
            f->cfg_exits[f->cfg_nexits++] = (uint32_t)i;
        }
    }
    for (size_t i = 0; i < f->blocks.n; i++)
        for (LLVMValueRef inst = LLVMGetFirstInstruction(LLVMValueAsBasicBlock(f->blocks.v[i])); inst;
             inst = LLVMGetNextInstruction(inst)) {
            int is_call = LLVMIsACallInst(inst) != NULL;
            if (is_call && !LLVMIsAInlineAsm(LLVMGetCalledValue(inst))) {
                const char *callee = xf_callee_name(inst);
                if (strncmp(callee, "llvm.", 5) && strncmp(callee, "__vigil_", 8))
                    vigil_sitefmt_add_call(x->sites, f->cfg_function, (uint32_t)i, callee);
            }
            /* A function whose address this block hands on (a callback to qsort or
             * pthread_create, a pointer stored) may be called from here: recorded as a call. */
            unsigned nops = (unsigned)LLVMGetNumOperands(inst) - (is_call ? 1u : 0u);
            for (unsigned k = 0; k < nops; k++) {
                LLVMValueRef op = LLVMGetOperand(inst, k);
                size_t len = 0;
                const char *name = op && LLVMIsAFunction(op) ? LLVMGetValueName2(op, &len) : NULL;
                if (name && len && strncmp(name, "llvm.", 5) && strncmp(name, "__vigil_", 8))
                    vigil_sitefmt_add_call(x->sites, f->cfg_function, (uint32_t)i, name);
            }
        }
}
