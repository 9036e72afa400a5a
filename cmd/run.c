/* vigil run [--out DIR] [--mode M] [--tool NAME]... [--error-exitcode N] [--label-by CMD] [--]
 *           PROGRAM [ARGS...]
 * Runs the program with VIGIL_OPTIONS set (preloading libvigil.so when the program was not
 * built with vigil-cc), forwards SIGINT/SIGTERM, then prints a one-screen summary from the run
 * report and its findings (every tool's, cmd/report.h) on stderr: the program's standard
 * output is its own (`vigil run -- gzip -c f > f.gz`). When the run has findings, the last line
 * is "SUMMARY: vigil: N findings (TOOL: ...)".
 * Exits with the program's own status (128+signal when it was killed); with --error-exitcode N
 * (1-255), with N instead when the run has findings or a tool's report of it is damaged. No
 * suppression file applies here: every finding the tools report counts (`vigil report
 * --suppress FILE` filters afterwards). A run that wrote no report has no findings. An unknown
 * --tool name is rejected before anything runs.
 * --label-by CMD: an oracle. The program's standard output passes through vigil (copied to
 * vigil's own standard output as it comes, and kept in an unlinked temporary file); after the
 * program ends, `/bin/sh -c CMD` runs with that output on its standard input, its own standard
 * output sent to stderr, and VIGIL_EXIT_STATUS (the program's status, 128+signal when killed),
 * VIGIL_SIGNAL (the signal number, when killed) and VIGIL_RUN_DIR (the run report) in its
 * environment. CMD's exit status labels the run: 0 a success, any other a failure; every tool
 * that takes labels (cmdtool.h, label_run) records it in the run directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdtool.h"
#include "findings.h"
#include "report.h"
#include "symbolize.h"
#include "elfsites.h"
#include "options.h"
#include "sitemap.h"

#define HOTTEST_SHOWN 5
#define EXIT_NOT_FOUND 127   /* as shells report a program that cannot be executed */

struct run_args {
    const char *out, *mode;
    char tools[VIGIL_OPT_STRING_MAX];
    int error_exitcode;         /* 0: the program's status whatever the findings */
    const char *label_by;       /* --label-by CMD, or NULL */
    char **program_argv;
};

static volatile sig_atomic_t child_pid;

/* Forward signals sent to vigil itself (kill, a supervisor). A terminal's ^C already reaches
 * the whole foreground process group, child included: forwarding it would deliver it twice. */
static void forward_signal(int sig, siginfo_t *info, void *context)
{
    if (child_pid > 0 && info->si_code != SI_KERNEL)
        kill((pid_t)child_pid, sig);
}

/* Every name of a --tool value (NAME or NAME,NAME) is a tool of this build; 0, or an exit
 * status after a message listing the tools. */
static int check_tools(const char *cmd, const char *value)
{
    for (const char *p = value; *p;) {
        size_t n = strcspn(p, ",");
        char name[VIGIL_OPT_STRING_MAX];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        if (!cmd_find_tool(name)) {
            size_t count;
            const struct vigil_cmd_tool *const *tools = cmd_tool_list(&count);
            char names[512] = "";
            size_t used = 0;
            for (size_t k = 0; k < count && used < sizeof names; k++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "", tools[k]->name);
            return cmd_usage_error(cmd, "--tool \"%s\": unknown tool; expected one of: %s (nothing was run)", name,
                                   count ? names : "(none built in)");
        }
        p += n + (p[n] == ',');
    }
    return 0;
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-')
            break;
        if (strcmp(arg, "--error-exitcode") == 0 || strncmp(arg, "--error-exitcode=", 17) == 0) {
            const char *value = arg[16] == '=' ? arg + 17 : i + 1 < argc ? argv[++i] : NULL;
            char *end;
            long n = value ? strtol(value, &end, 10) : -1;
            if (!value || !value[0] || *end || n < 1 || n > 255)
                return cmd_usage_error(argv[0], "--error-exitcode %s: expected an exit status from 1 to 255",
                                       value ? value : "(missing)");
            a->error_exitcode = (int)n;
            continue;
        }
        if (strcmp(arg, "--label-by") == 0 || strncmp(arg, "--label-by=", 11) == 0) {
            const char *value = arg[10] == '=' ? arg + 11 : i + 1 < argc ? argv[++i] : NULL;
            if (!value || !value[strspn(value, " \t")])
                return cmd_usage_error(argv[0], "--label-by expects a shell command (the oracle: exit 0 "
                                       "for a success, non-zero for a failure)");
            a->label_by = value;
            continue;
        }
        int takes_value = !strcmp(arg, "--out") || !strcmp(arg, "--mode") || !strcmp(arg, "--tool");
        if (!takes_value)
            return cmd_usage_error(argv[0], "unknown option \"%s\"", arg);
        if (i + 1 >= argc)
            return cmd_usage_error(argv[0], "%s expects a value", arg);
        const char *value = argv[++i];
        /* ':' separates VIGIL_OPTIONS items, so it cannot appear inside a value. */
        if (strchr(value, ':') || value[0] == '\0')
            return cmd_usage_error(argv[0], "%s \"%s\": expected a non-empty value without ':'",
                                   arg, value);
        if (!strcmp(arg, "--out")) {
            a->out = value;
        } else if (!strcmp(arg, "--mode")) {
            struct vigil_options scratch;
            char why[160];
            vigil_options_defaults(&scratch);
            if (vigil_options_set(&scratch, "mode", value, why, sizeof why) != 0)
                return cmd_usage_error(argv[0], "--mode %s: %s", value, why);
            a->mode = value;
        } else {
            int rc = check_tools(argv[0], value);
            if (rc)
                return rc;
            size_t used = strlen(a->tools);
            if (used + strlen(value) + 2 > sizeof a->tools)
                return cmd_usage_error(argv[0], "too many --tool names");
            snprintf(a->tools + used, sizeof a->tools - used, "%s%s", used ? "," : "", value);
        }
    }
    if (i >= argc)
        return cmd_usage_error(argv[0], "expected a PROGRAM to run");
    a->program_argv = argv + i;
    return 0;
}

/* The file execvp would run, or -1 when there is none. */
static int find_program(const char *name, char *path, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(path, len, "%s", name);
        return access(path, X_OK);
    }
    const char *dirs = getenv("PATH");
    if (!dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    while (*dirs) {
        size_t n = strcspn(dirs, ":");
        snprintf(path, len, "%.*s%s%s", (int)n, dirs, n ? "/" : "", name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
            return 0;
        dirs += n + (dirs[n] == ':');
    }
    return -1;
}

/* Append "key=value" to VIGIL_OPTIONS: later items win, so the user's own settings stay in
 * force for everything vigil run does not set. */
static int append_option(char **options, const char *key, const char *value)
{
    char *joined;
    if (asprintf(&joined, "%s%s%s=%s", *options, **options ? ":" : "", key, value) < 0)
        return -1;
    free(*options);
    *options = joined;
    return 0;
}

int cmd_runtime_library(char *path, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    char joined[PATH_MAX + 32];
    snprintf(joined, sizeof joined, "%s/../lib/libvigil.so", self);
    if (!realpath(joined, path) || access(path, R_OK) != 0) {
        snprintf(path, len, "%s", joined);
        return -1;
    }
    return 0;
}

static void label_outcome(int status, char *buf, size_t len)
{
    if (WIFEXITED(status)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
    } else {
        int sig = WTERMSIG(status);
        const char *abbrev = sigabbrev_np(sig);
        snprintf(buf, len, "killed by signal %d (%s%s: %s)%s", sig, abbrev ? "SIG" : "",
                 abbrev ? abbrev : "?", strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
    }
}

/* Is name "<prog>.<pid>" or "<prog>.<pid>.<n>" (the runtime's name when <prog>.<pid> is taken
 * by an older report of a recycled pid)? */
static int report_name_matches(const char *name, pid_t pid)
{
    char pid_text[24];
    int plen = snprintf(pid_text, sizeof pid_text, ".%d", (int)pid);
    if (name[0] == '.')   /* hidden: a report still being written */
        return 0;
    for (const char *p = strstr(name, pid_text); p; p = strstr(p + 1, pid_text)) {
        const char *rest = p + plen;
        if (*rest == '\0')
            return 1;
        if (*rest == '.' && rest[1] && strspn(rest + 1, "0123456789") == strlen(rest + 1))
            return 1;
    }
    return 0;
}

/* When the report in dir was begun: the start_unix_ns of its run.txt (the runtime's
 * CLOCK_REALTIME when the process started), or, when run.txt cannot be read (a damaged report,
 * shown as such), the directory's modification time. Returns 0 when dir is a report of pid
 * begun at or after the run started (`started`, read before the fork with the same clock;
 * `started_coarse`, with the coarse clock the kernel stamps files with), and its time in *when. */
static int report_begun_since(const char *dir, pid_t pid, const struct timespec *started,
                              const struct timespec *started_coarse, uint64_t *when)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return -1;
    struct vigil_run_report r;
    char err[256];
    int loaded = vigil_run_report_load(dir, &r, err, sizeof err) == 0;
    int rc;
    if (loaded) {
        /* Not the directory's timestamp: the kernel stamps it with a clock that lags
         * CLOCK_REALTIME by up to a tick (more in a busy virtual machine), so a report written
         * within that time of `started` looked older than the run and was passed over. */
        uint64_t since = (uint64_t)started->tv_sec * 1000000000u + (uint64_t)started->tv_nsec;
        *when = r.start_unix_ns;
        rc = r.pid == pid && r.start_unix_ns >= since ? 0 : -1;
    } else {
        *when = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
        rc = st.st_mtim.tv_sec > started_coarse->tv_sec ||
             (st.st_mtim.tv_sec == started_coarse->tv_sec && st.st_mtim.tv_nsec >= started_coarse->tv_nsec) ? 0 : -1;
    }
    vigil_run_report_free(&r);
    return rc;
}

/* The report this run wrote: a complete directory named after the pid, begun since the run
 * started (an older one may be left by a process that had the same pid), preferring the
 * program's own name (the process may have exec'd another program, which keeps the pid). */
static int find_report(const char *out, const char *program, pid_t pid, const struct timespec *started,
                       const struct timespec *started_coarse, char *path, size_t len)
{
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    size_t blen = strlen(base);
    DIR *d = opendir(out);
    if (!d)
        return -1;
    int best_rank = -1;
    uint64_t best_time = 0;
    for (struct dirent *e; (e = readdir(d)); ) {
        if (!report_name_matches(e->d_name, pid))
            continue;
        char candidate[PATH_MAX];
        uint64_t when;
        snprintf(candidate, sizeof candidate, "%s/%s", out, e->d_name);
        if (report_begun_since(candidate, pid, started, started_coarse, &when) != 0)
            continue;
        int rank = strncmp(e->d_name, base, blen) == 0 && e->d_name[blen] == '.';
        if (rank > best_rank || (rank == best_rank && when > best_time)) {
            best_rank = rank;
            best_time = when;
            snprintf(path, len, "%s", candidate);
        }
    }
    closedir(d);
    return best_rank < 0 ? -1 : 0;
}

static const char *report_option(const struct vigil_run_report *r, const char *name)
{
    for (size_t i = 0; i < r->noptions; i++)
        if (!strcmp(r->option_names[i], name))
            return r->option_values[i];
    return NULL;
}

/* The crash site: the faulting instruction mapped to source through the file's debug info. */
static void print_crash_site(FILE *out, const struct vigil_run_report *r)
{
    if (!r->has_crash)
        return;
    const char *sig = sigabbrev_np(r->crash_signal);
    fprintf(out, "  crash       SIG%s at ", sig ? sig : "?");
    char err[512];
    struct vigil_symbolizer *s = r->crash_path[0] ? vigil_symbolizer_open(r->crash_path, err, sizeof err) : NULL;
    struct vigil_source_location loc;
    if (s && vigil_symbolize_file_offset(s, r->crash_file_offset, &loc) == 0) {
        fprintf(out, "%s", loc.function[0] ? loc.function : "?");
        if (loc.file[0])
            fprintf(out, "  %s:%d", loc.file, loc.line);
        fprintf(out, "  (%s+0x%llx)\n", r->crash_path, (unsigned long long)r->crash_file_offset);
    } else {
        fprintf(out, "pc 0x%llx in %s+0x%llx (no symbols)\n", (unsigned long long)r->crash_pc,
               r->crash_path[0] ? r->crash_path : "anonymous memory",
               (unsigned long long)r->crash_file_offset);
    }
    if (s)
        vigil_symbolizer_close(s);
}

/* The findings line(s) of the summary; the number of findings, or -1 when a tool's report is
 * damaged (the tool said so). *summary gets "N findings (TOOL: ...)". */
static long print_findings(FILE *out, const char *report_path, const struct vigil_run_report *r,
                           char *summary, size_t len)
{
    struct vigil_findings f;
    vigil_findings_init(&f);
    fflush(out);
    int damaged = cmd_run_findings(report_path, &f) != 0;
    long n = damaged ? -1 : (long)f.nfindings;
    char per_tool[1024];
    vigil_findings_summary(&f, 1, per_tool, sizeof per_tool);
    vigil_findings_summary(&f, 0, summary, len);
    if (damaged)
        fprintf(out, "  findings    unreadable: a tool's report is damaged (see above)\n");
    else if (f.nfindings)
        fprintf(out, "  findings    %s  (vigil report %s)\n", per_tool, report_path);
    else if (r->tools[0])
        fprintf(out, "  findings    none (tools %s)\n", r->tools);
    vigil_findings_free(&f);
    return n;
}

static void print_summary(FILE *out, const char *report_path, const struct vigil_run_report *r)
{
    const char *mode = report_option(r, "mode"), *floor_text = report_option(r, "rate_floor");
    double floor = floor_text ? strtod(floor_text, NULL) : 0.0;
    uint64_t total_sites = 0, execs = 0;
    size_t at_full = 0, at_floor = 0;
    for (size_t i = 0; i < r->nmodules; i++)
        total_sites += r->modules[i].nsites;
    for (size_t i = 0; i < r->nsites; i++) {
        execs += r->sites[i].execs;
        if (r->sites[i].rate >= 1.0)
            at_full++;
        else if (r->sites[i].rate <= floor * (1 + 1e-9))
            at_floor++;
    }
    char floor_rate[32];
    vigil_format_rate(floor, floor_rate, sizeof floor_rate);
    fprintf(out, "  mode        %s%s%s\n", mode ? mode : "?", r->tools[0] ? ", tools " : "", r->tools);
    print_crash_site(out, r);
    if (r->nmodules == 0) {
        fprintf(out, "  checks      none: no module built with vigil-cc was loaded (rare events only)\n");
        fprintf(out, "  report      %s\n", report_path);
        return;
    }
    fprintf(out, "  checks      %zu dispatch checks executed (of %llu sites in %zu module%s), "
           "%llu executions, %llu bursts\n", r->nsites, (unsigned long long)total_sites,
           r->nmodules, r->nmodules == 1 ? "" : "s", (unsigned long long)execs,
           (unsigned long long)r->bursts_total);
    fprintf(out, "  rates       %zu at 100%%, %zu intermediate, %zu at the floor (%s)\n", at_full,
           r->nsites - at_full - at_floor, at_floor, floor_rate);

    size_t *order = vigil_sites_by_execs(r);
    struct vigil_sitemap m;
    if (order && r->nsites && vigil_sitemap_build(r, &m) == 0) {
        fprintf(out, "  hottest     %8s %14s %10s  %-8s  %s\n", "rate", "executions", "bursts", "kind",
               "function  location");
        for (size_t k = 0; k < r->nsites && k < HOTTEST_SHOWN; k++) {
            const struct vigil_run_site *s = &r->sites[order[k]];
            char rate[32];
            struct vigil_site_view v;
            vigil_format_rate(s->rate, rate, sizeof rate);
            fprintf(out, "              %8s %14llu %10llu  %-8s  ", rate, (unsigned long long)s->execs,
                   (unsigned long long)s->bursts,
                   vigil_site_kind_name((enum vigil_site_kind)s->kind));
            if (vigil_sitemap_lookup(&m, s->module, s->index, &v) == 0) {
                fprintf(out, "%s  %s", vigil_site_source_function(&v), v.file[0] ? v.file : "?");
                if (v.line)
                    fprintf(out, ":%u", v.line);
                fputc('\n', out);
            } else {
                fprintf(out, "(module %u, local %u: %s)\n", s->module, s->index,
                       m.modules[s->module].problem);
            }
        }
        vigil_sitemap_free(&m);
    }
    free(order);
    fprintf(out, "  report      %s  (vigil stats %s)\n", report_path, report_path);
}

static void ignore_message(void *arg, const char *msg) {}

/* Prepare the environment; returns 0, or an exit status. */
static int prepare_environment(const char *cmd, const struct run_args *a, const char *program,
                               char *out_dir, size_t out_len)
{
    const char *existing = getenv("VIGIL_OPTIONS");
    char *options = strdup(existing ? existing : "");
    if (!options || (a->out && append_option(&options, "out", a->out)) ||
        (a->mode && append_option(&options, "mode", a->mode)) ||
        (a->tools[0] && append_option(&options, "tools", a->tools)))
        return cmd_error(cmd, "out of memory");
    /* Where the report will go: the runtime's own parser decides, errors are its to report. */
    struct vigil_options effective;
    vigil_options_defaults(&effective);
    vigil_options_parse(&effective, options, "VIGIL_OPTIONS", ignore_message, NULL);
    snprintf(out_dir, out_len, "%s", effective.out);
    setenv("VIGIL_OPTIONS", options, 1);
    free(options);

    struct vigil_elf_sites sites;
    char err[512];
    int instrumented = vigil_elf_sites_load(program, &sites, err, sizeof err) == 0 &&
                       (sites.has_section || sites.has_runtime_symbol);
    if (instrumented)
        vigil_elf_sites_free(&sites);
    if (instrumented)
        return 0;
    char lib[PATH_MAX];
    if (cmd_runtime_library(lib, sizeof lib) != 0)
        return cmd_error(cmd, "%s was not built with vigil-cc and the runtime to preload is "
                         "missing: expected %s", program, lib);
    const char *preload = getenv("LD_PRELOAD");
    char *joined;
    if (asprintf(&joined, "%s%s%s", lib, preload && *preload ? ":" : "", preload ? preload : "") < 0)
        return cmd_error(cmd, "out of memory");
    setenv("LD_PRELOAD", joined, 1);
    free(joined);
    fprintf(stderr, "vigil run: %s was not built with vigil-cc: preloading %s (rare events "
            "only, no dispatch checks)\n", program, lib);
    return 0;
}

/* Copy the program's output from fd `from` to our standard output (as long as it takes it)
 * and to `keep`, until every writer has closed it. When our standard output goes away (EPIPE,
 * `vigil run ... | head`), the pipe is closed so that the program meets the EPIPE it would
 * have met, and what it wrote so far is kept. -1 when `keep` cannot be written. */
static int pass_output(int from, int keep, const char *cmd)
{
    char buf[65536];
    int forward = 1, rc = 0;
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t done = 0, w; forward && done < n; done += w) {
            w = write(STDOUT_FILENO, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                w = 0;
            else if (w < 0)
                forward = 0;
        }
        for (ssize_t done = 0, w; rc == 0 && done < n; done += w) {
            w = write(keep, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                w = 0;
            else if (w < 0) {
                cmd_error(cmd, "--label-by: cannot keep the program's output: %s", strerror(errno));
                rc = -1;
            }
        }
        if (!forward)
            break;
    }
    close(from);
    return rc;
}

/* Run the oracle on the program's output (in `kept`); its exit status, or -1 after a message
 * when it could not run or was killed. */
static int run_oracle(const char *cmd, const char *oracle, int kept, int status, const char *report_path)
{
    if (lseek(kept, 0, SEEK_SET) != 0)
        return cmd_error(cmd, "--label-by: cannot reread the program's output: %s", strerror(errno)), -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cmd_error(cmd, "--label-by: fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        char text[16];
        snprintf(text, sizeof text, "%d", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        setenv("VIGIL_EXIT_STATUS", text, 1);
        if (WIFSIGNALED(status)) {
            snprintf(text, sizeof text, "%d", WTERMSIG(status));
            setenv("VIGIL_SIGNAL", text, 1);
        } else {
            unsetenv("VIGIL_SIGNAL");
        }
        if (report_path)
            setenv("VIGIL_RUN_DIR", report_path, 1);
        else
            unsetenv("VIGIL_RUN_DIR");
        signal(SIGPIPE, SIG_DFL);
        if (dup2(kept, STDIN_FILENO) < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            _exit(126);
        close(kept);
        execl("/bin/sh", "sh", "-c", oracle, (char *)NULL);
        fprintf(stderr, "vigil run: --label-by: cannot execute /bin/sh: %s\n", strerror(errno));
        _exit(126);
    }
    int oracle_status;
    while (waitpid(pid, &oracle_status, 0) < 0) {
        if (errno != EINTR)
            return cmd_error(cmd, "--label-by: waitpid: %s", strerror(errno)), -1;
    }
    if (!WIFEXITED(oracle_status)) {
        int sig = WTERMSIG(oracle_status);
        return cmd_error(cmd, "--label-by \"%s\" was killed by signal %d (%s): the run is not labelled",
                         oracle, sig, strsignal(sig)), -1;
    }
    return WEXITSTATUS(oracle_status);
}

/* Give the oracle's verdict to every tool that takes labels; prints the summary's label line. */
static void label_run(FILE *out, const char *oracle, int oracle_status, const char *report_path)
{
    int failed = oracle_status != 0;
    if (!report_path) {
        fprintf(out, "  label       %s (--label-by exited with %d), not recorded: no run report\n",
                failed ? "failure" : "success", oracle_status);
        return;
    }
    size_t count, recorded = 0;
    const struct vigil_cmd_tool *const *tools = cmd_tool_list(&count);
    for (size_t k = 0; k < count; k++) {
        char err[512];
        if (!tools[k]->label_run)
            continue;
        if (tools[k]->label_run(report_path, failed, err, sizeof err) != 0)
            fprintf(out, "vigil run: --label-by: %s: cannot record the label: %s\n", tools[k]->name, err);
        else
            recorded++;
    }
    fprintf(out, "  label       %s (--label-by exited with %d)%s\n", failed ? "failure" : "success",
            oracle_status, recorded ? "" : ", not recorded: no tool takes labels");
}

int cmd_run(int argc, char **argv)
{
    struct run_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    const char *name = a.program_argv[0];
    char program[PATH_MAX], out_dir[VIGIL_OPT_STRING_MAX];
    if (find_program(name, program, sizeof program) != 0) {
        cmd_error(argv[0], "%s: %s", name, strchr(name, '/') ? strerror(errno)
                  : "not found in PATH");
        return EXIT_NOT_FOUND;
    }
    rc = prepare_environment(argv[0], &a, program, out_dir, sizeof out_dir);
    if (rc)
        return rc;

    struct sigaction forward = {.sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO};
    sigemptyset(&forward.sa_mask);
    struct timespec start, end, wall_start, wall_start_coarse;
    clock_gettime(CLOCK_REALTIME_COARSE, &wall_start_coarse);
    clock_gettime(CLOCK_REALTIME, &wall_start);
    clock_gettime(CLOCK_MONOTONIC, &start);
    int out_pipe[2] = {-1, -1}, kept = -1;
    if (a.label_by) {
        const char *tmpdir = getenv("TMPDIR");
        char kept_path[PATH_MAX];
        snprintf(kept_path, sizeof kept_path, "%s/vigil-run-output.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
        kept = mkostemp(kept_path, O_CLOEXEC);
        if (kept < 0)
            return cmd_error(argv[0], "--label-by: cannot create %s: %s", kept_path, strerror(errno));
        unlink(kept_path);
        if (pipe2(out_pipe, O_CLOEXEC) != 0)
            return cmd_error(argv[0], "--label-by: pipe: %s", strerror(errno));
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return cmd_error(argv[0], "fork: %s", strerror(errno));
    if (pid == 0) {
        if (a.label_by && dup2(out_pipe[1], STDOUT_FILENO) < 0)
            _exit(EXIT_NOT_FOUND);
        execv(program, a.program_argv);
        fprintf(stderr, "vigil run: cannot execute %s: %s\n", program, strerror(errno));
        _exit(EXIT_NOT_FOUND);
    }
    child_pid = pid;
    sigaction(SIGINT, &forward, NULL);
    sigaction(SIGTERM, &forward, NULL);
    sigaction(SIGHUP, &forward, NULL);
    if (a.label_by) {
        signal(SIGPIPE, SIG_IGN);   /* our standard output closing is pass_output's to handle */
        close(out_pipe[1]);
        if (pass_output(out_pipe[0], kept, argv[0]) != 0)
            close(kept), kept = -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return cmd_error(argv[0], "waitpid: %s", strerror(errno));
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    child_pid = 0;
    double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;

    char outcome[256], report_path[PATH_MAX];
    label_outcome(status, outcome, sizeof outcome);
    int own_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fflush(NULL);
    FILE *out = stderr;   /* the program's standard output is its own */
    fprintf(out, "vigil run: %s %s\n  duration    %.3f s\n", name, outcome, seconds);
    int have_report = find_report(out_dir, program, pid, &wall_start, &wall_start_coarse, report_path, sizeof report_path) == 0;
    if (a.label_by && kept >= 0) {
        int oracle_status = run_oracle(argv[0], a.label_by, kept, status, have_report ? report_path : NULL);
        if (oracle_status >= 0)
            label_run(out, a.label_by, oracle_status, have_report ? report_path : NULL);
    }
    if (kept >= 0)
        close(kept);
    if (!have_report) {
        fprintf(out, "  report      none in %s/ (report=0, or the process was killed before it "
                "could write one)\n", out_dir);
        return own_status;
    }
    struct vigil_run_report r;
    char err[1024];
    if (vigil_run_report_load(report_path, &r, err, sizeof err) != 0) {
        fprintf(out, "  report      unreadable: %s\n", err);
        vigil_run_report_free(&r);
        return a.error_exitcode ? a.error_exitcode : own_status;
    }
    print_summary(out, report_path, &r);
    char summary[1024];
    long findings = print_findings(out, report_path, &r, summary, sizeof summary);
    vigil_run_report_free(&r);
    if (findings > 0)
        fprintf(out, "SUMMARY: vigil: %s\n", summary);
    else if (findings < 0)
        fprintf(out, "SUMMARY: vigil: a tool's report of the run is damaged (%s)\n", report_path);
    return findings != 0 && a.error_exitcode ? a.error_exitcode : own_status;
}
