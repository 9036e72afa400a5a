/* The `vigil` command: one table of subcommands drives dispatch, `vigil help` and
 * `vigil help CMD`. Adding a subcommand = one row here + its file cmd/<name>.c defining
 * int cmd_<name>(int argc, char **argv), where argv[0] is the subcommand's name. */
#include "cmd.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* X(name, one-line help, usage) */
#define VIGIL_COMMANDS(X)                                                                      \
    X(run, "run a program under vigil, then summarize its run report",                         \
      "vigil run [--out DIR] [--mode MODE] [--tool NAME]... [--] PROGRAM [ARGS...]")            \
    X(sites, "list the site tables compiled into a binary",                                    \
      "vigil sites [--json] [--cfg] BINARY")                                                           \
    X(stats, "per dispatch check: executions, bursts and rate, with source locations",         \
      "vigil stats [--json] RUNDIR")                                                           \
    X(tools, "list the analysis tools built into the runtime (tools=NAME,... in VIGIL_OPTIONS)",  \
      "vigil tools")                                                                          \
    X(options, "list the runtime options (VIGIL_OPTIONS) with defaults and meanings",          \
      "vigil options [--markdown]")                                                           \
    X(leaks, "leak report of a run (tools=leak): worst first, mapped to source",               \
      "vigil leaks [--json|--sarif] [--suppress FILE] [--all] RUNDIR")                         \
    X(html, "a self-contained page of a leak report: sortable table, highlighted source",     \
      "vigil html [--suppress FILE] [--all] RUNDIR -o PAGE.html")                               \
    X(ingest, "load feedback reports (tools=preds) into the report store",                    \
      "vigil ingest [--db FILE|postgresql://...] [--quiet] DIR...")                            \
    X(rank, "predicates most predictive of failure, from the report store",                    \
      "vigil rank [--db FILE|URL] [--top N] [--json] [--by failcount|increase|importance|ttest|eliminate]") \
    X(plan, "next plan of adaptive bug isolation: which predicate sites to count (VIGIL_PLAN)",  \
      "vigil plan [--db FILE|URL] [--heuristic failcount|importance|maxImportance|ttest|bfs|random] [--direction forward] [--confidence X] [--state FILE] BINARY -o PLAN.vplan")

#define DECLARE_COMMAND(name, help, usage) int cmd_##name(int argc, char **argv);
VIGIL_COMMANDS(DECLARE_COMMAND)

struct command {
    const char *name, *help, *usage;
    int (*run)(int argc, char **argv);
};

#define COMMAND_ROW(name, help, usage) {#name, help, usage, cmd_##name},
static const struct command commands[] = {VIGIL_COMMANDS(COMMAND_ROW)};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const struct command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void print_overview(FILE *out)
{
    fprintf(out, "vigil %s: always-on, low-overhead runtime monitoring of C programs\n\n"
                 "usage: vigil COMMAND [ARGS...]\n\ncommands:\n", VIGIL_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "  %-10s %s\n\n", "help", "this list, or `vigil help COMMAND` for one command");
    fprintf(out, "Build programs with CC=vigil-cc; set runtime options with VIGIL_OPTIONS "
                 "(see `vigil options`).\n");
}

static void print_command_help(FILE *out, const struct command *c)
{
    fprintf(out, "usage: %s\n%s\n", c->usage, c->help);
}

static void print_command_names(FILE *out)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "%s%s", i ? ", " : "", commands[i].name);
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
    const struct command *c = find_command(cmd);
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
    const struct command *c = find_command(argv[0]);
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
    const struct command *c = find_command(name);
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
