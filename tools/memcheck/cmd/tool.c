/* The memory checker's part of the `vigil` command: its name, options, findings and `vigil
 * memcheck-events`. memcheck.json is already a "vigil-findings" document
 * (tools/memcheck/runtime/report.c); reading it here names its stacks' frames (object path +
 * link-time address) from the binaries' debug information, adds each block's allocation site
 * as a related location and, from the event log (memcheck.events.zst, events.h), each error's
 * threads and first and last times. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdtool.h"
#include "events.h"
#include "findings.h"
#include "json.h"
#include "report.h"
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

/* The events of (site, kind): their threads and first and last times, as fields of f. */
static int add_event_fields(struct vigil_finding *f, const struct mc_event_log *log)
{
    static const char *const kinds[] = VIGIL_MC_KIND_NAMES;
    const struct vigil_field *site = vigil_finding_field(f, "site");
    if (!site || !site->value.is_number)
        return 0;
    int kind = -1;
    for (int k = 0; k < VIGIL_MCK_KINDS; k++)
        if (!strcmp(f->kind, kinds[k]))
            kind = k;
    uint64_t first = UINT64_MAX, last = 0, n = 0;
    uint32_t threads[64], nthreads = 0;   /* counted up to 64 */
    for (size_t i = 0; i < log->n; i++) {
        const struct vigil_mcev *e = &log->ev[i];
        if (e->kind != kind || e->site != (uint32_t)site->value.number)
            continue;
        n++;
        first = e->ns < first ? e->ns : first;
        last = e->ns > last ? e->ns : last;
        uint32_t t = 0;
        while (t < nthreads && threads[t] != e->thread)
            t++;
        if (t == nthreads && nthreads < 64)
            threads[nthreads++] = e->thread;
    }
    if (!n)
        return 0;
    return vigil_finding_add_number(f, "logged", (double)n, "events", 0) &&
                   vigil_finding_add_number(f, "threads", nthreads, NULL, 0) &&
                   vigil_finding_add_number(f, "first", (double)first / 1e6, "ms", 0) &&
                   vigil_finding_add_number(f, "last", (double)last / 1e6, "ms", 0)
               ? 0
               : -1;
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
    struct mc_event_log log = {0};
    snprintf(path, sizeof path, "%s/%s", rundir, VIGIL_MCEV_FILE);
    if (access(path, F_OK) == 0 && mc_events_load(path, &log, err, sizeof err) != 0) {
        fprintf(stderr, "vigil: memcheck: %s\n", err);
        vigil_findings_free(&l);
        return -1;
    }
    snprintf(path, sizeof path, "%s/memcheck.json", rundir);
    struct binaries b = {0};
    int rc = 0;
    for (size_t i = 0; i < l.nfindings && rc == 0; i++) {
        if (add_event_fields(&l.findings[i], &log) != 0)
            rc = -1;
        struct vigil_finding *f = &l.findings[i];
        for (size_t k = 0; k < f->nstacks; k++)
            symbolize_stack(&b, &f->stacks[k]);
        for (size_t k = 0; k < f->nstacks; k++) {
            const struct vigil_stack *s = &f->stacks[k];
            int alloc = !strcmp(s->label, "allocation");
            if ((!alloc && strcmp(s->label, "free") != 0) || !s->nframes)
                continue;
            const struct vigil_frame *fr = &s->frames[0];
            if (!vigil_finding_add_location(f, s->label, alloc ? "the block was allocated here" : "the block was freed here",
                                            fr->function, fr->file, fr->line, fr->column))
                rc = -1;
        }
    }
    for (size_t i = 0; i < b.n; i++) {
        free(b.v[i].path);
        if (b.v[i].s)
            vigil_symbolizer_close(b.v[i].s);
    }
    free(b.v);
    mc_events_free(&log);
    if (rc == 0 && vigil_findings_move(out, &l) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "vigil: memcheck: %s: out of memory\n", path);
    vigil_findings_free(&l);
    return rc;
}

/* ---- vigil memcheck-events ---- */

struct site_name {
    uint32_t site;
    char *where;                 /* "function file:line:column" */
};

/* The names of the sites memcheck.txt's error lines give ("error COUNT KIND SITE FUNCTION
 * FILE:LINE:COLUMN"); none when the file is missing. */
static size_t read_site_names(const char *dir, struct site_name **out)
{
    char path[4300], line[8192];
    snprintf(path, sizeof path, "%s/memcheck.txt", dir);
    *out = NULL;
    FILE *f = fopen(path, "r");
    size_t n = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long count;
        unsigned site;
        int at = 0;
        char kind[64];
        if (sscanf(line, "error %llu %63s %u %n", &count, kind, &site, &at) != 3 || !at)
            continue;
        line[strcspn(line, "\n")] = 0;
        struct site_name *grown = realloc(*out, (n + 1) * sizeof *grown);
        if (!grown)
            break;
        *out = grown;
        (*out)[n] = (struct site_name){site, strdup(line + at)};
        if ((*out)[n].where)
            n++;
    }
    if (f)
        fclose(f);
    return n;
}

static int by_time(const void *a, const void *b)
{
    const struct vigil_mcev *x = a, *y = b;
    return x->ns < y->ns ? -1 : x->ns > y->ns ? 1 : x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int cmd_events(int argc, char **argv)
{
    static const char *const kinds[] = VIGIL_MC_KIND_NAMES;
    static const char *const uses[] = {"", "branch", "address", "call", "return", "used", "", ""};
    const char *target = NULL, *kind_arg = NULL;
    int json = 0, kind = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--kind") && i + 1 < argc)
            kind_arg = argv[++i];
        else if (argv[i][0] == '-')
            return cmd_usage_error("memcheck-events", "unknown option \"%s\"", argv[i]);
        else if (target)
            return cmd_usage_error("memcheck-events", "one run expected, got \"%s\" too", argv[i]);
        else
            target = argv[i];
    }
    if (kind_arg) {
        for (int k = 0; k < VIGIL_MCK_KINDS; k++)
            if (!strcmp(kind_arg, kinds[k]))
                kind = k;
        if (kind < 0)
            return cmd_usage_error("memcheck-events", "--kind %s: expected one of heap-buffer-overflow, "
                                   "heap-buffer-underflow, use-after-free, uninitialized-read, index-out-of-bounds, "
                                   "object-out-of-bounds", kind_arg);
    }
    char dir[4200], path[4300], err[1024];
    if (cmd_run_holding(target, VIGIL_MCEV_FILE, dir, sizeof dir) != 0)
        return cmd_error("memcheck-events", "%s: no run with %s in it (run a program with `vigil run --tool "
                         "memcheck`; memcheck.events=0 writes none)", dir, VIGIL_MCEV_FILE);
    snprintf(path, sizeof path, "%s/%s", dir, VIGIL_MCEV_FILE);
    struct mc_event_log log;
    if (mc_events_load(path, &log, err, sizeof err) != 0)
        return cmd_error("memcheck-events", "%s", err);
    qsort(log.ev, log.n, sizeof *log.ev, by_time);
    struct site_name *names;
    size_t nnames = read_site_names(dir, &names);
    struct vigil_json j;
    if (json) {
        vigil_json_init(&j, stdout, 1);
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "run");
        vigil_json_string(&j, dir);
        vigil_json_key(&j, "dropped");
        vigil_json_uint(&j, log.dropped);
        vigil_json_key(&j, "events");
        vigil_json_array_begin(&j);
    } else {
        printf("%s: %zu events%s", dir, log.n, kind >= 0 ? "" : "\n");
        if (kind >= 0)
            printf(", %s only\n", kinds[kind]);
        if (log.dropped)
            printf("%llu more were not logged (memcheck.events= sets how many are)\n", (unsigned long long)log.dropped);
        printf("%10s %6s  %-22s %-26s %-34s %s\n", "ms", "thread", "kind", "access", "block", "where");
    }
    for (size_t i = 0; i < log.n; i++) {
        const struct vigil_mcev *e = &log.ev[i];
        if (kind >= 0 && e->kind != kind)
            continue;
        const char *where = NULL;
        for (size_t k = 0; k < nnames && !where; k++)
            if (names[k].site == e->site)
                where = names[k].where;
        const char *rw = e->flags & VIGIL_MCEV_STORE ? "write" : "read";
        const char *use = uses[(e->flags & VIGIL_MCEV_USE_MASK) >> VIGIL_MCEV_USE_SHIFT];
        int block = !!(e->flags & VIGIL_MCEV_BLOCK);
        if (json) {
            vigil_json_object_begin(&j);
            vigil_json_key(&j, "ms");
            vigil_json_double(&j, (double)e->ns / 1e6);
            vigil_json_key(&j, "thread");
            vigil_json_uint(&j, e->thread);
            vigil_json_key(&j, "kind");
            vigil_json_string(&j, kinds[e->kind]);
            vigil_json_key(&j, "site");
            vigil_json_uint(&j, e->site);
            vigil_json_key(&j, "where");
            vigil_json_string(&j, where);
            if (e->kind != VIGIL_MCK_INDEX && e->kind != VIGIL_MCK_OBJECT) {
                vigil_json_key(&j, "access");
                vigil_json_string(&j, rw);
                vigil_json_key(&j, "size");
                vigil_json_uint(&j, e->size);
                vigil_json_key(&j, "addr");
                vigil_json_uint(&j, e->addr);
            }
            if (*use) {
                vigil_json_key(&j, "use");
                vigil_json_string(&j, use);
            }
            if (block) {
                vigil_json_key(&j, "block");
                vigil_json_uint(&j, e->block);
                vigil_json_key(&j, "block_size");
                vigil_json_uint(&j, e->block_size);
            }
            vigil_json_object_end(&j);
            continue;
        }
        char access_s[64] = "", block_s[64] = "", site_s[32];
        if (e->kind != VIGIL_MCK_INDEX && e->kind != VIGIL_MCK_OBJECT)
            snprintf(access_s, sizeof access_s, "%s %u at 0x%llx", rw, e->size, (unsigned long long)e->addr);
        if (block)
            snprintf(block_s, sizeof block_s, "%+lld of %u bytes at 0x%llx",
                     (long long)(e->addr - e->block), e->block_size, (unsigned long long)e->block);
        snprintf(site_s, sizeof site_s, "site %u", e->site);
        printf("%10.3f %6u  %-22s %-26s %-34s %s%s%s%s\n", (double)e->ns / 1e6, e->thread, kinds[e->kind], access_s,
               block_s, where ? where : site_s, *use ? " (value used: " : "", use, *use ? ")" : "");
    }
    if (json) {
        vigil_json_array_end(&j);
        vigil_json_object_end(&j);
        vigil_json_finish(&j);
    }
    for (size_t k = 0; k < nnames; k++)
        free(names[k].where);
    free(names);
    mc_events_free(&log);
    return 0;
}

static const struct vigil_cmd_command memcheck_commands[] = {
    {"memcheck-events", "the memory checker's event log of a run: every error occurrence, in time order",
     "vigil memcheck-events [--kind KIND] [--json] [RUN]",
     "  RUN          a run directory, or a directory of runs (its newest run that holds\n"
     "               memcheck.events.zst); default: ./vigil-out, or out= of VIGIL_OPTIONS\n"
     "  (no flag)    one line per event: milliseconds since the start, thread (1, 2, ... in the\n"
     "               order threads first erred), kind, the access, its offset in the heap block,\n"
     "               and where (function file:line:column, from memcheck.txt)\n"
     "  --kind KIND  only the events of one kind (heap-buffer-overflow, use-after-free, ...)\n"
     "  --json       the same as one JSON document {run, dropped, events: [...]}\n"
     "A damaged log is rejected with its file, the byte and what was expected there.\n"
     "example: vigil run --tool memcheck -- ./prog; vigil memcheck-events --kind uninitialized-read",
     cmd_events},
};

static const struct vigil_cmd_tool memcheck_cmd_tool = {
    .name = "memcheck",
    .options = &memcheck_option_set,
    .description = "uninitialized reads, heap and array out-of-bounds accesses, uses after free, on sampled accesses; writes memcheck.json",
    .findings = memcheck_findings,
    .commands = memcheck_commands,
    .ncommands = sizeof memcheck_commands / sizeof memcheck_commands[0],
};
VIGIL_REGISTER_CMD_TOOL(memcheck_cmd_tool);
