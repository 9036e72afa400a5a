/* vigil observe [--out FILE] [--min-calls N] [--max-sites N] [--] PROGRAM [ARGS...]
 * Runs a program built with vigil-cc once with VIGIL_OPTIONS mode=off (every dispatch check
 * runs and counts its executions, no burst starts; only the tools that write sections of the
 * configuration run: struct vigil_cmd_tool's observe_write) and writes a configuration
 * for VIGIL_CC_CONFIG (docs/config.md) whose [skip] section lists the hot tiny functions, each
 * with its reason as a comment. The rule, from what the run report (executions per dispatch
 * check) and the site tables (every site of a function) say:
 *   - its entry check ran at least --min-calls times (default 1000000): hot;
 *   - it has no back-edge check (no loop): the entry count is all the work it does;
 *   - it has at most --max-sites sites of any kind (default 16; loads, stores, branches, call
 *     results, its entry): tiny, a body where the entry check's few instructions weigh most,
 *     and whose instrumented copy holds few events for a tool to sample;
 *   - it is not main.
 * Every process of the run (children that exec programs built with vigil-cc too) counts: a
 * function's calls add up over processes, its sites are those of the table that has most.
 * The file is written atomically. Exits 0 when it was written (whatever the program's status,
 * which is printed), 1 when it could not be (no site table, no report). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdtool.h"
#include "elfsites.h"
#include "runreport.h"
#include "sitemap.h"

struct observed {
    char *name, *file;       /* the compiled function; where its entry is */
    unsigned line;
    uint64_t calls;          /* executions of its entry check, all processes */
    uint32_t sites;          /* in its table (the largest over tables naming it) */
    int loops;               /* has a back-edge check somewhere */
};

struct observation {
    struct observed *v;
    size_t n, cap;
};

static struct observed *find_or_add(struct observation *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->v[i].name, name))
            return &o->v[i];
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        struct observed *v = realloc(o->v, cap * sizeof *v);
        if (!v)
            return NULL;
        o->v = v;
        o->cap = cap;
    }
    struct observed *f = &o->v[o->n++];
    memset(f, 0, sizeof *f);
    f->name = strdup(name);
    f->file = strdup("");
    return f->name && f->file ? f : NULL;
}

static int by_name(const void *a, const void *b)
{
    const struct vigil_site_view *x = a, *y = b;
    return strcmp(x->function, y->function);
}

/* One process's report: its functions' calls, sites and loops. 0, or -1 with a message. */
static int add_report(const char *cmd, const char *dir, struct observation *o)
{
    struct vigil_run_report r;
    char err[1024];
    if (vigil_run_report_load(dir, &r, err, sizeof err) != 0) {
        vigil_run_report_free(&r);
        cmd_error(cmd, "%s", err);
        return -1;
    }
    struct vigil_sitemap m;
    if (vigil_sitemap_build(&r, &m) != 0) {
        vigil_run_report_free(&r);
        cmd_error(cmd, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t k = 0; k < r.nmodules && rc == 0; k++) {
        const struct vigil_sitefmt_table *t = m.modules[k].table;
        if (!t) {
            fprintf(stderr, "vigil observe: note: %s: %s; its functions are left out\n", r.modules[k].path,
                    m.modules[k].problem);
            continue;
        }
        /* every site of the table, grouped by compiled function */
        struct vigil_site_view *views = calloc(t->nsites ? t->nsites : 1, sizeof *views);
        uint64_t *execs = calloc(t->nsites ? t->nsites : 1, sizeof *execs);
        if (!views || !execs) {
            free(views), free(execs);
            cmd_error(cmd, "out of memory");
            rc = -1;
            break;
        }
        for (size_t s = 0; s < r.nsites; s++)
            if (r.sites[s].module == k && r.sites[s].index < t->nsites)
                execs[r.sites[s].index] += r.sites[s].execs;
        for (uint32_t i = 0; i < t->nsites; i++) {
            vigil_sitefmt_get(t, i, &views[i]);
            views[i].aux = i;   /* the site's index, kept through the sort */
        }
        qsort(views, t->nsites, sizeof *views, by_name);
        for (uint32_t i = 0; i < t->nsites && rc == 0;) {
            uint32_t end = i;
            while (end < t->nsites && !strcmp(views[end].function, views[i].function))
                end++;
            uint64_t calls = 0;
            int loops = 0, has_entry = 0;
            const struct vigil_site_view *entry = NULL;
            for (uint32_t j = i; j < end; j++) {
                const struct vigil_site_view *v = &views[j];
                int own = !v->inlined || !v->inlined[0];
                if (v->kind == VIGIL_SITE_BACKEDGE)
                    loops = 1;
                if (v->kind == VIGIL_SITE_ENTRY && own) {
                    calls += execs[v->aux];
                    has_entry = 1;
                    entry = v;
                }
            }
            if (has_entry && views[i].function[0]) {
                struct observed *f = find_or_add(o, views[i].function);
                if (!f) {
                    cmd_error(cmd, "out of memory");
                    rc = -1;
                    break;
                }
                f->calls += calls;
                f->loops |= loops;
                if (end - i > f->sites) {
                    f->sites = end - i;
                    free(f->file);
                    f->file = strdup(entry->file ? entry->file : "");
                    f->line = entry->line;
                    if (!f->file) {
                        cmd_error(cmd, "out of memory");
                        rc = -1;
                    }
                }
            }
            i = end;
        }
        free(views), free(execs);
    }
    vigil_sitemap_free(&m);
    vigil_run_report_free(&r);
    return rc;
}

/* struct vigil_cmd_tool's calls(): o's calls of a function by name, UINT64_MAX when unknown. */
static uint64_t calls_of(const char *function, void *arg)
{
    const struct observation *o = arg;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->v[i].name, function))
            return o->v[i].calls;
    return UINT64_MAX;
}

static int by_calls(const void *a, const void *b)
{
    const struct observed *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* A glob that matches exactly name: fnmatch's special characters escaped. */
static void put_literal_glob(FILE *f, const char *name)
{
    for (const char *p = name; *p; p++) {
        if (*p == '*' || *p == '?' || *p == '[' || *p == '\\')
            fputc('\\', f);
        fputc(*p, f);
    }
}

static int remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return rmdir(dir);
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(path);
        else
            unlink(path);
    }
    closedir(d);
    return rmdir(dir);
}

static int parse_count(const char *cmd, const char *flag, const char *value, unsigned long long *out)
{
    char *end;
    errno = 0;
    double d = strtod(value, &end);   /* 1e6 as well as 1000000 */
    if (errno || end == value || *end || d < 0 || d > 1e18 || d != (double)(unsigned long long)d)
        return cmd_usage_error(cmd, "%s \"%s\": expected a whole number (such as 1000000 or 1e6)", flag, value);
    *out = (unsigned long long)d;
    return 0;
}

int cmd_observe(int argc, char **argv)
{
    const char *out = "vigil.conf";
    unsigned long long min_calls = 1000000, max_sites = 16;
    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--")) {
            i++;
            break;
        }
        if (arg[0] != '-')
            break;
        if (strcmp(arg, "--out") && strcmp(arg, "--min-calls") && strcmp(arg, "--max-sites"))
            return cmd_usage_error(argv[0], "unknown option \"%s\"", arg);
        if (i + 1 >= argc)
            return cmd_usage_error(argv[0], "%s expects a value", arg);
        const char *value = argv[++i];
        int rc = 0;
        if (!strcmp(arg, "--out"))
            out = value;
        else
            rc = parse_count(argv[0], arg, value, !strcmp(arg, "--min-calls") ? &min_calls : &max_sites);
        if (rc)
            return rc;
    }
    if (i >= argc)
        return cmd_usage_error(argv[0], "expected a PROGRAM to run");
    if (!*out)
        return cmd_usage_error(argv[0], "--out expects a file name");
    char **program_argv = argv + i;

    /* the program's site tables: without them a run says nothing about its functions */
    char program[PATH_MAX];
    if (strchr(program_argv[0], '/')) {
        snprintf(program, sizeof program, "%s", program_argv[0]);
    } else {
        const char *dirs = getenv("PATH");
        program[0] = '\0';
        for (const char *p = dirs ? dirs : "/usr/bin:/bin"; *p && !program[0];) {
            size_t n = strcspn(p, ":");
            snprintf(program, sizeof program, "%.*s%s%s", (int)n, p, n ? "/" : "", program_argv[0]);
            if (access(program, X_OK) != 0)
                program[0] = '\0';
            p += n + (p[n] == ':');
        }
        if (!program[0])
            return cmd_error(argv[0], "%s: not found in PATH", program_argv[0]);
    }
    struct vigil_elf_sites sites;
    char err[1024];
    if (vigil_elf_sites_load(program, &sites, err, sizeof err) != 0)
        return cmd_error(argv[0], "%s", err);
    int has_tables = sites.ntables > 0;
    vigil_elf_sites_free(&sites);
    if (!has_tables)
        return cmd_error(argv[0], "%s has no site table: build it with vigil-cc (CC=vigil-cc make) to observe it",
                         program);

    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/vigil-observe.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return cmd_error(argv[0], "cannot create a directory in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
    /* Later VIGIL_OPTIONS items win: the user's own settings stay for everything else. The
     * tools that write sections of the configuration run too (their items first: the user's
     * win), in mode=off still. */
    size_t ntools;
    const struct vigil_cmd_tool *const *tools = cmd_tool_list(&ntools);
    char names[512] = "", items[2048] = "";
    for (size_t t = 0; t < ntools; t++) {
        if (!tools[t]->observe_write)
            continue;
        size_t n = strlen(names), m = strlen(items);
        snprintf(names + n, sizeof names - n, "%s%s", n ? "," : "", tools[t]->name);
        if (tools[t]->observe_options && *tools[t]->observe_options)
            snprintf(items + m, sizeof items - m, "%s:", tools[t]->observe_options);
    }
    const char *existing = getenv("VIGIL_OPTIONS");
    char *options;
    if (asprintf(&options, "%s%s%smode=off:tools=%s:report=1:out=%s", items, existing && *existing ? existing : "",
                 existing && *existing ? ":" : "", names, dir) < 0) {
        remove_tree(dir);
        return cmd_error(argv[0], "out of memory");
    }
    setenv("VIGIL_OPTIONS", options, 1);
    free(options);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        remove_tree(dir);
        return cmd_error(argv[0], "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        execv(program, program_argv);
        fprintf(stderr, "vigil observe: cannot execute %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            remove_tree(dir);
            return cmd_error(argv[0], "waitpid: %s", strerror(errno));
        }
    char outcome[64];
    if (WIFEXITED(status))
        snprintf(outcome, sizeof outcome, "exit status %d", WEXITSTATUS(status));
    else
        snprintf(outcome, sizeof outcome, "killed by signal %d", WTERMSIG(status));

    struct observation o = {0};
    size_t reports = 0;
    int rc = 0;
    char **rundirs = NULL;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && rc == 0 && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = add_report(argv[0], path, &o);
        char **grown = rc == 0 ? realloc(rundirs, (reports + 1) * sizeof *rundirs) : NULL;
        if (rc == 0 && (!grown || !(grown[reports] = strdup(path)))) {
            rundirs = grown ? grown : rundirs;
            rc = cmd_error(argv[0], "out of memory");
            break;
        }
        rundirs = grown ? grown : rundirs;
        reports += rc == 0;
    }
    if (d)
        closedir(d);
    if (rc == 0 && reports == 0)
        rc = cmd_error(argv[0], "%s (%s) wrote no run report: it was killed before its exit, or it "
                       "closed the report with report=0", program, outcome);
    if (rc != 0)
        goto done;

    qsort(o.v, o.n, sizeof *o.v, by_calls);
    char tmpout[PATH_MAX];
    snprintf(tmpout, sizeof tmpout, "%s.tmp.%ld", out, (long)getpid());
    FILE *f = fopen(tmpout, "w");
    if (!f) {
        rc = cmd_error(argv[0], "cannot write %s: %s", tmpout, strerror(errno));
        goto done;
    }
    char date[32] = "";
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    fprintf(f, "# VIGIL_CC_CONFIG for vigil-cc (docs/config.md), written by vigil observe on %s from a run of\n#  ",
            date);
    for (char **a = program_argv; *a; a++)
        fprintf(f, " %s", *a);
    fprintf(f, "\n# (%s, %zu process%s, mode=off: dispatch checks counted; tools: %s).\n", outcome, reports,
            reports == 1 ? "" : "es", names[0] ? names : "none");
    fprintf(f, "# [skip]: hot tiny functions: entry check run at least %llu times, no loop, at most %llu sites.\n"
               "# They get no instrumented copy: no tool sees their accesses, branches or calls.\n\n[skip]\n",
            min_calls, max_sites);
    size_t skipped = 0;
    for (size_t k = 0; k < o.n; k++) {
        const struct observed *fn = &o.v[k];
        if (fn->calls < min_calls || fn->loops || fn->sites > max_sites || !strcmp(fn->name, "main"))
            continue;
        fprintf(f, "# %llu calls, %u site%s, no loop; %s:%u\nfun:", (unsigned long long)fn->calls, fn->sites,
                fn->sites == 1 ? "" : "s", fn->file[0] ? fn->file : "?", fn->line);
        put_literal_glob(f, fn->name);
        fputc('\n', f);
        skipped++;
    }
    if (!skipped)
        fprintf(f, "# (no function of the run met the rule)\n");
    for (size_t t = 0; t < ntools && rc == 0; t++)
        if (tools[t]->observe_write) {
            fputc('\n', f);
            rc = tools[t]->observe_write((const char *const *)rundirs, reports, calls_of, &o, f);
        }
    if (rc != 0) {
        fclose(f);
        unlink(tmpout);
        goto done;
    }
    if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0) {
        fclose(f);
        unlink(tmpout);
        rc = cmd_error(argv[0], "cannot write %s: %s", tmpout, strerror(errno));
        goto done;
    }
    fclose(f);
    if (rename(tmpout, out) != 0) {
        unlink(tmpout);
        rc = cmd_error(argv[0], "cannot rename %s to %s: %s", tmpout, out, strerror(errno));
        goto done;
    }
    char absolute[PATH_MAX];
    fprintf(stderr, "vigil observe: %s %s; %zu of %zu functions go to [skip] in %s\n"
            "  rebuild with: VIGIL_CC_CONFIG=%s CC=vigil-cc make\n",
            program_argv[0], outcome, skipped, o.n, out, realpath(out, absolute) ? absolute : out);
done:
    remove_tree(dir);
    for (size_t k = 0; k < reports; k++)
        free(rundirs[k]);
    free(rundirs);
    for (size_t k = 0; k < o.n; k++)
        free(o.v[k].name), free(o.v[k].file);
    free(o.v);
    return rc;
}
