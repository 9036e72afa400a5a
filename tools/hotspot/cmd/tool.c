/* The hot-spot profiler's part of the `vigil` command: its name, options and `vigil hot`. A
 * profile is not a finding: the tool adds none to `vigil report`. */
#include "cmdtool.h"
#include "hotcmd.h"

#define VIGIL_OPTSET_TOOL hotspot
#define VIGIL_OPTSET_ROWS "tools/hotspot/options.inc"
#include "optset.h"

static const struct vigil_cmd_command hotspot_commands[] = {
    {"hot", "the hot spots of a run profiled with --tool hotspot: functions by self and inclusive samples",
     "vigil hot [-n N] [--json | --folded] [--trace FILE] [RUN]",
     "  RUN           a run directory, or a directory of runs (its newest run that holds\n"
     "                hotspot.json); default: ./vigil-out, or out= of VIGIL_OPTIONS when set\n"
     "  (no flag)     the functions with the most samples in themselves (self) and in\n"
     "                themselves and their callees (inclusive), with the file:line each is\n"
     "                defined at and its share of all samples\n"
     "  -n N          the top N functions of each list (default 20)\n"
     "  --json        the same lists and every named stack (root first) as one JSON document\n"
     "  --folded      folded stacks, one line `main;work;hot_a 123` per stack (root first), for\n"
     "                flamegraph.pl, inferno or speedscope\n"
     "  --trace FILE  Chrome trace-event JSON of each thread's samples over time: complete (X)\n"
     "                events, a caller's spanning its callees', for https://ui.perfetto.dev or\n"
     "                chrome://tracing (written atomically)\n"
     "example: vigil run --tool hotspot -- ./prog; vigil hot; vigil hot --folded | flamegraph.pl > f.svg",
     hs_cmd_hot},
};

static const struct vigil_cmd_tool hotspot_cmd_tool = {
    .name = "hotspot",
    .description = "hot spots: PC and frame-pointer stack sampled on each thread's CPU clock; writes hotspot.json (vigil hot)",
    .commands = hotspot_commands,
    .ncommands = sizeof hotspot_commands / sizeof hotspot_commands[0],
    .options = &hotspot_option_set,
    /* observed: sampled at one rate, no walk: where the time goes decides [hotspot.entries] */
    .observe_options = "hotspot.walk_spots=0:hotspot.late_period=0",
    .observe_write = hs_observe_write,
};
VIGIL_REGISTER_CMD_TOOL(hotspot_cmd_tool);
