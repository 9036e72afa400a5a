/* Findings: what every analysis tool reports about a run, in one model. Each tool's command
 * part (cmd/cmdtool.h, `findings`) turns its own report file into findings; `vigil report`,
 * `vigil run` and the pages render them without knowing which tool made them.
 *
 * A finding has a tool, a kind, a severity, a message, a score (higher is worse; tools decide
 * the scale), locations (the first is where the finding is, the others are related), stacks
 * (innermost frame first) and tool-specific fields (key = string or number).
 *
 * Renderings: the versioned JSON document "vigil-findings" (docs/formats.md, "Findings"; one
 * field list below generates both its writer and its reader), SARIF 2.1.0, and text.
 * Suppressions: LSan-style files of "TOOL:PATTERN" lines.
 *
 * Everything is malloc'd; strings in the model are never NULL ("" when unknown). */
#ifndef VIGIL_FINDINGS_H
#define VIGIL_FINDINGS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VIGIL_FINDINGS_FORMAT "vigil-findings"
#define VIGIL_FINDINGS_VERSION 1

enum vigil_severity { VIGIL_NOTE, VIGIL_WARNING, VIGIL_ERROR };

/* "note", "warning", "error"; -1 from the parser for anything else. */
const char *vigil_severity_name(enum vigil_severity s);
int vigil_severity_parse(const char *name);

/* ---- the model, and its one field list ----
 * X(STRUCT, member, TYPE, ELEMENT, required): the member is also the JSON key. TYPE:
 *   STRING    a JSON string (char *)
 *   U32, U64  a non-negative JSON integer (uint32_t, uint64_t)
 *   DOUBLE    a finite JSON number (double)
 *   HEX       a string "0x..." (uint64_t): addresses, exact beyond 2^53
 *   BOOL      true or false (int)
 *   SEVERITY  "error", "warning" or "note" (enum vigil_severity)
 *   VALUE     a string or a number (struct vigil_value)
 *   ARRAY     a JSON array of ELEMENT objects: members `member` (pointer) and `n##member`
 * ELEMENT is none except for ARRAY. required: the reader rejects an object without it; the
 * writer writes every member. */

struct vigil_frame {
    uint64_t pc;                /* runtime address; 0 when unknown */
    char *function, *file;
    uint32_t line, column;      /* 0: unknown */
    int inlined;                /* an inlined call inside the next frame's function */
};
#define VIGIL_FRAME_FIELDS(X)                                  \
    X(struct vigil_frame, pc, HEX, none, 0)                    \
    X(struct vigil_frame, function, STRING, none, 1)           \
    X(struct vigil_frame, file, STRING, none, 1)               \
    X(struct vigil_frame, line, U32, none, 1)                  \
    X(struct vigil_frame, column, U32, none, 0)                \
    X(struct vigil_frame, inlined, BOOL, none, 0)

struct vigil_location {
    char *role;                 /* a short word for the page and filters: "allocation", ... */
    char *message;              /* what is there, for people: "most recent sampled access" */
    char *function, *file;
    uint32_t line, column;
};
#define VIGIL_LOCATION_FIELDS(X)                               \
    X(struct vigil_location, role, STRING, none, 0)            \
    X(struct vigil_location, message, STRING, none, 0)         \
    X(struct vigil_location, function, STRING, none, 1)        \
    X(struct vigil_location, file, STRING, none, 1)            \
    X(struct vigil_location, line, U32, none, 1)               \
    X(struct vigil_location, column, U32, none, 0)

struct vigil_stack {
    char *label;                /* "allocation", ... */
    struct vigil_frame *frames; /* innermost first */
    size_t nframes;
};
#define VIGIL_STACK_FIELDS(X)                                  \
    X(struct vigil_stack, label, STRING, none, 0)              \
    X(struct vigil_stack, frames, ARRAY, frame, 1)

struct vigil_value {
    int is_number;
    double number;              /* is_number */
    char *string;               /* !is_number */
};

/* A tool-specific field. unit: "" (a plain number or text), "bytes", "ms", or a noun. total:
 * summed over the tool's findings in summaries ("leak: 3 findings, 12 objects, 1.2 KiB"). */
struct vigil_field {
    char *key;
    struct vigil_value value;
    char *unit;
    int total;
};
#define VIGIL_FIELD_FIELDS(X)                                  \
    X(struct vigil_field, key, STRING, none, 1)                \
    X(struct vigil_field, value, VALUE, none, 1)               \
    X(struct vigil_field, unit, STRING, none, 0)               \
    X(struct vigil_field, total, BOOL, none, 0)

struct vigil_finding {
    char *tool, *kind;
    enum vigil_severity severity;
    char *message;
    double score;               /* higher is worse */
    struct vigil_location *locations;   /* [0]: where; the others: related */
    size_t nlocations;
    struct vigil_stack *stacks;
    size_t nstacks;
    struct vigil_field *fields;
    size_t nfields;
};
#define VIGIL_FINDING_FIELDS(X)                                \
    X(struct vigil_finding, tool, STRING, none, 1)             \
    X(struct vigil_finding, kind, STRING, none, 1)             \
    X(struct vigil_finding, severity, SEVERITY, none, 1)       \
    X(struct vigil_finding, message, STRING, none, 1)          \
    X(struct vigil_finding, score, DOUBLE, none, 0)            \
    X(struct vigil_finding, locations, ARRAY, location, 0)     \
    X(struct vigil_finding, stacks, ARRAY, stack, 0)           \
    X(struct vigil_finding, fields, ARRAY, field, 0)

/* The list, and the document: "format" and "version" come first, then these. */
struct vigil_findings {
    char *run;                  /* the run directory ("" when not known) */
    char *program;              /* the program's path ("" when not known) */
    uint64_t suppressed;        /* findings removed by suppressions */
    struct vigil_finding *findings;
    size_t nfindings;
    size_t cap;                 /* allocated findings; not part of the document */
};
#define VIGIL_FINDINGS_FIELDS(X)                               \
    X(struct vigil_findings, run, STRING, none, 0)             \
    X(struct vigil_findings, program, STRING, none, 0)         \
    X(struct vigil_findings, suppressed, U64, none, 0)         \
    X(struct vigil_findings, findings, ARRAY, finding, 1)

/* ---- building ---- */
void vigil_findings_init(struct vigil_findings *l);
void vigil_findings_free(struct vigil_findings *l);   /* back to the empty list */
/* Set run / program (copied). 0, or -1 when out of memory. */
int vigil_findings_set_run(struct vigil_findings *l, const char *run, const char *program);
/* Append a finding (strings copied, NULL taken as ""; a score that is not finite becomes 0).
 * Returns it (valid until the next append), or NULL when out of memory. */
struct vigil_finding *vigil_findings_append(struct vigil_findings *l, const char *tool, const char *kind,
                                            enum vigil_severity severity, const char *message, double score);
/* Move every finding of from to the end of into (from is left empty). 0, or -1: out of memory. */
int vigil_findings_move(struct vigil_findings *into, struct vigil_findings *from);
struct vigil_location *vigil_finding_add_location(struct vigil_finding *f, const char *role, const char *message,
                                                  const char *function, const char *file,
                                                  uint32_t line, uint32_t column);
struct vigil_stack *vigil_finding_add_stack(struct vigil_finding *f, const char *label);
struct vigil_frame *vigil_stack_add_frame(struct vigil_stack *s, uint64_t pc, const char *function,
                                          const char *file, uint32_t line, uint32_t column, int inlined);
/* Tool fields; unit NULL = "". NULL when out of memory. */
struct vigil_field *vigil_finding_add_number(struct vigil_finding *f, const char *key, double value,
                                             const char *unit, int total);
struct vigil_field *vigil_finding_add_string(struct vigil_finding *f, const char *key, const char *value);
/* The field named key, or NULL. */
const struct vigil_field *vigil_finding_field(const struct vigil_finding *f, const char *key);

/* Worst first: score descending, then severity (error before warning before note), then tool,
 * kind and message, so that equal inputs give equal outputs. */
void vigil_findings_sort(struct vigil_findings *l);

/* ---- JSON (docs/formats.md, "Findings") ---- */
/* Write the document; pretty: indented. */
void vigil_findings_write_json(FILE *out, const struct vigil_findings *l, int pretty);
/* Read a document from memory into l (initialized here). 0, or -1 with
 * "NAME:LINE:COLUMN: PATH: what was expected" in err (PATH like findings[2].stacks[0].label),
 * l left empty. */
int vigil_findings_parse_json(const char *text, size_t len, const char *name, struct vigil_findings *l,
                              char *err, size_t errlen);
int vigil_findings_load_json(const char *path, struct vigil_findings *l, char *err, size_t errlen);

/* ---- SARIF 2.1.0 ----
 * One run, driver "vigil" (version: driver_version), one rule per TOOL/KIND; a result per
 * finding: ruleId, level, message.text, locations[0] (the first location), relatedLocations
 * (the others), codeFlows (one per stack, a thread flow of its frames), properties (score,
 * tool fields). Paths become URIs: absolute ones file:///..., relative ones stay relative. */
void vigil_findings_write_sarif(FILE *out, const struct vigil_findings *l, const char *driver_version);

/* ---- text ----
 * One block per finding, in list order (sort first): "#N TOOL/KIND [severity] ...", the message,
 * the first location, each stack mapped to function file:line, the related locations and the
 * tool fields. */
void vigil_findings_write_text(FILE *out, const struct vigil_findings *l);
/* "N findings (TOOL: N findings, <totals>; TOOL: ...)" or "no findings", into buf. With
 * per_tool_only, just the part in parentheses ("" when empty). */
void vigil_findings_summary(const struct vigil_findings *l, int per_tool_only, char *buf, size_t len);
/* The summary of one tool's findings: "N findings, 12 objects, 1.2 KiB" ("" if it has none). */
void vigil_findings_tool_summary(const struct vigil_findings *l, const char *tool, char *buf, size_t len);
/* "480 bytes", "1.2 KiB", "3.4 MiB", "5.6 GiB". */
void vigil_format_bytes(double bytes, char *buf, size_t len);

/* ---- suppressions ----
 * A file of lines "TOOL:PATTERN" or "*:PATTERN" (any tool); '#' starts a comment line; blank
 * lines are skipped; spaces around TOOL and PATTERN are ignored. TOOL is a tool name (letters,
 * digits, '_', '-'). A finding of that tool is suppressed when PATTERN (fnmatch, '*' also
 * crosses '/') matches the function or the file of any of its stack frames or locations, or a
 * file's last path component. */
struct vigil_suppression {
    char *tool;                 /* "*" for any */
    char *pattern;
    int line;                   /* in the file */
    uint64_t hits;              /* findings it suppressed */
};
struct vigil_suppressions {
    char *name;                 /* the file */
    struct vigil_suppression *items;
    size_t n;
};
/* Parse a suppression file's text (initializes s). 0, or -1 with "NAME:LINE: what was expected"
 * in err, s left empty. */
int vigil_suppressions_parse(const char *text, size_t len, const char *name, struct vigil_suppressions *s,
                             char *err, size_t errlen);
int vigil_suppressions_load(const char *path, struct vigil_suppressions *s, char *err, size_t errlen);
void vigil_suppressions_free(struct vigil_suppressions *s);
/* The first suppression matching the finding, or NULL. */
const struct vigil_suppression *vigil_suppression_match(const struct vigil_suppressions *s,
                                                        const struct vigil_finding *f);
/* Remove the suppressed findings from l (order kept), counting them in l->suppressed and in
 * each suppression's hits. Returns how many were removed. */
size_t vigil_findings_suppress(struct vigil_findings *l, struct vigil_suppressions *s);

#endif
