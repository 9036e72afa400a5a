/* The `vigil` command: one table of the core's subcommands, plus the subcommands each tool
 * registers (cmd/cmdtool.h), drives dispatch, `vigil help` and `vigil CMD --help`. Adding a
 * core subcommand = one row here + its file cmd/<name>.c defining
 * int cmd_<name>(int argc, char **argv), where argv[0] is the subcommand's name. */
#include "cmd.h"
#include "cmdtool.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* X(name, one-line help, usage, details: every flag and an example) */
#define VIGIL_COMMANDS(X)                                                                      \
    X(run, "run a program under vigil, then summarize its run report",                         \
      "vigil run [--out DIR] [--mode MODE] [--tool NAME]... [--error-exitcode N] [--label-by CMD] [--] PROGRAM [ARGS...]", \
      "  --out DIR            where the run report goes (default ./vigil-out, or out= of VIGIL_OPTIONS)\n" \
      "  --mode MODE          adaptive (default), bursty, full or off (see `vigil options`)\n" \
      "  --tool NAME          enable an analysis tool (repeatable; `vigil tools` lists them)\n" \
      "  --error-exitcode N   exit N when the run has findings, else with the program's status\n" \
      "  --label-by CMD       an oracle: after the program, sh -c CMD reads its standard output\n" \
      "                       (which still reaches yours) with VIGIL_EXIT_STATUS, VIGIL_SIGNAL and\n" \
      "                       VIGIL_RUN_DIR set; CMD's exit status labels the run (0 success,\n" \
      "                       else failure) for the tools that take labels (preds: label.txt)\n" \
      "The program's standard output is left alone; vigil's summary goes to stderr.\n"      \
      "example: vigil run --tool leak -- ./server --port 8080")                              \
    X(report, "every tool's findings of a run: text, JSON, SARIF or a page; or a list of runs",          \
      "vigil report [--json|--sarif|--html FILE] [--suppress FILE] [RUN|DIR]",                   \
      "  RUN              a run directory (it holds run.txt); default: the newest run under\n"   \
      "                   ./vigil-out, or under out= of VIGIL_OPTIONS when set\n"                \
      "  DIR              a directory holding runs: lists them newest first (run, start, exit\n" \
      "                   status, number of findings, program)\n"                                \
      "  (no flag)        text, worst first: each finding with its stack mapped to file:line\n"  \
      "  --json           the vigil-findings JSON document (docs/formats.md, \"Findings\")\n"    \
      "  --sarif          SARIF 2.1.0, for code-scanning UIs\n"                                  \
      "  --html FILE      a self-contained page (sortable table, highlighted source), written\n"  \
      "                   atomically\n"                                                          \
      "  --suppress FILE  leave out findings matched by a line TOOL:PATTERN or *:PATTERN of FILE\n" \
      "                   ('#' comments; PATTERN, a glob, matches the function or file of any\n" \
      "                   frame or location)\n"                                                  \
      "example: vigil run --tool leak -- ./server; vigil report --suppress vigil.supp --sarif > leaks.sarif") \
    X(sites, "list the site tables compiled into a binary",                                    \
      "vigil sites [--json] [--cfg] BINARY",                                                   \
      "  --json   one JSON document instead of the table\n"                                    \
      "  --cfg    also the control-flow facts vigil-cc recorded per function\n"               \
      "example: vigil sites ./prog | head")                                                    \
    X(stats, "per dispatch check: executions, bursts and rate, with source locations",         \
      "vigil stats [--json] RUNDIR",                                                           \
      "  --json   one JSON document instead of the table\n"                                    \
      "example: vigil stats vigil-out/prog.1234")                                              \
    X(tools, "list the analysis tools and their options",                                      \
      "vigil tools",                                                                           \
      "Lists every tool built into the runtime, what it finds and its options (TOOL.key=value\n" \
      "in VIGIL_OPTIONS).\nexample: vigil tools")                                               \
    X(cache, "vigil-cc's instrumentation cache: counters, size, clear, what an entry holds",   \
      "vigil cache [--dir DIR] [--json] | vigil cache clear [--dir DIR] [--stats] | vigil cache show [--dir DIR] FILE.c", \
      "  (no action)   hits, misses and hit rate, entries and size against the limit\n"         \
      "                (VIGIL_CC_CACHE_MAX_SIZE), stored, uncached, damaged, evicted, errors\n"   \
      "  clear         remove every entry; the counters stay\n"                                 \
      "  show FILE.c   the metadata of each entry made from FILE.c: flags, vigil-cc and LLVM\n" \
      "                versions, then per function how it was compiled, its instrumented copy,\n" \
      "                sites, dispatch checks and probes (newest entry first)\n"                \
      "  --dir DIR     the cache directory (default VIGIL_CC_CACHE_DIR, else\n"                 \
      "                $XDG_CACHE_HOME/vigil, else ~/.cache/vigil)\n"                           \
      "  --json        the counters as one JSON object\n"                                       \
      "  --stats       with clear: zero the counters too\n"                                     \
      "vigil-cc fills the cache (VIGIL_CC_CACHE=0 turns it off; docs/cache.md).\n"              \
      "example: make clean && CC=vigil-cc make && vigil cache && vigil cache show src/lvm.c")    \
    X(observe, "run a program once and write a vigil-cc configuration that skips its hot tiny functions", \
      "vigil observe [--out FILE] [--min-calls N] [--max-sites N] [--] PROGRAM [ARGS...]",    \
      "  --out FILE       the configuration to write (default vigil.conf), atomically\n"      \
      "  --min-calls N    a function is hot when its entry check ran at least N times\n"       \
      "                   (default 1000000; 1e6 is accepted)\n"                                \
      "  --max-sites N    ... and tiny when it has no loop and at most N sites (default 16)\n" \
      "The program (built with vigil-cc) runs once with VIGIL_OPTIONS mode=off: every dispatch\n" \
      "check counts its executions, no tool runs. Its hot tiny functions go to [skip], each with\n" \
      "its counts as a comment; a rebuild with VIGIL_CC_CONFIG=FILE gives them no instrumented\n" \
      "copy (docs/config.md). Exits 0 when the file was written, whatever the program's status.\n" \
      "example: vigil observe --out vigil.conf -- ./lua bench.lua && VIGIL_CC_CONFIG=vigil.conf CC=vigil-cc make") \
    X(options, "list the runtime options (VIGIL_OPTIONS) with defaults and meanings",          \
      "vigil options [--markdown]",                                                            \
      "  --markdown   the table of docs/options.md (core and tool options)\n"                  \
      "example: vigil options | grep rate")

#define DECLARE_COMMAND(name, help, usage, details) int cmd_##name(int argc, char **argv);
VIGIL_COMMANDS(DECLARE_COMMAND)

#define COMMAND_ROW(name, help, usage, details) {#name, help, usage, details, cmd_##name},
static const struct vigil_cmd_command commands[] = {VIGIL_COMMANDS(COMMAND_ROW)};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* Every tool's command part: pointers placed by VIGIL_REGISTER_CMD_TOOL. Weak, so that a
 * command without any tool still links. */
extern const struct vigil_cmd_tool *const __start_vigil_cmd_tools[] __attribute__((weak));
extern const struct vigil_cmd_tool *const __stop_vigil_cmd_tools[] __attribute__((weak));

const struct vigil_cmd_tool *const *cmd_tool_list(size_t *n)
{
    *n = __start_vigil_cmd_tools ? (size_t)(__stop_vigil_cmd_tools - __start_vigil_cmd_tools) : 0;
    return __start_vigil_cmd_tools;
}

const struct vigil_cmd_tool *cmd_find_tool(const char *name)
{
    size_t n;
    const struct vigil_cmd_tool *const *t = cmd_tool_list(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i]->name, name) == 0)
            return t[i];
    return NULL;
}

/* Call fn for the core's subcommands, then each tool's, in order. */
static const struct vigil_cmd_command *each_command(int (*fn)(const struct vigil_cmd_command *, void *),
                                                    void *arg)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (fn(&commands[i], arg))
            return &commands[i];
    size_t n;
    const struct vigil_cmd_tool *const *t = cmd_tool_list(&n);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < t[i]->ncommands; k++)
            if (fn(&t[i]->commands[k], arg))
                return &t[i]->commands[k];
    return NULL;
}

static int named(const struct vigil_cmd_command *c, void *name)
{
    return strcmp(c->name, name) == 0;
}

static const struct vigil_cmd_command *find_command(const char *name)
{
    return each_command(named, (void *)name);
}

static int print_row(const struct vigil_cmd_command *c, void *out)
{
    fprintf(out, "  %-10s %s\n", c->name, c->help);
    return 0;
}

static void print_overview(FILE *out)
{
    fprintf(out, "vigil %s: always-on, low-overhead runtime monitoring of C programs\n\n"
                 "usage: vigil COMMAND [ARGS...]\n\ncommands:\n", VIGIL_VERSION);
    each_command(print_row, out);
    fprintf(out, "  %-10s %s\n\n", "help", "this list, or `vigil help COMMAND` for one command");
    fprintf(out, "Build programs with CC=vigil-cc; set runtime options with VIGIL_OPTIONS "
                 "(see `vigil options`).\n");
}

static void print_command_help(FILE *out, const struct vigil_cmd_command *c)
{
    fprintf(out, "usage: %s\n%s\n", c->usage, c->help);
    if (c->details && c->details[0])
        fprintf(out, "\n%s\n", c->details);
}

struct name_list { FILE *out; int count; };

static int print_name(const struct vigil_cmd_command *c, void *arg)
{
    struct name_list *l = arg;
    fprintf(l->out, "%s%s", l->count++ ? ", " : "", c->name);
    return 0;
}

static void print_command_names(FILE *out)
{
    struct name_list l = {out, 0};
    each_command(print_name, &l);
}

static void vprint_message(const char *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "vigil %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_message(cmd, fmt, ap);
    va_end(ap);
    const struct vigil_cmd_command *c = find_command(cmd);
    if (c)
        fprintf(stderr, "usage: %s\n", c->usage);
    return EXIT_USAGE;
}

int cmd_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_message(cmd, fmt, ap);
    va_end(ap);
    return EXIT_BAD_INPUT;
}

static int is_help_flag(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static int help(int argc, char **argv)
{
    if (argc == 0) {
        print_overview(stdout);
        return 0;
    }
    const struct vigil_cmd_command *c = find_command(argv[0]);
    if (!c || argc > 1) {
        fprintf(stderr, "vigil help: %s \"%s\"; expected one of: ", c ? "too many arguments after"
                        : "unknown command", argv[0]);
        print_command_names(stderr);
        fputc('\n', stderr);
        return EXIT_USAGE;
    }
    print_command_help(stdout, c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0) {
        printf("vigil %s\n", VIGIL_VERSION);
        return 0;
    }
    if (strcmp(name, "help") == 0 || is_help_flag(name))
        return help(argc - 2, argv + 2);
    const struct vigil_cmd_command *c = find_command(name);
    if (!c) {
        fprintf(stderr, "vigil: unknown command \"%s\"; expected one of: ", name);
        print_command_names(stderr);
        fprintf(stderr, " (or `vigil help`)\n");
        return EXIT_USAGE;
    }
    /* `vigil CMD --help` before any operand; after "--" (or a program name, for run) the
     * flag belongs to someone else. */
    if (argc > 2 && is_help_flag(argv[2])) {
        print_command_help(stdout, c);
        return 0;
    }
    return c->run(argc - 1, argv + 1);
}
