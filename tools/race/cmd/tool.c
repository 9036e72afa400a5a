/* The race tool's part of the `vigil` command: its name, options and findings (findings.c).
 * `vigil report` renders the findings; the tool has no subcommand of its own. */
#include "cmdtool.h"
#include "racecmd.h"

#define VIGIL_OPTSET_TOOL race
#define VIGIL_OPTSET_ROWS "tools/race/options.inc"
#include "optset.h"

static const struct vigil_cmd_tool race_cmd_tool = {
    .name = "race",
    .options = &race_option_set,
    .description = "data races: lockset refined on sampled accesses, with happens-before; writes race.json",
    .findings = race_findings,
};
VIGIL_REGISTER_CMD_TOOL(race_cmd_tool);
