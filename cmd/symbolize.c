/* Symbolization with libdwfl: it finds separate debug files (build-id, .gnu_debuglink) and
 * handles DWARF versions and inlining, which we should not redo by hand. */
#include "symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct vigil_symbolizer {
    Dwfl *dwfl;
    Dwfl_Module *module;
};

static char *debuginfo_path;   /* libdwfl's default search path for separate debug files */

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

struct vigil_symbolizer *vigil_symbolizer_open(const char *path, char *err, size_t errlen)
{
    struct vigil_symbolizer *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        free(s);
        return NULL;
    }
    s->dwfl = dwfl_begin(&offline_callbacks);
    /* Base 0 without adding p_vaddr: the module sits at its link-time addresses. dwfl owns
     * fd from here on. */
    if (s->dwfl)
        s->module = dwfl_report_elf(s->dwfl, path, path, fd, 0, false);
    else
        close(fd);
    if (!s->module) {
        snprintf(err, errlen, "%s: cannot read as ELF: %s", path, dwfl_errmsg(-1));
        vigil_symbolizer_close(s);
        return NULL;
    }
    dwfl_report_end(s->dwfl, NULL, NULL);
    return s;
}

/* The scopes of the DIEs under parent that contain pc, innermost first, by walking the tree:
 * dwarf_getscopes gives none when an inlined subroutine's abstract origin is in another unit
 * (vigil-cc's outlined copies live in a unit of their own, and inline functions of the
 * source's unit). Returns their number; *scopes is malloc'ed. */
static int scopes_by_walk(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    int n = 0, cap = 0;
    Dwarf_Die *found = NULL;
    Dwarf_Die die = *parent, child;
    for (;;) {
        int descended = 0;
        if (dwarf_child(&die, &child) == 0) {
            do {
                int tag = dwarf_tag(&child);
                if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
                    continue;
                if (dwarf_haspc(&child, pc) <= 0)
                    continue;
                if (n == cap) {
                    cap = cap ? cap * 2 : 8;
                    Dwarf_Die *grown = realloc(found, (size_t)cap * sizeof *grown);
                    if (!grown)
                        break;
                    found = grown;
                }
                found[n++] = child;
                die = child;
                descended = 1;
                break;
            } while (dwarf_siblingof(&child, &child) == 0);
        }
        if (!descended)
            break;
    }
    for (int i = 0; i < n / 2; i++) {   /* innermost first, as dwarf_getscopes */
        Dwarf_Die t = found[i];
        found[i] = found[n - 1 - i];
        found[n - 1 - i] = t;
    }
    *scopes = found;
    return n;
}

/* The scopes of compile unit cu that contain pc, innermost first (*scopes malloc'ed). */
static int cu_scopes(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **scopes)
{
    *scopes = NULL;
    int n = dwarf_getscopes(cu, pc, scopes);
    if (n <= 0) {
        free(*scopes);
        *scopes = NULL;
        n = scopes_by_walk(cu, pc, scopes);
    }
    return n;
}

/* The innermost function name of address in compile unit cu (a subprogram or inlined
 * subroutine: the function the user wrote the line in), or NULL. */
static const char *function_in_cu(Dwarf_Die *cu, Dwarf_Addr pc, struct vigil_source_location *out)
{
    Dwarf_Die *scopes = NULL;
    const char *found = NULL;
    int n = cu_scopes(cu, pc, &scopes);
    for (int i = 0; i < n; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
            continue;
        const char *name = dwarf_diename(&scopes[i]);
        if (!name)
            continue;
        if (!found) {
            snprintf(out->function, sizeof out->function, "%s", name);
            found = out->function;
        }
        if (tag == DW_TAG_subprogram)   /* innermost first: the last one is the outermost */
            snprintf(out->container, sizeof out->container, "%s", name);
    }
    free(scopes);
    return found;
}

/* The compile unit that has a function at address. Two units of one object may both claim
 * it: vigil-cc puts outlined instrumented copies in a unit of their own, between the
 * functions of the source's unit, whose single [low, high) range then covers them too. The
 * unit whose scopes name a function wins. dwfl's lookup relies on .debug_aranges, which clang
 * does not emit by default and elfutils before 0.189 does not rebuild, so each unit is asked
 * for its ranges. */
static int find_cu(Dwfl_Module *m, uint64_t address, Dwarf_Die *cu, Dwarf_Addr *bias,
                   struct vigil_source_location *out)
{
    Dwarf *dw = dwfl_module_getdwarf(m, bias);
    if (!dw)
        return -1;
    int found = -1;
    Dwarf_Off off = 0, next;
    size_t header_size;
    while (dwarf_nextcu(dw, off, &next, &header_size, NULL, NULL, NULL) == 0) {
        Dwarf_Die die;
        if (dwarf_offdie(dw, off + header_size, &die) && dwarf_haspc(&die, address - *bias) > 0) {
            if (found != 0) {   /* the first unit that covers it, unless a better one comes */
                *cu = die;
                found = 0;
            }
            if (function_in_cu(&die, address - *bias, out)) {
                *cu = die;
                return 0;
            }
        }
        off = next;
    }
    return found;
}

/* Whether name (may be NULL) is longer than suffix and ends with it. */
static int has_suffix(const char *name, const char *suffix)
{
    size_t len = name ? strlen(name) : 0, n = strlen(suffix);
    return len > n && strcmp(name + len - n, suffix) == 0;
}

/* A symbol of vigil-cc's companions (<name>.vigil.instr, <name>.vigil.b, <name>.vigil.b.local)
 * and of the cold part that the back end split off a function (<name>.cold,
 * compiler/coldsplit.c) is named <name>. */
static void strip_companion_suffix(char *name)
{
    static const char *const suffixes[] = {".cold", ".vigil.instr", ".vigil.b.local", ".vigil.b"};
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (has_suffix(name, suffixes[i]))
            name[strlen(name) - strlen(suffixes[i])] = '\0';
}

/* file as the unit names it, made absolute with the unit's directory: units of one source
 * may spell its path differently (relative to the unit's directory or not), and absolute
 * paths name one file one way. */
static void unit_path(Dwarf_Die *cu, const char *file, char *out, size_t len)
{
    Dwarf_Attribute attr;
    const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    if (file && file[0] != '/' && dir && dir[0])
        snprintf(out, len, "%s/%s", dir, file);
    else
        snprintf(out, len, "%s", file ? file : "");
}

static int symbolize_in(struct vigil_symbolizer *s, uint64_t address, struct vigil_source_location *out,
                        Dwarf_Die *cu_out, Dwarf_Addr *bias_out)
{
    memset(out, 0, sizeof *out);
    Dwarf_Die cu;
    Dwarf_Addr bias = 0;
    int have_cu = find_cu(s->module, address, &cu, &bias, out) == 0;
    if (have_cu) {
        Dwarf_Line *line = dwarf_getsrc_die(&cu, address - bias);
        const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
        if (file)
            unit_path(&cu, file, out->file, sizeof out->file);
        if (file) {
            dwarf_lineno(line, &out->line);
            dwarf_linecol(line, &out->column);
        }
    }
    if (!out->function[0]) {
        const char *name = dwfl_module_addrname(s->module, address);   /* symbol table: no DWARF needed */
        if (name)
            snprintf(out->function, sizeof out->function, "%s", name);
    }
    const char *symbol = dwfl_module_addrname(s->module, address);
    if (!out->container[0] && symbol)
        snprintf(out->container, sizeof out->container, "%s", symbol);
    out->outlined = has_suffix(symbol, ".vigil.instr");
    out->thunk = has_suffix(symbol, ".vigil.xfer");
    strip_companion_suffix(out->function);
    strip_companion_suffix(out->container);
    if (cu_out && have_cu) {
        *cu_out = cu;
        *bias_out = bias;
    }
    return have_cu;
}

int vigil_symbolize(struct vigil_symbolizer *s, uint64_t address, struct vigil_source_location *out)
{
    symbolize_in(s, address, out, NULL, NULL);
    return out->function[0] || out->file[0] ? 0 : -1;
}

int vigil_symbolize_inlined(struct vigil_symbolizer *s, uint64_t address, struct vigil_source_location *out, int max)
{
    if (max <= 0)
        return 0;
    Dwarf_Die cu;
    Dwarf_Addr bias;
    int have_cu = symbolize_in(s, address, &out[0], &cu, &bias);
    if (!out[0].function[0] && !out[0].file[0])
        return 0;
    if (!have_cu)
        return 1;
    /* dwarf_getscopes continues past an inlined subroutine with its abstract origin's scopes;
     * the concrete chain (the functions it was inlined into) is that of the innermost DIE. */
    Dwarf_Die *scopes = NULL;
    int nscopes = cu_scopes(&cu, address - bias, &scopes);
    if (nscopes > 0) {
        Dwarf_Die innermost = scopes[0];
        free(scopes);
        scopes = NULL;
        nscopes = dwarf_getscopes_die(&innermost, &scopes);
        if (nscopes <= 0) {
            free(scopes);
            nscopes = scopes_by_walk(&cu, address - bias, &scopes);
        }
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0)
        files = NULL;
    int n = 1;
    /* Each inlined subroutine holds its call's file and line, in the function that encloses
     * it: the next subprogram or inlined subroutine outwards. */
    for (int i = 0; i < nscopes && n < max; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        int j = i + 1;
        while (j < nscopes && dwarf_tag(&scopes[j]) != DW_TAG_subprogram &&
               dwarf_tag(&scopes[j]) != DW_TAG_inlined_subroutine)
            j++;
        if (j == nscopes)
            break;
        struct vigil_source_location *f = &out[n];
        memset(f, 0, sizeof *f);
        const char *name = dwarf_diename(&scopes[j]);
        snprintf(f->function, sizeof f->function, "%s", name ? name : "");
        strip_companion_suffix(f->function);
        snprintf(f->container, sizeof f->container, "%s", out[0].container);
        f->outlined = out[0].outlined;
        f->thunk = out[0].thunk;
        Dwarf_Attribute attr;
        Dwarf_Word value;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &value) == 0 && files &&
            value < nfiles)
            unit_path(&cu, dwarf_filesrc(files, value, NULL, NULL), f->file, sizeof f->file);
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &value) == 0)
            f->line = (int)value;
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_column, &attr), &value) == 0)
            f->column = (int)value;
        n++;
    }
    free(scopes);
    return n;
}

int vigil_symbolize_file_offset(struct vigil_symbolizer *s, uint64_t offset,
                                struct vigil_source_location *out)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(s->module, &bias);
    size_t nphdr;
    if (!elf || elf_getphdrnum(elf, &nphdr) != 0)
        return -1;
    for (size_t i = 0; i < nphdr; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && offset >= ph.p_offset &&
            offset - ph.p_offset < ph.p_filesz)
            return vigil_symbolize(s, offset - ph.p_offset + ph.p_vaddr, out);
    }
    memset(out, 0, sizeof *out);
    return -1;
}

void vigil_symbolizer_close(struct vigil_symbolizer *s)
{
    if (!s)
        return;
    if (s->dwfl)
        dwfl_end(s->dwfl);
    free(s);
}
