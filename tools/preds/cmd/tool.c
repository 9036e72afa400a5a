/* Statistical debugging's part of the `vigil` command: ingest, rank and plan. */
#include "cmd.h"
#include "cmdtool.h"

#define VIGIL_OPTSET_TOOL preds
#define VIGIL_OPTSET_ROWS "tools/preds/options.inc"
#include "optset.h"

int cmd_ingest(int argc, char **argv);
int cmd_rank(int argc, char **argv);
int cmd_plan(int argc, char **argv);

static const struct vigil_cmd_command preds_commands[] = {
    {"ingest", "load feedback reports (tools=preds) into the report store",
     "vigil ingest [--db FILE|postgresql://...] [--quiet] DIR...",
     "  --db FILE|URL   the report store: an SQLite file (default vigil.db) or a PostgreSQL URL\n"
     "  --quiet, -q     no per-run lines\n"
     "  DIR...          run directories, or directories holding them (vigil-out/)\n"
     "example: for i in inputs/*; do vigil run --tool preds -- ./prog \"$i\"; done; vigil ingest vigil-out/",
     cmd_ingest},
    {"rank", "predicates most predictive of failure, from the report store",
     "vigil rank [--db FILE|URL] [--top N] [--json] [--by failcount|increase|importance|ttest|eliminate]",
     "  --db FILE|URL   the report store (default vigil.db)\n"
     "  --top N         how many predicates to show (default 10)\n"
     "  --json          one JSON document\n"
     "  --by SCORE      failcount, increase, importance (default), ttest, or eliminate (iterative\n"
     "                  bug elimination: the best predicate, then the runs it explains removed)\n"
     "example: vigil ingest vigil-out/ && vigil rank --top 5",
     cmd_rank},
    {"plan", "next plan of adaptive bug isolation: which predicate sites to count (VIGIL_PLAN)",
     "vigil plan [--db FILE|URL] [--heuristic failcount|importance|maxImportance|ttest|bfs|random] "
     "[--direction forward|backward] [--cause N] [--confidence X] [--state FILE] BINARY -o PLAN.vplan",
     "  --db FILE|URL      the report store (default vigil.db)\n"
     "  --heuristic H      which predicates to expand next (default importance)\n"
     "  --direction D      forward from main (default) or backward from crash sites\n"
     "  --cause N          backward: the Nth most frequent crash site (default 1)\n"
     "  --confidence X     stop expanding below this confidence (default 0)\n"
     "  --state FILE       the search state kept between plans (default BINARY.state)\n"
     "  -o PLAN.vplan      the plan to write; run the program with VIGIL_PLAN=PLAN.vplan\n"
     "example: vigil plan ./prog -o next.vplan && VIGIL_PLAN=next.vplan ./prog input",
     cmd_plan},
};

static const struct vigil_cmd_tool preds_cmd_tool = {
    .name = "preds",
    .options = &preds_option_set,
    .description = "statistical bug isolation: branch and return predicates that predict failure",
    .commands = preds_commands,
    .ncommands = sizeof preds_commands / sizeof preds_commands[0],
};
VIGIL_REGISTER_CMD_TOOL(preds_cmd_tool);
