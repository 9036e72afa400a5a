/* What `vigil report` (cmd/report.c) shares with `vigil run`. */
#ifndef VIGIL_CMD_REPORT_H
#define VIGIL_CMD_REPORT_H

struct vigil_findings;

/* Every registered tool's findings of the run in rundir (cmd/cmdtool.h), appended to out,
 * worst first. 0, or -1 when a tool's report is damaged (the tool said so on stderr; the
 * findings read so far stay in out). */
int cmd_run_findings(const char *rundir, struct vigil_findings *out);
/* Where runs go: out= of VIGIL_OPTIONS (the runtime's own parser), else ./vigil-out. */
void cmd_default_out_dir(char *buf, size_t len);
/* The newest run directly under dir (by the start time in its run.txt, else the directory's
 * modification time) that holds the file `holding` (NULL: any run): 0 with its path in out,
 * or -1 (none, or dir unreadable). */
int cmd_newest_run(const char *dir, const char *holding, char *out, size_t len);
/* The run a tool's command reads: target (NULL: the default out directory) when it holds the
 * file `holding`, else the newest run under it that does. 0 with its path in out, or -1 with
 * the directory searched in out (for the message). */
int cmd_run_holding(const char *target, const char *holding, char *out, size_t len);

#endif
