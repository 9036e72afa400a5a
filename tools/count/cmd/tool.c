/* The count tool's part of the `vigil` command: its name and options (it has no subcommand
 * and no findings: count.txt is a table of event counts, read by tests and by people). */
#include "cmdtool.h"

#define VIGIL_OPTSET_TOOL count
#define VIGIL_OPTSET_ROWS "tools/count/options.inc"
#include "optset.h"

static const struct vigil_cmd_tool count_cmd_tool = {
    .name = "count",
    .options = &count_option_set,
    .description = "counts every event kind (template tool); writes count.txt",
};
VIGIL_REGISTER_CMD_TOOL(count_cmd_tool);
