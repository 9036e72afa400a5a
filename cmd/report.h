/* What `vigil report` (cmd/report.c) shares with `vigil run`. */
#ifndef VIGIL_CMD_REPORT_H
#define VIGIL_CMD_REPORT_H

struct vigil_findings;

/* Every registered tool's findings of the run in rundir (cmd/cmdtool.h), appended to out,
 * worst first. 0, or -1 when a tool's report is damaged (the tool said so on stderr; the
 * findings read so far stay in out). */
int cmd_run_findings(const char *rundir, struct vigil_findings *out);

#endif
