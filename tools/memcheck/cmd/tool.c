/* The memory checker's part of the `vigil` command: its name, options and findings.
 * memcheck.json is already a "vigil-findings" document (tools/memcheck/runtime/report.c);
 * reading it here names its stacks' frames (object path + link-time address) from the
 * binaries' debug information and adds each block's allocation site as a related location.
 * `vigil report` renders the findings; the tool has no subcommand of its own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdtool.h"
#include "findings.h"
#include "symbolize.h"

#define VIGIL_OPTSET_TOOL memcheck
#define VIGIL_OPTSET_ROWS "tools/memcheck/options.inc"
#include "optset.h"

struct binary {
    char *path;
    struct vigil_symbolizer *s;   /* NULL: could not be opened */
};
struct binaries {
    struct binary *v;
    size_t n;
};

static struct vigil_symbolizer *symbolizer_for(struct binaries *b, const char *path)
{
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->v[i].path, path))
            return b->v[i].s;
    struct binary *grown = realloc(b->v, (b->n + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    b->v = grown;
    char err[300];
    b->v[b->n] = (struct binary){strdup(path), vigil_symbolizer_open(path, err, sizeof err)};
    return b->v[b->n++].s;
}

/* Name the frames that have only their object and address; drop vigil's own (thunks). */
static void symbolize_stack(struct binaries *b, struct vigil_stack *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->nframes; i++) {
        struct vigil_frame *fr = &s->frames[i];
        if (fr->line == 0 && !fr->function[0] && fr->file[0]) {
            struct vigil_symbolizer *sym = symbolizer_for(b, fr->file);
            struct vigil_source_location loc;
            if (sym && vigil_symbolize(sym, fr->pc, &loc) == 0) {
                if (loc.thunk) {
                    free(fr->function);
                    free(fr->file);
                    continue;
                }
                char *function = strdup(loc.function[0] ? loc.function : loc.container);
                char *file = strdup(loc.file);
                if (function && file) {
                    free(fr->function);
                    free(fr->file);
                    fr->function = function;
                    fr->file = file;
                    fr->line = (uint32_t)loc.line;
                    fr->column = (uint32_t)loc.column;
                } else {
                    free(function);
                    free(file);
                }
            }
        }
        s->frames[kept++] = *fr;
    }
    s->nframes = kept;
}

static int memcheck_findings(const char *rundir, struct vigil_findings *out)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/memcheck.json", rundir);
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return 0;   /* the run did not use the memory checker */
    struct vigil_findings l;
    char err[600];
    if (vigil_findings_load_json(path, &l, err, sizeof err) != 0) {
        fprintf(stderr, "vigil: memcheck: %s\n", err);
        return -1;
    }
    struct binaries b = {0};
    int rc = 0;
    for (size_t i = 0; i < l.nfindings && rc == 0; i++) {
        struct vigil_finding *f = &l.findings[i];
        for (size_t k = 0; k < f->nstacks; k++)
            symbolize_stack(&b, &f->stacks[k]);
        for (size_t k = 0; k < f->nstacks; k++) {
            const struct vigil_stack *s = &f->stacks[k];
            if (strcmp(s->label, "allocation") != 0 || !s->nframes)
                continue;
            const struct vigil_frame *fr = &s->frames[0];
            if (!vigil_finding_add_location(f, "allocation", "the block was allocated here", fr->function, fr->file,
                                            fr->line, fr->column))
                rc = -1;
        }
    }
    for (size_t i = 0; i < b.n; i++) {
        free(b.v[i].path);
        if (b.v[i].s)
            vigil_symbolizer_close(b.v[i].s);
    }
    free(b.v);
    if (rc == 0 && vigil_findings_move(out, &l) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "vigil: memcheck: %s: out of memory\n", path);
    vigil_findings_free(&l);
    return rc;
}

static const struct vigil_cmd_tool memcheck_cmd_tool = {
    .name = "memcheck",
    .options = &memcheck_option_set,
    .description = "uninitialized reads, heap and array out-of-bounds accesses, uses after free, on sampled accesses; writes memcheck.json",
    .findings = memcheck_findings,
};
VIGIL_REGISTER_CMD_TOOL(memcheck_cmd_tool);
