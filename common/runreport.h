/* The run report: the only contract between libvigil (writer) and the `vigil` command
 * (reader). Specified in docs/formats.md ("Run report"). A report is a directory
 * <out>/<prog>.<pid>/ holding run.txt plus one file or more per enabled tool; the runtime
 * builds it as <out>/.<prog>.<pid>.tmp and renames it into place, so readers never see a torn
 * report.
 *
 * run.txt is line-oriented text, first line "vigil-run 1". Each further line is
 * "<key> <field> <field> ...", fields separated by one space; string fields are escaped
 * (vigil_escape) so they never contain spaces, newlines or '%'. */
#ifndef VIGIL_RUNREPORT_H
#define VIGIL_RUNREPORT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "textfmt.h"   /* vigil_escape, vigil_unescape */

#define VIGIL_RUN_FORMAT_VERSION 3   /* the reader also accepts 1 (no crash line) and 2 (no running) */
#define VIGIL_RUN_FILE "run.txt"


/* ---- Reader (used by the vigil command; allocates with malloc) ---- */

struct vigil_run_module {
    uint32_t index;          /* as numbered in the report */
    uint64_t tu_hash;
    uint32_t nsites;
    uint32_t base_id;        /* process-wide id of local site 0 */
    char *path;              /* the binary (executable or shared object) holding its site table */
};

struct vigil_run_site {
    uint32_t module;         /* index into modules */
    uint32_t index;          /* local index in that module */
    uint32_t kind;           /* enum vigil_site_kind */
    uint64_t execs;          /* dispatch-check executions, both copies */
    uint64_t bursts;         /* bursts started at this check */
    double rate;             /* current sampling rate of the check, 0..1 */
};

struct vigil_run_report {
    uint32_t version;
    char *program;           /* path of the executable */
    int argc;
    char **argv;
    int64_t pid, ppid;
    int exited;              /* 1: exit_status valid; 0: terminated by signal, or running */
    int running;             /* 1: written while the program ran (a snapshot); no status yet */
    int exit_status;
    int signal;              /* when !exited */
    uint64_t start_unix_ns, duration_ns;
    size_t noptions;
    char **option_names, **option_values;   /* options in force */
    char *tools;             /* enabled tools, comma-separated ("" for none) */
    size_t nmodules;
    struct vigil_run_module *modules;
    size_t nsites;
    struct vigil_run_site *sites;
    uint64_t bursts_total;
    /* Where a fault signal (SEGV, BUS, ILL, FPE) struck; has_crash = 0 otherwise. */
    int has_crash;
    int crash_signal;
    uint64_t crash_pc;           /* the faulting PC in the process */
    uint64_t crash_file_offset;  /* the same instruction as an offset in crash_path's file */
    char *crash_path;            /* the mapped file holding it ("" when not file-backed) */
};

/* Parse dir/run.txt (or a run.txt path). Returns 0, or -1 with "FILE:LINE: what was expected"
 * in err. An unknown key is an error naming FILE:LINE: adding a key requires a version bump.
 * On error *r is left empty (vigil_run_report_free is still safe to call). */
int vigil_run_report_load(const char *path, struct vigil_run_report *r, char *err, size_t errlen);
/* Parse from memory (for the fuzzer); name is used in messages. */
int vigil_run_report_parse(const char *text, size_t len, const char *name,
                           struct vigil_run_report *r, char *err, size_t errlen);
void vigil_run_report_free(struct vigil_run_report *r);

#endif
