/* The command side of a tool (tools/<name>/cmd/): what a tool adds to the `vigil` command.
 * A tool fills one struct vigil_cmd_tool and registers it with VIGIL_REGISTER_CMD_TOOL, the
 * same retained-section mechanism the runtime uses for struct vigil_tool; cmd/main.c, `vigil
 * report`, `vigil options` and `vigil tools` find every tool through it and name none. */
#ifndef VIGIL_CMDTOOL_H
#define VIGIL_CMDTOOL_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "options.h"

struct vigil_findings;   /* common/findings.h */

/* A subcommand a tool adds (`vigil leaks`, `vigil ingest`, ...): as a row of cmd/main.c's
 * table. argv[0] is the subcommand's name. */
struct vigil_cmd_command {
    const char *name, *help, *usage;
    const char *details;   /* every flag explained, and an example; printed by --help */
    int (*run)(int argc, char **argv);
};

struct vigil_cmd_tool {
    const char *name;          /* as in tools=NAME; the runtime part registers the same name */
    const char *description;   /* one line: what it finds */
    const struct vigil_cmd_command *commands;
    size_t ncommands;
    /* Its options table (tools/<name>/options.inc, through common/optset.h); NULL if none. */
    const struct vigil_option_set *options;
    /* Append this tool's findings of the run in rundir to out. 0 when read, also when the run
     * holds no report of this tool (nothing added); -1 when its report is damaged, after one
     * message on stderr naming the file, line and what was expected. NULL: no findings. */
    int (*findings)(const char *rundir, struct vigil_findings *out);
    /* Record an oracle's verdict on the run in rundir (`vigil run --label-by CMD`): failed is
     * 1 for a failure, 0 for a success. Written atomically where the tool reads labels. 0, or
     * -1 with a message in err. NULL: the tool takes no labels. */
    int (*label_run)(const char *rundir, int failed, char *err, size_t errlen);
    /* `vigil observe`: the tool runs in the observed run (mode=off still) when it has
     * observe_write, with the VIGIL_OPTIONS items observe_options ("" or NULL: none; the
     * user's own items of the tool win). observe_write appends the tool's sections of the
     * configuration (VIGIL_CC_CONFIG) to f, each entry under a comment with its reason, from
     * the run's reports (rundirs: one per process; a run without the tool's report says
     * nothing). calls(function, calls_arg): how many times the run called the function (its
     * entry check's executions in mode=off, over every process), or UINT64_MAX when unknown
     * (a function without an entry check: [skip]ped, inlined everywhere, not built with
     * vigil-cc). 0, or -1 after one message on stderr naming the file and what was expected. */
    const char *observe_options;
    int (*observe_write)(const char *const *rundirs, size_t n, uint64_t (*calls)(const char *function, void *arg),
                         void *calls_arg, FILE *f);
};

#if defined(__has_attribute) && __has_attribute(retain)
#define VIGIL_CMD_SECTION_RETAIN retain,
#else
#define VIGIL_CMD_SECTION_RETAIN
#endif
#define VIGIL_REGISTER_CMD_TOOL(tool) \
    static const struct vigil_cmd_tool *const vigil_cmd_tool_ptr_##tool \
        __attribute__((used, VIGIL_CMD_SECTION_RETAIN section("vigil_cmd_tools"), aligned(sizeof(void *)))) = &tool

/* Every tool linked into the command, in link order; *n is set to their number. */
const struct vigil_cmd_tool *const *cmd_tool_list(size_t *n);
/* The tool named name, or NULL. */
const struct vigil_cmd_tool *cmd_find_tool(const char *name);

#endif
