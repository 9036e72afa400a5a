/* Feedback reports of statistical debugging (seed 002): the predicate counts of one run.
 * Specified in docs/formats.md ("Feedback report"). Written by the preds tool as preds.txt in
 * the run report directory (with plain fprintf: tools include only libc and vigil/tool.h, so
 * the tool follows the grammar below rather than calling these helpers), and optionally as
 * label.txt by `vigil run --label-by CMD` (vigil_feedback_write_label). Read by `vigil ingest`.
 *
 * Build identity: site ids in a feedback report are process-wide ids (base_id + local index);
 * the run.txt beside it maps them to (module tu_hash, local index) through its `module` lines.
 * The tu hashes are the identity of the build; the ELF build-id is not used (vigil-cc does not
 * guarantee one, and a tu_hash names exactly the site table the counts refer to).
 *
 *   vigil-feedback 1
 *   pid <n>
 *   collect sampled|all|plan
 *   binary 0|1
 *   site <id> branch <observed> <false> <true>
 *   site <id> return <observed> <negative> <zero> <positive>
 *   label success|failure                (optional: an oracle's verdict; else run.txt decides)
 *   stack <pc> ...                        (optional: hex return addresses, innermost first)
 *   end
 */
#ifndef VIGIL_FEEDBACK_H
#define VIGIL_FEEDBACK_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VIGIL_FEEDBACK_VERSION 1
#define VIGIL_FEEDBACK_FILE "preds.txt"
#define VIGIL_LABEL_FILE "label.txt"
#define VIGIL_FEEDBACK_MAX_STACK 64

enum vigil_collect { VIGIL_COLLECT_NONE = 0, VIGIL_COLLECT_SAMPLED, VIGIL_COLLECT_ALL, VIGIL_COLLECT_PLAN };
enum vigil_label { VIGIL_LABEL_NONE = 0, VIGIL_LABEL_SUCCESS, VIGIL_LABEL_FAILURE };

/* Predicates per site kind: branch {false, true}; return {< 0, == 0, > 0}. */
#define VIGIL_MAX_PREDS 3

struct vigil_feedback_site {
    uint32_t id;                      /* process-wide site id */
    uint32_t kind;                    /* VIGIL_SITE_BRANCH or VIGIL_SITE_RETURN (sitefmt.h) */
    uint64_t observed;                /* executions seen (a flag, 0/1, when binary) */
    uint64_t count[VIGIL_MAX_PREDS];  /* per predicate; unused entries are 0 */
};

struct vigil_feedback {
    uint32_t version;
    int64_t pid;                      /* -1 when absent (label-only files) */
    enum vigil_collect collect;       /* NONE when absent (label-only files) */
    int binary;                       /* -1 when absent */
    size_t nsites;
    struct vigil_feedback_site *sites;    /* sorted by id, ids unique */
    enum vigil_label label;
    uint32_t stack_depth;
    uint64_t stack[VIGIL_FEEDBACK_MAX_STACK];
};

/* Number of predicates of a site kind: 2 (branch), 3 (return), 0 (other kinds). */
unsigned vigil_feedback_npreds(uint32_t kind);
const char *vigil_collect_name(enum vigil_collect c);     /* "sampled", ... ; "none" */
const char *vigil_label_name(enum vigil_label l);         /* "success", "failure", "none" */

/* Parse a feedback report from memory; name is used in messages. Strict: every line must match
 * the grammar, site lines need `collect` and `binary` first, counts must agree with observed
 * (count mode: observed = sum of counts; binary: all 0/1 and observed = any). Returns 0, or -1
 * with "NAME:LINE: what was expected" in err (nothing to free then). */
int vigil_feedback_parse(const char *text, size_t len, const char *name,
                         struct vigil_feedback *fb, char *err, size_t errlen);
/* Read and parse a file (at most 256 MiB). */
int vigil_feedback_load(const char *path, struct vigil_feedback *fb, char *err, size_t errlen);
void vigil_feedback_free(struct vigil_feedback *fb);

/* Writers: the whole report, or a label-only file (label.txt). Return 0, or -1 on I/O error. */
int vigil_feedback_write(FILE *f, const struct vigil_feedback *fb);
int vigil_feedback_write_label(FILE *f, enum vigil_label label, const uint64_t *stack,
                               uint32_t depth);

#endif
