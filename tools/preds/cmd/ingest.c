/* vigil ingest [--db TARGET] DIR...: load feedback reports (preds.txt) into the report store.
 * DIR is a run report (<out>/<prog>.<pid>/ with run.txt) or an output directory holding them.
 * Each report is read and checked completely before one transaction inserts it, so a bad
 * report adds no rows; a report already in the store (same run.txt) changes nothing.
 *
 * Labels: label.txt (an oracle's verdict, written by `vigil run --label-by CMD`) when present,
 * else a `label` line in preds.txt, else run.txt: exit status 0 is a success, any other status or a signal a failure.
 *
 * Counts of branch predicates vigil-cc left out (seed 002 section 3.1: the site table's
 * "removed" list) are filled in from their source sites for `collect all|plan` reports, so the
 * store holds complete counts; the lists come from the binaries, once per module. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cdg.h"
#include "cmd.h"
#include "feedback.h"
#include "runreport.h"
#include "sitemap.h"
#include "store.h"

struct ingest {
    struct vigil_store *store;
    size_t added, present, skipped, rejected;
    /* tu hashes whose site descriptions are known to be in the store */
    char (*known)[17];
    size_t nknown, known_cap;
    /* removed branch predicates per module, read from the binaries once */
    struct removed_list {
        uint64_t tu_hash;
        uint32_t n;
        struct vigil_cfg_removed *v;
    } *removed;
    size_t nremoved_lists;
    /* the source file read last (site descriptions show their line's text) */
    char source_path[4096];
    char *source_text;             /* NULL: not readable */
    size_t source_len;
};

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* 63-bit identity of a run: a hash of its run.txt (pid, start time, arguments, ...). */
static int hash_file(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint64_t h = 0xcbf29ce484222325ull;
    int c;
    while ((c = getc(f)) != EOF)
        h = (h ^ (unsigned char)c) * 0x100000001b3ull;
    fclose(f);
    h ^= h >> 33;   /* spread FNV-1a's weak high bits */
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    *out = h & INT64_MAX;
    return 0;
}

static int known_module(struct ingest *in, const char *tu_hash)
{
    for (size_t i = 0; i < in->nknown; i++)
        if (strcmp(in->known[i], tu_hash) == 0)
            return 1;
    return 0;
}

static void remember_module(struct ingest *in, const char *tu_hash)
{
    if (in->nknown == in->known_cap) {
        size_t ncap = in->known_cap ? in->known_cap * 2 : 16;
        void *m = realloc(in->known, ncap * sizeof *in->known);
        if (!m)
            return;   /* only a cache: the store is asked again next time */
        in->known = m;
        in->known_cap = ncap;
    }
    snprintf(in->known[in->nknown++], 17, "%s", tu_hash);
}

/* Runs are committed in batches (one transaction, a savepoint per run): a commit per run
 * would wait for the disk once per report. */
#define BATCH_RUNS 500

static void commit_batch(struct ingest *in)
{
    size_t pending = vigil_store_batch_pending(in->store);
    char err[1024];
    if (vigil_store_batch_commit(in->store, err, sizeof err) != 0) {
        fprintf(stderr, "vigil ingest: committing %zu runs: %s: they were not added\n", pending, err);
        in->added -= pending;
        in->rejected += pending;
        in->nknown = 0;   /* site descriptions of the lost runs: ask the store again */
    }
}

/* Everything one report needs, owned here and freed by report_free. */
struct report {
    struct vigil_run_report run;
    struct vigil_feedback fb, label;
    int has_label;
    struct vigil_sitemap map;
    int has_map;
    struct vigil_store_observation *obs;
    struct vigil_store_site *sites;
    size_t nsites;
    char stack[VIGIL_FEEDBACK_MAX_STACK * 20 + 1];
};

static void report_free(struct report *r)
{
    vigil_run_report_free(&r->run);
    vigil_feedback_free(&r->fb);
    if (r->has_label)
        vigil_feedback_free(&r->label);
    if (r->has_map)
        vigil_sitemap_free(&r->map);
    free(r->obs);
    free(r->sites);
}

static int module_of(const struct vigil_run_report *run, uint32_t id, uint32_t *local)
{
    for (size_t m = 0; m < run->nmodules; m++) {
        const struct vigil_run_module *mod = &run->modules[m];
        if (id >= mod->base_id && id - mod->base_id < mod->nsites) {
            *local = id - mod->base_id;
            return (int)m;
        }
    }
    return -1;
}

/* The text of line `line` of the source file `file` (as the debug info names it: absolute, or
 * relative to where it was compiled, tried from here and from the binary's directory),
 * trimmed, in out ("" when unreadable). One file is kept in memory at a time. */
static void source_line(struct ingest *in, const char *binary, const char *file, uint32_t line, char *out, size_t len)
{
    out[0] = '\0';
    if (!file[0] || !line)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s", file);
    if (file[0] != '/' && !is_file(path)) {
        const char *slash = strrchr(binary, '/');
        if (slash)
            snprintf(path, sizeof path, "%.*s/%s", (int)(slash - binary), binary, file);
    }
    if (strcmp(path, in->source_path) != 0) {
        free(in->source_text);
        in->source_text = NULL;
        in->source_len = 0;
        snprintf(in->source_path, sizeof in->source_path, "%s", path);
        FILE *f = is_file(path) ? fopen(path, "rb") : NULL;
        if (f) {
            struct stat st;
            if (fstat(fileno(f), &st) == 0 && st.st_size < (1 << 24) && (in->source_text = malloc((size_t)st.st_size + 1)))
                in->source_len = fread(in->source_text, 1, (size_t)st.st_size, f);
            fclose(f);
        }
    }
    const char *p = in->source_text, *end = p + in->source_len;
    for (uint32_t l = 1; p && p < end && l < line; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : NULL;
    }
    if (!p || p >= end)
        return;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
        eol = end;
    while (p < eol && (*p == ' ' || *p == '\t'))
        p++;
    while (eol > p && (eol[-1] == ' ' || eol[-1] == '\t' || eol[-1] == '\r'))
        eol--;
    size_t n = (size_t)(eol - p), o = 0;
    for (size_t i = 0; i < n && o + 4 < len; i++)   /* printable text only; "..." when cut */
        out[o++] = (unsigned char)p[i] < 0x20 ? ' ' : p[i];
    if (o < n && o >= 3)
        memcpy(out + o - 3, "...", 3);
    out[o] = '\0';
}

/* Site descriptions of the modules the store does not describe yet. */
static int describe_sites(struct ingest *in, struct report *r, char *err, size_t errlen)
{
    for (size_t m = 0; m < r->run.nmodules; m++) {
        char tu[17];
        snprintf(tu, sizeof tu, "%016" PRIx64, r->run.modules[m].tu_hash);
        if (known_module(in, tu))
            continue;
        int have = vigil_store_has_module(in->store, tu, err, errlen);
        if (have < 0)
            return -1;
        if (have) {
            remember_module(in, tu);
            continue;
        }
        if (!r->has_map) {
            if (vigil_sitemap_build(&r->run, &r->map) != 0) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            r->has_map = 1;
        }
        const struct vigil_sitefmt_table *t = r->map.modules[m].table;
        if (!t) {   /* rank will show such sites by id; a later report may describe them */
            fprintf(stderr, "vigil ingest: note: %s: module %zu: %s\n", r->run.program, m,
                    r->map.modules[m].problem);
            continue;
        }
        void *grown = realloc(r->sites, (r->nsites + t->nsites) * sizeof *r->sites);
        if (!grown && t->nsites) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        r->sites = grown;
        for (uint32_t i = 0; i < t->nsites; i++) {
            struct vigil_site_view v;
            vigil_sitefmt_get(t, i, &v);
            if (v.kind != VIGIL_SITE_BRANCH && v.kind != VIGIL_SITE_RETURN && v.kind != VIGIL_SITE_CASE)
                continue;
            struct vigil_store_site *s = &r->sites[r->nsites++];
            snprintf(s->tu_hash, sizeof s->tu_hash, "%s", tu);
            s->site_index = i;
            s->kind = v.kind;
            s->line = v.line;
            s->column = v.column;
            s->function = vigil_site_source_function(&v);   /* the inlined one, if inlined */
            s->file = v.file;
            source_line(in, r->run.modules[m].path, v.file, v.line, s->source, sizeof s->source);
        }
        remember_module(in, tu);   /* described by this run once it commits */
    }
    return 0;
}

/* The kind the binary's site table gives a site, or 0 when the table is not at hand. */
static uint32_t table_kind(const struct report *r, int module, uint32_t local)
{
    struct vigil_site_view v;
    if (!r->has_map || vigil_sitemap_lookup(&r->map, (uint32_t)module, local, &v) != 0)
        return 0;
    return v.kind;
}

/* The removed predicates of module m of the report (NULL when its binary cannot tell). */
static const struct removed_list *removed_of(struct ingest *in, struct report *r, size_t m)
{
    uint64_t tu = r->run.modules[m].tu_hash;
    for (size_t i = 0; i < in->nremoved_lists; i++)
        if (in->removed[i].tu_hash == tu)
            return &in->removed[i];
    if (!r->has_map) {
        if (vigil_sitemap_build(&r->run, &r->map) != 0)
            return NULL;
        r->has_map = 1;
    }
    const struct vigil_sitefmt_table *t = r->map.modules[m].table;
    if (!t)
        return NULL;   /* describe_sites said why */
    struct vigil_cfg cfg;
    char err[256];
    int rc = vigil_sitefmt_cfg(t, &cfg, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "vigil ingest: note: %s: %s\n", r->run.modules[m].path, err);
        return NULL;
    }
    struct removed_list list = {tu, 0, NULL};
    if (rc > 0 && cfg.nremoved) {
        list.v = malloc(cfg.nremoved * sizeof *list.v);
        if (list.v) {
            memcpy(list.v, cfg.removed, cfg.nremoved * sizeof *list.v);
            list.n = cfg.nremoved;
        }
    }
    if (rc > 0)
        vigil_cfg_free(&cfg);
    void *grown = realloc(in->removed, (in->nremoved_lists + 1) * sizeof *in->removed);
    if (!grown) {
        free(list.v);
        return NULL;
    }
    in->removed = grown;
    in->removed[in->nremoved_lists] = list;
    return &in->removed[in->nremoved_lists++];
}

static long obs_index(const struct vigil_feedback *fb, uint32_t id)
{
    size_t lo = 0, hi = fb->nsites;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (fb->sites[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < fb->nsites && fb->sites[lo].id == id ? (long)lo : -1;
}

/* Fill in left-out branch predicates: count = the source site's total (itself possibly
 * reconstructed first: sources come later in the code, so chains end). */
static void reconstruct(struct ingest *in, struct report *r)
{
    if (r->fb.collect != VIGIL_COLLECT_ALL && r->fb.collect != VIGIL_COLLECT_PLAN)
        return;
    struct fix { long site, source; uint32_t pred; int done; } *fix = NULL;
    size_t nfix = 0;
    for (size_t m = 0; m < r->run.nmodules; m++) {
        const struct vigil_run_module *mod = &r->run.modules[m];
        long first = obs_index(&r->fb, mod->base_id);   /* any observation in this module? */
        size_t at = first >= 0 ? (size_t)first : 0;
        while (first < 0 && at < r->fb.nsites && r->fb.sites[at].id < mod->base_id)
            at++;
        if (at >= r->fb.nsites || r->fb.sites[at].id - mod->base_id >= mod->nsites)
            continue;
        const struct removed_list *list = removed_of(in, r, m);
        if (!list || !list->n)
            continue;
        void *grown = realloc(fix, (nfix + list->n) * sizeof *fix);
        if (!grown)
            break;
        fix = grown;
        for (uint32_t i = 0; i < list->n; i++) {
            long site = obs_index(&r->fb, mod->base_id + list->v[i].site);
            if (site >= 0)
                fix[nfix++] = (struct fix){site, obs_index(&r->fb, mod->base_id + list->v[i].source),
                                           list->v[i].predicate, 0};
        }
    }
    uint32_t *pending = calloc(r->fb.nsites + 1, sizeof *pending);   /* fixes still to do, per site */
    for (size_t i = 0; pending && i < nfix; i++)
        pending[fix[i].site]++;
    for (int progress = pending != NULL; progress;) {
        progress = 0;
        for (size_t i = 0; i < nfix; i++) {
            if (fix[i].done || (fix[i].source >= 0 && pending[fix[i].source]))
                continue;
            struct vigil_store_observation *o = &r->obs[fix[i].site];
            uint64_t total = 0;
            if (fix[i].source >= 0)   /* else not monitored in this run: nothing to add */
                for (int p = 0; p < 3; p++)
                    total += r->obs[fix[i].source].count[p];
            o->count[fix[i].pred] = r->fb.binary == 1 ? total != 0 : total;
            o->observed = r->fb.binary == 1 ? (o->count[0] | o->count[1]) != 0 : o->count[0] + o->count[1];
            fix[i].done = progress = 1;
            pending[fix[i].site]--;
        }
    }
    free(pending);
    free(fix);
}

static int load_report(struct ingest *in, const char *dir, struct report *r,
                       struct vigil_store_run *out, char *err, size_t errlen)
{
    char run_path[4096], preds_path[4096], label_path[4096];
    snprintf(run_path, sizeof run_path, "%s/%s", dir, VIGIL_RUN_FILE);
    snprintf(preds_path, sizeof preds_path, "%s/%s", dir, VIGIL_FEEDBACK_FILE);
    snprintf(label_path, sizeof label_path, "%s/%s", dir, VIGIL_LABEL_FILE);
    if (vigil_run_report_load(run_path, &r->run, err, errlen) != 0)
        return -1;
    if (r->run.running)
        return snprintf(err, errlen, "%s: written while the program ran; expected the report of a "
                        "run that ended (its label is not known yet)", run_path), -1;
    if (vigil_feedback_load(preds_path, &r->fb, err, errlen) != 0)
        return -1;
    if (r->fb.collect == VIGIL_COLLECT_NONE || r->fb.pid < 0)
        return snprintf(err, errlen, "%s: a feedback report needs `pid` and `collect` lines",
                        preds_path), -1;
    if (r->fb.pid != r->run.pid)
        return snprintf(err, errlen, "%s: pid %lld, but run.txt says %lld (mixed-up reports?)",
                        preds_path, (long long)r->fb.pid, (long long)r->run.pid), -1;
    if (is_file(label_path)) {
        if (vigil_feedback_load(label_path, &r->label, err, errlen) != 0)
            return -1;
        r->has_label = 1;
        if (r->label.label == VIGIL_LABEL_NONE || r->label.nsites)
            return snprintf(err, errlen, "%s: expected a `label` line and no sites", label_path), -1;
    }
    if (hash_file(run_path, &out->run_id) != 0)
        return snprintf(err, errlen, "%s: %s", run_path, strerror(errno)), -1;
    if (describe_sites(in, r, err, errlen) != 0)
        return -1;

    r->obs = calloc(r->fb.nsites ? r->fb.nsites : 1, sizeof *r->obs);
    if (!r->obs)
        return snprintf(err, errlen, "out of memory"), -1;
    for (size_t i = 0; i < r->fb.nsites; i++) {
        const struct vigil_feedback_site *fs = &r->fb.sites[i];
        uint32_t local;
        int m = module_of(&r->run, fs->id, &local);
        if (m < 0)
            return snprintf(err, errlen, "%s: site %u is in no module of run.txt (report from "
                            "another build?)", preds_path, fs->id), -1;
        uint32_t kind = table_kind(r, m, local);
        if (kind && kind != fs->kind)
            return snprintf(err, errlen, "%s: site %u is a %s site in %s, not %s", preds_path,
                            fs->id, vigil_site_kind_name(kind), r->run.modules[m].path,
                            vigil_site_kind_name(fs->kind)), -1;
        struct vigil_store_observation *o = &r->obs[i];
        snprintf(o->tu_hash, sizeof o->tu_hash, "%016" PRIx64, r->run.modules[m].tu_hash);
        o->site_index = local;
        o->kind = fs->kind;
        o->observed = fs->observed;
        memcpy(o->count, fs->count, sizeof o->count);
    }
    reconstruct(in, r);

    out->report_path = dir;
    out->program = r->run.program;
    out->pid = r->run.pid;
    out->start_unix_ns = r->run.start_unix_ns;
    out->exited = r->run.exited;
    out->exit_status = r->run.exit_status;
    out->signal = r->run.signal;
    if (r->has_label || r->fb.label != VIGIL_LABEL_NONE) {
        out->failed = (r->has_label ? r->label.label : r->fb.label) == VIGIL_LABEL_FAILURE;
        out->label_source = "oracle";
    } else {
        out->failed = !r->run.exited || r->run.exit_status != 0;
        out->label_source = r->run.exited ? "exit" : "signal";
    }
    /* where a failing run ended: the oracle's stack if it gave one, else the tool's */
    const struct vigil_feedback *st = r->has_label && r->label.stack_depth ? &r->label : &r->fb;
    size_t at = 0;
    r->stack[0] = '\0';
    for (uint32_t i = 0; out->failed && i < st->stack_depth; i++)
        at += (size_t)snprintf(r->stack + at, sizeof r->stack - at, "%s0x%" PRIx64, i ? " " : "",
                               st->stack[i]);
    out->stack = r->stack;
    if (r->run.has_crash && r->run.crash_path && r->run.crash_path[0]) {
        out->crash_path = r->run.crash_path;
        out->crash_file_offset = r->run.crash_file_offset;
        out->crash_signal = r->run.crash_signal;
    }
    out->collect = vigil_collect_name(r->fb.collect);
    out->binary = r->fb.binary;
    out->nobs = r->fb.nsites;
    out->obs = r->obs;
    out->nsites = r->nsites;
    out->sites = r->sites;
    return 0;
}

static void ingest_one(struct ingest *in, const char *dir)
{
    char preds_path[4096];
    snprintf(preds_path, sizeof preds_path, "%s/%s", dir, VIGIL_FEEDBACK_FILE);
    if (!is_file(preds_path)) {
        fprintf(stderr, "vigil ingest: %s: skipped: no %s (run without tools=preds)\n", dir,
                VIGIL_FEEDBACK_FILE);
        in->skipped++;
        return;
    }
    struct report r;
    memset(&r, 0, sizeof r);
    struct vigil_store_run run;
    memset(&run, 0, sizeof run);
    char err[1024] = "";
    size_t known_before = in->nknown;
    int rc = load_report(in, dir, &r, &run, err, sizeof err);
    if (rc == 0)
        rc = vigil_store_add_run(in->store, &run, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "vigil ingest: %s: rejected: %s\n", dir, err);
        in->rejected++;
        in->nknown = known_before;   /* its site descriptions were not committed */
    } else if (rc == 0) {
        in->present++;
        in->nknown = known_before;   /* rolled back: ask the store next time */
    } else {
        in->added++;
        if (vigil_store_batch_pending(in->store) >= BATCH_RUNS)
            commit_batch(in);
    }
    report_free(&r);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A run report, or a directory of run reports (hidden entries are reports in progress). */
static void ingest_path(struct ingest *in, const char *path)
{
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/%s", path, VIGIL_RUN_FILE);
    if (is_file(probe)) {
        ingest_one(in, path);
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "vigil ingest: %s: %s\n", path, strerror(errno));
        in->rejected++;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s/%s", path, e->d_name, VIGIL_RUN_FILE);
        if (!is_file(sub))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **m = realloc(names, cap * sizeof *names);
            if (!m)
                break;
            names = m;
        }
        names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
        if (!names[n])
            break;
        sprintf(names[n++], "%s/%s", path, e->d_name);
    }
    closedir(d);
    if (n == 0)
        fprintf(stderr, "vigil ingest: %s: no run reports here (expected run.txt or "
                        "<prog>.<pid>/run.txt)\n", path);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        ingest_one(in, names[i]);
        free(names[i]);
    }
    free(names);
}

int cmd_ingest(int argc, char **argv)
{
    const char *db = VIGIL_STORE_DEFAULT;
    int quiet = 0, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else if (strncmp(argv[i], "--db=", 5) == 0) {
            db = argv[i] + 5;
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            quiet = 1;
        } else {
            return cmd_usage_error("ingest", "unknown option \"%s\"", argv[i]);
        }
    }
    if (i == argc)
        return cmd_usage_error("ingest", "expected at least one report directory");
    char err[1024];
    struct ingest in = {0};
    in.store = vigil_store_open(db, err, sizeof err);
    if (!in.store)
        return cmd_error("ingest", "%s", err);
    vigil_store_batch_begin(in.store);
    for (; i < argc; i++) {
        if (!is_dir(argv[i])) {
            fprintf(stderr, "vigil ingest: %s: not a directory\n", argv[i]);
            in.rejected++;
            continue;
        }
        ingest_path(&in, argv[i]);
    }
    commit_batch(&in);
    if (!quiet || in.rejected)   /* no URL in the message: it may hold a password */
        fprintf(stderr, "vigil ingest: %zu added, %zu already present, %zu skipped, %zu rejected "
                        "(%s store%s%s)\n", in.added, in.present, in.skipped, in.rejected,
                vigil_store_backend_name(in.store), strstr(db, "://") ? "" : " ",
                strstr(db, "://") ? "" : db);
    vigil_store_close(in.store);
    free(in.known);
    free(in.source_text);
    for (size_t k = 0; k < in.nremoved_lists; k++)
        free(in.removed[k].v);
    free(in.removed);
    return in.rejected ? EXIT_BAD_INPUT : 0;
}
