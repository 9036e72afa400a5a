/* The leak tool's part of the `vigil` command: its subcommands and its findings. */
#include "cmd.h"
#include "cmdtool.h"

#define VIGIL_OPTSET_TOOL leak
#define VIGIL_OPTSET_ROWS "tools/leak/options.inc"
#include "optset.h"

int cmd_leaks(int argc, char **argv);
int cmd_html(int argc, char **argv);
int leak_findings(const char *rundir, struct vigil_findings *out);

static const struct vigil_cmd_command leak_commands[] = {
    {"leaks", "leak report of a run (tools=leak): worst first, mapped to source",
     "vigil leaks [--json|--sarif] [--suppress FILE] [--all] [RUNDIR|OUTDIR]",
     "  --json           the leak report as JSON (schema in docs/formats.md)\n"
     "  --sarif          SARIF 2.1.0, for code-scanning UIs\n"
     "  --suppress FILE  suppressions, one per line: leak:PATTERN (any frame), function:PATTERN or file:PATTERN\n"
     "  --all            also the groups that are suppressed or not worth reporting\n"
     "  RUNDIR|OUTDIR    a run, or a directory of runs: its newest run with a leak report\n"
     "                   (default: the out directory, ./vigil-out or out= of VIGIL_OPTIONS)\n"
     "example: vigil run --tool leak -- ./server && vigil leaks vigil-out/server.1234",
     cmd_leaks},
    {"html", "a self-contained page of a leak report: sortable table, highlighted source",
     "vigil html [--suppress FILE] [--all] [RUNDIR|OUTDIR] -o PAGE.html",
     "  --suppress FILE  suppressions, as for `vigil leaks`\n"
     "  --all            also suppressed groups\n"
     "  -o PAGE.html     where the page is written (atomically)\n"
     "  RUNDIR|OUTDIR    as for `vigil leaks`\n"
     "example: vigil html vigil-out/server.1234 -o leaks.html",
     cmd_html},
};

static const struct vigil_cmd_tool leak_cmd_tool = {
    .name = "leak",
    .options = &leak_option_set,
    .description = "memory leaks: stale objects (not accessed for long) and unreachable ones at exit",
    .commands = leak_commands,
    .ncommands = sizeof leak_commands / sizeof leak_commands[0],
    .findings = leak_findings,   /* findings.c */
};
VIGIL_REGISTER_CMD_TOOL(leak_cmd_tool);
