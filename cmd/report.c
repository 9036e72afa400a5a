/* vigil report [--json|--sarif|--html FILE] [--suppress FILE] [RUN]
 * Every tool's findings of a run (cmd/cmdtool.h, `findings`; the core names no tool) in one
 * model (common/findings.h): text, worst first (default), the vigil-findings JSON document,
 * SARIF 2.1.0, or the findings page. RUN defaults to the newest run under the output directory
 * (out= of VIGIL_OPTIONS, else ./vigil-out); a directory that holds runs instead of being one
 * (a run directory holds run.txt) is listed, newest first. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdtool.h"
#include "findings.h"
#include "html.h"
#include "options.h"
#include "report.h"
#include "runreport.h"

int cmd_run_findings(const char *rundir, struct vigil_findings *out)
{
    size_t n;
    const struct vigil_cmd_tool *const *tools = cmd_tool_list(&n);
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        if (tools[i]->findings && tools[i]->findings(rundir, out) != 0)
            rc = -1;
    vigil_findings_sort(out);
    return rc;
}

struct report_args {
    const char *format;         /* "text", "json", "sarif" or "html" */
    const char *html, *suppress, *target;
};

static int parse_args(int argc, char **argv, struct report_args *a)
{
    a->format = "text";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--json") == 0 || strcmp(arg, "--sarif") == 0) {
            if (strcmp(a->format, "text") != 0)
                return cmd_usage_error("report", "one of --json, --sarif and --html, not %s too", arg);
            a->format = arg + 2;
        } else if (strcmp(arg, "--html") == 0 || strncmp(arg, "--html=", 7) == 0 ||
                   strcmp(arg, "--suppress") == 0 || strncmp(arg, "--suppress=", 11) == 0) {
            int html = arg[2] == 'h';
            const char *eq = strchr(arg, '=');
            const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!value || !value[0])
                return cmd_usage_error("report", "%s expects a FILE", html ? "--html" : "--suppress");
            if (html) {
                if (strcmp(a->format, "text") != 0)
                    return cmd_usage_error("report", "one of --json, --sarif and --html, not --html too");
                a->format = "html";
                a->html = value;
            } else {
                a->suppress = value;
            }
        } else if (strcmp(arg, "--") == 0 && i + 1 < argc && !a->target && i + 2 == argc) {
            a->target = argv[++i];
        } else if (arg[0] == '-') {
            return cmd_usage_error("report", "unknown option \"%s\"", arg);
        } else if (a->target) {
            return cmd_usage_error("report", "one run (or directory of runs) expected, got \"%s\" too", arg);
        } else {
            a->target = arg;
        }
    }
    return 0;
}

static void ignore_message(void *arg, const char *msg) {}

void cmd_default_out_dir(char *buf, size_t len)
{
    struct vigil_options o;
    vigil_options_defaults(&o);
    const char *env = getenv("VIGIL_OPTIONS");
    if (env)
        vigil_options_parse(&o, env, "VIGIL_OPTIONS", ignore_message, NULL);
    snprintf(buf, len, "%s", o.out[0] ? o.out : "vigil-out");
}

static int is_run(const char *dir)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/" VIGIL_RUN_FILE, dir);
    return stat(path, &st) == 0;
}

/* The suppression file, every tool it names known. 0, or an exit status after a message. */
static int load_suppressions(const char *path, struct vigil_suppressions *s)
{
    char err[1024];
    if (vigil_suppressions_load(path, s, err, sizeof err) != 0)
        return cmd_error("report", "%s", err);
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->items[i].tool, "*") == 0 || cmd_find_tool(s->items[i].tool))
            continue;
        size_t n;
        const struct vigil_cmd_tool *const *tools = cmd_tool_list(&n);
        char names[512] = "";
        size_t used = 0;
        for (size_t k = 0; k < n && used < sizeof names; k++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s, ", tools[k]->name);
        int rc = cmd_error("report", "%s:%d: unknown tool \"%s\" (expected one of: %s*)", path, s->items[i].line,
                           s->items[i].tool, names);
        vigil_suppressions_free(s);
        return rc;
    }
    return 0;
}

/* ---- a directory of runs ---- */

struct run_entry {
    char *name, *path;
    struct vigil_run_report run;
    int loaded;                 /* run.txt read */
    char error[512];            /* why not */
    struct timespec mtime;
};

static int newest_first(const void *x, const void *y)
{
    const struct run_entry *a = x, *b = y;
    uint64_t ta = a->loaded ? a->run.start_unix_ns : (uint64_t)a->mtime.tv_sec * 1000000000ull + (uint64_t)a->mtime.tv_nsec;
    uint64_t tb = b->loaded ? b->run.start_unix_ns : (uint64_t)b->mtime.tv_sec * 1000000000ull + (uint64_t)b->mtime.tv_nsec;
    if (ta != tb)
        return ta < tb ? 1 : -1;
    return strcmp(a->name, b->name);
}

static void free_runs(struct run_entry *runs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(runs[i].name), free(runs[i].path);
        if (runs[i].loaded)
            vigil_run_report_free(&runs[i].run);
    }
    free(runs);
}

/* The runs directly under dir, newest first. 0, or -1 with a message (dir unreadable). */
static int find_runs(const char *dir, struct run_entry **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')   /* also a report still being written: .<prog>.<pid>.tmp */
            continue;
        char *path;
        struct stat st;
        if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
            break;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || !is_run(path)) {
            free(path);
            continue;
        }
        if (*n == cap) {
            struct run_entry *bigger = realloc(*out, (cap = cap ? cap * 2 : 16) * sizeof **out);
            if (!bigger) {
                free(path);
                break;
            }
            *out = bigger;
        }
        struct run_entry *r = &(*out)[(*n)++];
        memset(r, 0, sizeof *r);
        r->name = strdup(e->d_name);
        r->path = path;
        r->mtime = st.st_mtim;
        char file[4200];
        snprintf(file, sizeof file, "%s/" VIGIL_RUN_FILE, path);
        r->loaded = vigil_run_report_load(file, &r->run, r->error, sizeof r->error) == 0;
    }
    closedir(d);
    if (*n)
        qsort(*out, *n, sizeof **out, newest_first);
    return 0;
}

int cmd_newest_run(const char *dir, const char *holding, char *out, size_t len)
{
    struct run_entry *runs;
    size_t n;
    char err[512];
    if (find_runs(dir, &runs, &n, err, sizeof err) != 0)
        return -1;
    int found = -1;
    for (size_t i = 0; i < n && found != 0; i++) {
        char file[4300];
        struct stat st;
        snprintf(file, sizeof file, "%s/%s", runs[i].path, holding ? holding : VIGIL_RUN_FILE);
        if (stat(file, &st) == 0) {
            snprintf(out, len, "%s", runs[i].path);
            found = 0;
        }
    }
    free_runs(runs, n);
    return found;
}

int cmd_run_holding(const char *target, const char *holding, char *out, size_t len)
{
    char out_dir[4200], file[4400];
    if (!target) {
        cmd_default_out_dir(out_dir, sizeof out_dir);
        target = out_dir;
    }
    snprintf(file, sizeof file, "%s/%s", target, holding);
    if (access(file, F_OK) == 0) {
        snprintf(out, len, "%s", target);
        return 0;
    }
    if (cmd_newest_run(target, holding, out, len) == 0)
        return 0;
    snprintf(out, len, "%s", target);
    return -1;
}

static void status_text(const struct vigil_run_report *r, char *buf, size_t len)
{
    if (r->running) {
        snprintf(buf, len, "running");
    } else if (r->exited) {
        snprintf(buf, len, "exit %d", r->exit_status);
    } else {
        const char *abbrev = sigabbrev_np(r->signal);
        snprintf(buf, len, "signal %d%s%s%s", r->signal, abbrev ? " (SIG" : "", abbrev ? abbrev : "", abbrev ? ")" : "");
    }
}

static int list_runs(const char *dir, struct run_entry *runs, size_t n, struct vigil_suppressions *supp)
{
    int bad = 0;
    size_t wname = 3, wstatus = 6;
    for (size_t i = 0; i < n; i++) {
        char st[64];
        if (runs[i].loaded)
            status_text(&runs[i].run, st, sizeof st);
        if (strlen(runs[i].name) > wname)
            wname = strlen(runs[i].name);
        if (runs[i].loaded && strlen(st) > wstatus)
            wstatus = strlen(st);
    }
    printf("vigil report: %zu run%s in %s, newest first\n", n, n == 1 ? "" : "s", dir);
    printf("  %-*s  %-19s  %-*s  %8s  %s\n", (int)wname, "run", "started", (int)wstatus, "status", "findings",
           "program");
    for (size_t i = 0; i < n; i++) {
        const struct run_entry *r = &runs[i];
        if (!r->loaded) {
            printf("  %-*s  damaged: %s\n", (int)wname, r->name, r->error);
            bad = 1;
            continue;
        }
        char st[64], started[32], count[32];
        status_text(&r->run, st, sizeof st);
        time_t t = (time_t)(r->run.start_unix_ns / 1000000000ull);
        struct tm tm;
        strftime(started, sizeof started, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
        struct vigil_findings f;
        vigil_findings_init(&f);
        fflush(stdout);   /* a tool's message about a damaged report comes after the lines before it */
        if (cmd_run_findings(r->path, &f) != 0) {
            snprintf(count, sizeof count, "damaged");
            bad = 1;
        } else {
            if (supp)
                vigil_findings_suppress(&f, supp);
            snprintf(count, sizeof count, "%zu", f.nfindings);
        }
        vigil_findings_free(&f);
        printf("  %-*s  %-19s  %-*s  %8s  %s\n", (int)wname, r->name, started, (int)wstatus, st, count,
               r->run.program);
    }
    printf("(vigil report %s/RUN for one run's findings)\n", dir);
    return bad ? EXIT_BAD_INPUT : 0;
}

/* ---- one run ---- */

static void text_report(const char *dir, const struct vigil_run_report *run, const struct vigil_findings *f,
                        const struct vigil_suppressions *supp)
{
    char st[64], summary[1024];
    status_text(run, st, sizeof st);
    printf("vigil report: %s (%s, pid %lld, %s", dir, run->program, (long long)run->pid, st);
    if (run->tools[0])
        printf(", tools %s", run->tools);
    printf(")\n");
    vigil_findings_summary(f, 0, summary, sizeof summary);
    printf("%s", summary);
    if (f->suppressed)
        printf("; %llu suppressed", (unsigned long long)f->suppressed);
    putchar('\n');
    if (!run->tools[0])
        printf("note: the run enabled no analysis tool (vigil run --tool NAME; `vigil tools` lists them)\n");
    vigil_findings_write_text(stdout, f);
    if (supp && f->suppressed) {
        printf("\nsuppressions used (%s):\n", supp->name);
        for (size_t i = 0; i < supp->n; i++)
            if (supp->items[i].hits)
                printf("  %6llu  %s:%s  (line %d)\n", (unsigned long long)supp->items[i].hits, supp->items[i].tool,
                       supp->items[i].pattern, supp->items[i].line);
    }
}

static int report_run(const char *dir, const struct report_args *a, struct vigil_suppressions *supp)
{
    char file[4200], err[1024];
    snprintf(file, sizeof file, "%s/" VIGIL_RUN_FILE, dir);
    struct vigil_run_report run;
    if (vigil_run_report_load(file, &run, err, sizeof err) != 0) {
        vigil_run_report_free(&run);
        return cmd_error("report", "%s", err);
    }
    struct vigil_findings f;
    vigil_findings_init(&f);
    int rc = 0;
    if (cmd_run_findings(dir, &f) != 0)
        rc = cmd_error("report", "%s: a tool's report is damaged (the message above names it)", dir);
    else if (vigil_findings_set_run(&f, dir, run.program) != 0)
        rc = cmd_error("report", "out of memory");
    if (!rc && supp)
        vigil_findings_suppress(&f, supp);
    if (rc) {
    } else if (strcmp(a->format, "json") == 0) {
        vigil_findings_write_json(stdout, &f, 1);
    } else if (strcmp(a->format, "sarif") == 0) {
        vigil_findings_write_sarif(stdout, &f, VIGIL_VERSION);
    } else if (strcmp(a->format, "html") == 0) {
        char summary[1024], st[64], suppressed[64] = "", *title = NULL, *intro = NULL;
        vigil_findings_summary(&f, 0, summary, sizeof summary);
        status_text(&run, st, sizeof st);
        if (f.suppressed)
            snprintf(suppressed, sizeof suppressed, "; %llu suppressed", (unsigned long long)f.suppressed);
        if (asprintf(&title, "vigil report: %s", run.program) < 0)
            title = NULL;
        if (asprintf(&intro, "Run %s: %s, pid %lld, %s%s%s.\n%s%s.", dir, run.program, (long long)run.pid, st,
                     run.tools[0] ? ", tools " : ", no analysis tool enabled", run.tools, summary, suppressed) < 0)
            intro = NULL;
        if (!title || !intro)
            rc = cmd_error("report", "out of memory");
        else if (cmd_findings_page(a->html, &f, title, intro, err, sizeof err) != 0)
            rc = cmd_error("report", "%s", err);
        else
            printf("vigil report: wrote %s: %s\n", a->html, summary);
        free(title);
        free(intro);
    } else {
        text_report(dir, &run, &f, supp);
    }
    vigil_findings_free(&f);
    vigil_run_report_free(&run);
    if (!rc && fflush(stdout) != 0)
        rc = cmd_error("report", "writing the output: %s", strerror(errno));
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct report_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    struct vigil_suppressions supp, *s = NULL;
    if (a.suppress) {
        if ((rc = load_suppressions(a.suppress, &supp)) != 0)
            return rc;
        s = &supp;
    }
    char out_dir[VIGIL_OPT_STRING_MAX + 32];
    const char *target = a.target;
    if (!target) {
        cmd_default_out_dir(out_dir, sizeof out_dir);
        target = out_dir;
    }
    struct stat st;
    if (stat(target, &st) != 0) {
        rc = a.target ? cmd_error("report", "%s: %s", target, strerror(errno))
                      : cmd_error("report", "no runs: %s: %s (run a program with `vigil run`, or name a run)",
                                  target, strerror(errno));
    } else if (!S_ISDIR(st.st_mode)) {
        rc = cmd_error("report", "%s: not a directory (expected a run directory, which holds " VIGIL_RUN_FILE
                       ", or a directory of runs)", target);
    } else if (is_run(target)) {
        rc = report_run(target, &a, s);
    } else {
        struct run_entry *runs;
        size_t n;
        char err[1024];
        if (find_runs(target, &runs, &n, err, sizeof err) != 0) {
            rc = cmd_error("report", "%s", err);
        } else if (n == 0) {
            rc = cmd_error("report", "%s: not a run (no " VIGIL_RUN_FILE ") and holds no runs", target);
        } else if (!a.target) {
            rc = runs[0].loaded ? report_run(runs[0].path, &a, s) : cmd_error("report", "%s", runs[0].error);
        } else if (strcmp(a.format, "text") != 0) {
            rc = cmd_usage_error("report", "%s holds %zu runs: --%s needs one of them (vigil report %s/%s)", target,
                                 n, a.format, target, runs[0].name);
        } else {
            rc = list_runs(target, runs, n, s);
        }
        free_runs(runs, n);
    }
    if (s)
        vigil_suppressions_free(s);
    return rc;
}
