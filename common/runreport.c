/* Run report: percent-escaping of string fields and the reader of run.txt.
 * The format is specified in docs/formats.md; the writer lives in the runtime. The reader is
 * strict: every deviation is an error naming FILE:LINE and what was expected, because a report
 * that parses "mostly" would give numbers nobody can trust. */
#include "runreport.h"
#include "sitefmt.h"
#include "textfmt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- Reader ---- */

#define MAX_FIELDS 8              /* after the key */
#define MAX_FILE ((size_t)256 << 20)

static const struct vigil_text_format run_format = {
    .magic = "vigil-run", .min_version = 1, .max_version = VIGIL_RUN_FORMAT_VERSION,
    .what = "run report", .quote = '"', .torn_on_last_line = 1,
};

struct parser {
    struct vigil_text_reader rd;
    char **field;            /* fields of the current line after the key */
    int nfields;
    struct vigil_run_report *r;
    /* which once-only keys were seen, by key table index */
    unsigned char seen[16];
    size_t cap_argv, cap_option_names, cap_option_values, cap_modules, cap_sites, cap_site_lines;
    unsigned *site_lines;    /* line number of each site, for duplicate messages */
};

__attribute__((format(printf, 2, 3)))
static int fail(struct parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vigil_text_vfail(&p->rd, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_uint(struct parser *p, const char *text, uint64_t max, const char *what,
                      uint64_t *out)
{
    return vigil_text_expect_decimal(&p->rd, text, max, what, out);
}

static int parse_u32(struct parser *p, const char *text, const char *what, uint32_t *out)
{
    uint64_t v;
    if (parse_uint(p, text, UINT32_MAX, what, &v))
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int parse_hex(struct parser *p, const char *text, const char *what, uint64_t *out)
{
    if (vigil_text_hex(text, VIGIL_TEXT_HEX_0X, 1, 16, out) != 0)
        return fail(p, "expected %s (0x and 1..16 hex digits), got \"%.40s\"", what, text);
    return 0;
}

static int parse_string(struct parser *p, char *text, const char *what, char **out)
{
    if (vigil_unescape(text))
        return fail(p, "expected %s (percent-escaped: %%XX, %%%% for the empty string), got \"%.40s\"",
                    what, text);
    *out = strdup(text);
    return *out ? 0 : fail(p, "out of memory");
}

/* Grow *arr (element size elem) so that it holds at least n+1 elements. */
static int reserve(struct parser *p, void **arr, size_t *cap, size_t n, size_t elem)
{
    return vigil_text_grow(arr, cap, n, elem) == 0 ? 0 : fail(p, "out of memory");
}

static int key_program(struct parser *p)
{
    return parse_string(p, p->field[0], "the program path", &p->r->program);
}

static int key_arg(struct parser *p)
{
    struct vigil_run_report *r = p->r;
    uint64_t i;
    if (parse_uint(p, p->field[0], INT32_MAX - 1, "the argument index", &i))
        return -1;
    if (i != (uint64_t)r->argc)
        return fail(p, "expected argument index %d (arguments in order from 0), got %llu",
                    r->argc, (unsigned long long)i);
    if (reserve(p, (void **)&r->argv, &p->cap_argv, (size_t)r->argc + 1, sizeof *r->argv))
        return -1;
    r->argv[r->argc] = NULL;
    if (parse_string(p, p->field[1], "the argument string", &r->argv[r->argc]))
        return -1;
    r->argv[++r->argc] = NULL;
    return 0;
}

static int key_pid(struct parser *p)
{
    uint64_t v;
    if (parse_uint(p, p->field[0], INT64_MAX, "the process id", &v))
        return -1;
    p->r->pid = (int64_t)v;
    return 0;
}

static int key_ppid(struct parser *p)
{
    uint64_t v;
    if (parse_uint(p, p->field[0], INT64_MAX, "the parent process id", &v))
        return -1;
    p->r->ppid = (int64_t)v;
    return 0;
}

static int key_exit(struct parser *p)
{
    uint64_t v;
    if (parse_uint(p, p->field[0], 255, "the exit status", &v))
        return -1;
    p->r->exited = 1;
    p->r->exit_status = (int)v;
    return 0;
}

static int key_signal(struct parser *p)
{
    uint64_t v;
    if (parse_uint(p, p->field[0], 127, "the signal number", &v))
        return -1;
    if (v == 0)
        return fail(p, "expected a signal number 1..127, got 0");
    p->r->exited = 0;
    p->r->signal = (int)v;
    return 0;
}

static int key_running(struct parser *p)
{
    if (p->rd.version < 3)
        return fail(p, "\"running\" is not a key of run report version %u; expected version 3",
                    p->rd.version);
    p->r->exited = 0;
    p->r->running = 1;
    return 0;
}

static int key_start(struct parser *p)
{
    return parse_uint(p, p->field[0], UINT64_MAX, "the start time in ns", &p->r->start_unix_ns);
}

static int key_duration(struct parser *p)
{
    return parse_uint(p, p->field[0], UINT64_MAX, "the duration in ns", &p->r->duration_ns);
}

static int key_option(struct parser *p)
{
    struct vigil_run_report *r = p->r;
    size_t n = r->noptions;
    if (reserve(p, (void **)&r->option_names, &p->cap_option_names, n, sizeof(char *)) ||
        reserve(p, (void **)&r->option_values, &p->cap_option_values, n, sizeof(char *)))
        return -1;
    r->option_names[n] = r->option_values[n] = NULL;
    r->noptions = n + 1;   /* counted now so that free() releases a half-parsed pair */
    if (parse_string(p, p->field[0], "the option name", &r->option_names[n]))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (strcmp(r->option_names[i], r->option_names[n]) == 0)
            return fail(p, "option \"%.40s\" is listed twice; expected each option once",
                        r->option_names[n]);
    return parse_string(p, p->field[1], "the option value", &r->option_values[n]);
}

static int key_tools(struct parser *p)
{
    return parse_string(p, p->field[0], "the tool list", &p->r->tools);
}

static int key_module(struct parser *p)
{
    struct vigil_run_report *r = p->r;
    struct vigil_run_module m = {0};
    uint64_t index;
    if (parse_uint(p, p->field[0], UINT32_MAX, "the module index", &index))
        return -1;
    if (index != r->nmodules)
        return fail(p, "expected module index %zu (modules in order from 0), got %llu",
                    r->nmodules, (unsigned long long)index);
    m.index = (uint32_t)index;
    if (vigil_text_hex(p->field[1], 0, 16, 16, &m.tu_hash) != 0)
        return fail(p, "expected the tu_hash as 16 hex digits, got \"%.40s\"", p->field[1]);
    if (parse_u32(p, p->field[2], "the module's site count", &m.nsites) ||
        parse_u32(p, p->field[3], "the module's base id", &m.base_id))
        return -1;
    if ((uint64_t)m.base_id + m.nsites > UINT32_MAX)
        return fail(p, "base id %u + %u sites exceeds the 32-bit site id space",
                    m.base_id, m.nsites);
    if (reserve(p, (void **)&r->modules, &p->cap_modules, r->nmodules, sizeof m))
        return -1;
    if (parse_string(p, p->field[4], "the module path", &m.path))
        return -1;
    r->modules[r->nmodules++] = m;
    return 0;
}

static int key_site(struct parser *p)
{
    struct vigil_run_report *r = p->r;
    struct vigil_run_site s = {0};
    if (parse_u32(p, p->field[0], "the module index", &s.module) ||
        parse_u32(p, p->field[1], "the local site index", &s.index))
        return -1;
    if (s.module >= r->nmodules)
        return fail(p, "site names module %u, but only %zu module lines precede it", s.module,
                    r->nmodules);
    if (s.index >= r->modules[s.module].nsites)
        return fail(p, "site index %u is out of range: module %u has %u sites", s.index,
                    s.module, r->modules[s.module].nsites);
    for (uint32_t k = 1; k <= VIGIL_SITE_KIND_MAX && !s.kind; k++)
        if (strcmp(p->field[2], vigil_site_kind_name((enum vigil_site_kind)k)) == 0)
            s.kind = k;
    if (!s.kind)
        return fail(p, "expected a site kind (entry, backedge, load, ...), got \"%.40s\"",
                    p->field[2]);
    if (parse_uint(p, p->field[3], UINT64_MAX, "the execution count", &s.execs) ||
        parse_uint(p, p->field[4], UINT64_MAX, "the burst count", &s.bursts))
        return -1;
    /* Plain decimal or exponent notation only: strtod alone would also take "nan", hex, ... */
    const char *rate = p->field[5];
    char *end;
    errno = 0;
    s.rate = strtod(rate, &end);
    if (rate[0] < '0' || rate[0] > '9' || strspn(rate, "0123456789.eE-+") != strlen(rate) ||
        *end || errno || !(s.rate >= 0.0 && s.rate <= 1.0))
        return fail(p, "expected the rate as a number in 0..1, got \"%.40s\"", p->field[5]);
    if (reserve(p, (void **)&r->sites, &p->cap_sites, r->nsites, sizeof s) ||
        reserve(p, (void **)&p->site_lines, &p->cap_site_lines, r->nsites, sizeof *p->site_lines))
        return -1;
    p->site_lines[r->nsites] = p->rd.line;
    r->sites[r->nsites++] = s;
    r->bursts_total += s.bursts;
    return 0;
}

static int key_crash(struct parser *p)
{
    struct vigil_run_report *r = p->r;
    uint64_t sig;
    if (p->rd.version < 2)
        return fail(p, "\"crash\" is not a key of run report version %u; expected version 2",
                    p->rd.version);
    if (parse_uint(p, p->field[0], 64, "the signal number", &sig) ||
        parse_hex(p, p->field[1], "the faulting PC in hex", &r->crash_pc) ||
        parse_hex(p, p->field[2], "the file offset in hex", &r->crash_file_offset))
        return -1;
    r->crash_signal = (int)sig;
    if (parse_string(p, p->field[3], "the path of the faulting file", &r->crash_path))
        return -1;
    r->has_crash = 1;
    return 0;
}

enum key_flags { ONCE = 1, REQUIRED = 2 };

struct key {
    const char *name;
    int nfields;
    int flags;
    int (*parse)(struct parser *p);
};

/* The keys of run.txt, in the order the writer emits them. "exit", "signal" and "running" (a
 * report written while the program runs) share one slot: exactly one of them is required. */
static const struct key keys[] = {
    {"program", 1, ONCE | REQUIRED, key_program},
    {"arg", 2, 0, key_arg},
    {"pid", 1, ONCE | REQUIRED, key_pid},
    {"ppid", 1, ONCE | REQUIRED, key_ppid},
    {"exit", 1, ONCE | REQUIRED, key_exit},
    {"signal", 1, ONCE | REQUIRED, key_signal},
    {"running", 0, ONCE | REQUIRED, key_running},
    {"start_unix_ns", 1, ONCE | REQUIRED, key_start},
    {"duration_ns", 1, ONCE | REQUIRED, key_duration},
    {"option", 2, 0, key_option},
    {"tools", 1, ONCE | REQUIRED, key_tools},
    {"module", 5, 0, key_module},
    {"site", 6, 0, key_site},
    {"crash", 4, ONCE, key_crash},
};
#define NKEYS (sizeof keys / sizeof keys[0])
#define KEY_EXIT 4
#define KEY_SIGNAL 5
#define KEY_RUNNING 6
#define ENDING_KEYS "\"exit\", \"signal\" or \"running\""

struct site_order {
    uint32_t module, index;
    unsigned line;
};

static int compare_site_order(const void *a, const void *b)
{
    const struct site_order *x = a, *y = b;
    if (x->module != y->module)
        return x->module < y->module ? -1 : 1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    return x->line < y->line ? -1 : x->line > y->line;
}

static int check_duplicate_sites(struct parser *p)
{
    struct vigil_run_report *r = p->r;
    if (r->nsites < 2)
        return 0;
    struct site_order *order = malloc(r->nsites * sizeof *order);
    if (!order)
        return fail(p, "out of memory");
    for (size_t i = 0; i < r->nsites; i++)
        order[i] = (struct site_order){r->sites[i].module, r->sites[i].index, p->site_lines[i]};
    qsort(order, r->nsites, sizeof *order, compare_site_order);
    int rc = 0;
    for (size_t i = 1; i < r->nsites && !rc; i++) {
        if (order[i].module == order[i - 1].module && order[i].index == order[i - 1].index) {
            p->rd.line = order[i].line;
            rc = fail(p, "site %u of module %u is listed twice (first on line %u); expected "
                      "each site once", order[i].index, order[i].module, order[i - 1].line);
        }
    }
    free(order);
    return rc;
}

static int parse_line(struct parser *p, char *line)
{
    char *words[1 + MAX_FIELDS];
    int n = vigil_text_split(&p->rd, line, words, 1 + MAX_FIELDS);
    if (n < 0)
        return -1;
    const char *key = words[0];
    p->field = words + 1;
    p->nfields = n - 1;
    for (size_t k = 0; k < NKEYS; k++) {
        if (strcmp(key, keys[k].name) != 0)
            continue;
        if (p->nfields != keys[k].nfields)
            return fail(p, "expected %d field%s after \"%s\", got %d", keys[k].nfields,
                        keys[k].nfields == 1 ? "" : "s", key, p->nfields);
        int ending = k == KEY_EXIT || k == KEY_SIGNAL || k == KEY_RUNNING;
        size_t slot = ending ? KEY_EXIT : k;
        if ((keys[k].flags & ONCE) && p->seen[slot])
            return fail(p, ending ? "\"%s\" follows another ending line; expected one of " ENDING_KEYS
                                  : "\"%s\" appears twice; expected it once", key);
        p->seen[slot] = 1;
        return keys[k].parse(p);
    }
    return fail(p, "unknown key \"%.40s\"; expected one of the keys of run report version %d",
                key, VIGIL_RUN_FORMAT_VERSION);
}

/* Every required key was seen, at the end line. */
static int check_required(struct parser *p)
{
    for (size_t k = 0; k < NKEYS; k++)
        if ((keys[k].flags & REQUIRED) && k != KEY_SIGNAL && k != KEY_RUNNING && !p->seen[k])
            return fail(p, "reached \"end\" without a \"%s\" line; expected one",
                        k == KEY_EXIT ? "exit\", \"signal\" or \"running" : keys[k].name);
    return 0;
}

int vigil_run_report_parse(const char *text, size_t len, const char *name,
                           struct vigil_run_report *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    struct parser p = {.r = r};
    vigil_text_begin(&p.rd, &run_format, text, len, name, err, errlen);
    int rc = -1, got;
    /* Lines are split in place; any line fits a buffer as long as the text (string fields,
     * argv elements above all, have no length limit). */
    char *line = malloc(len + 1);
    if (!line) {
        fail(&p, "out of memory");
        goto out;
    }
    while ((got = vigil_text_next_line(&p.rd, line, len + 1)) > 0) {
        if (got == VIGIL_TEXT_END ? check_required(&p) : parse_line(&p, line))
            goto out;
    }
    if (got != VIGIL_TEXT_DONE || check_duplicate_sites(&p))
        goto out;
    r->version = p.rd.version;
    rc = 0;
out:
    free(line);
    free(p.site_lines);
    if (rc)
        vigil_run_report_free(r);
    return rc;
}

int vigil_run_report_load(const char *path, struct vigil_run_report *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    char file[4096];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(file, sizeof file, "%s/%s", path, VIGIL_RUN_FILE);
    else
        snprintf(file, sizeof file, "%s", path);

    char *text;
    size_t len;
    int loaded = vigil_text_load_file(file, MAX_FILE, &text, &len, err, errlen);
    if (loaded != 0) {
        size_t n = strnlen(err, errlen);
        if (loaded == -1 && n < errlen)   /* cannot open: say what would have been right */
            snprintf(err + n, errlen - n, " (expected a run report directory or its %s)",
                     VIGIL_RUN_FILE);
        return -1;
    }
    int rc = vigil_run_report_parse(text, len, file, r, err, errlen);
    free(text);
    return rc;
}

void vigil_run_report_free(struct vigil_run_report *r)
{
    free(r->program);
    for (int i = 0; i < r->argc; i++)
        free(r->argv[i]);
    free(r->argv);
    for (size_t i = 0; i < r->noptions; i++) {
        free(r->option_names[i]);
        free(r->option_values[i]);
    }
    free(r->option_names);
    free(r->option_values);
    free(r->tools);
    for (size_t i = 0; i < r->nmodules; i++)
        free(r->modules[i].path);
    free(r->modules);
    free(r->sites);
    free(r->crash_path);
    memset(r, 0, sizeof *r);
}
