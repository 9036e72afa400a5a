/* Statistical debugging's part of the `vigil` command: ingest, rank and plan. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "cmdtool.h"
#include "feedback.h"

#define VIGIL_OPTSET_TOOL preds
#define VIGIL_OPTSET_ROWS "tools/preds/options.inc"
#include "optset.h"
#include "savefile.h"

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
     "vigil rank [--db FILE|URL] [--top N] [--all] [--json] [--by failcount|increase|importance|ttest|eliminate]",
     "  --db FILE|URL   the report store (default vigil.db)\n"
     "  --top N         how many predicates to show (default 10)\n"
     "  --all           also the predicates whose score is not positive (hidden by default)\n"
     "  --json          one JSON document\n"
     "  --by SCORE      failcount, increase, importance (default), ttest (-log10 p, signed), or\n"
     "                  eliminate (iterative\n"
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

static int write_label(FILE *f, void *failed)
{
    return vigil_feedback_write_label(f, *(int *)failed ? VIGIL_LABEL_FAILURE : VIGIL_LABEL_SUCCESS, NULL, 0);
}

/* label.txt beside run.txt, replaced whole. */
static int preds_label_run(const char *rundir, int failed, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", rundir, VIGIL_LABEL_FILE);
    return vigil_save_file(path, write_label, &failed, err, errlen);
}

static const struct vigil_cmd_tool preds_cmd_tool = {
    .label_run = preds_label_run,
    .name = "preds",
    .options = &preds_option_set,
    .description = "statistical bug isolation: branch and return predicates that predict failure",
    .commands = preds_commands,
    .ncommands = sizeof preds_commands / sizeof preds_commands[0],
};
VIGIL_REGISTER_CMD_TOOL(preds_cmd_tool);
