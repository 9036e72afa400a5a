/* Reading VIGIL_OPTIONS: the one place the runtime reads the environment. The table-driven
 * parser (common/options.c) checks types; the ranges the sampler relies on are checked here. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SOURCE "VIGIL_OPTIONS"

/* Copy of VIGIL_OPTIONS with ':' turned into NULs: the "tool.key=value" items are looked up
 * here by vigil_tool_option. Written once by __vigil_read_options (start-up). */
static char tool_items[4096];   /* also every core item, for __vigil_option_given */
static size_t tool_items_len;
/* Per item (by its offset in tool_items): 1 once a tool has asked for it. Written by
 * __vigil_find_tool_option, in the tools' init (start-up) and, harmlessly, in their fini. */
static unsigned char tool_item_read[sizeof tool_items];
/* The keys each tool asked for (string literals of the tools), for the message about an option
 * no tool asked for. Written by __vigil_find_tool_option during the tools' init (start-up). */
static struct { const char *tool, *key; } keys_asked[64];
static unsigned keys_asked_len;
/* VIGIL_PLAN (a plan file of adaptive bug isolation), copied by __vigil_read_options. */
static char plan_path[4096];

static void report_error(void *arg, const char *msg)
{
    (void)arg;
    __vigil_message("%s", msg);
}

static void emit_help_line(void *arg, const char *line)
{
    (void)arg;
    size_t n = strlen(line);
    ssize_t w = write(2, line, n);
    w = write(2, "\n", 1);
    (void)w;
}

/* Ranges beyond the types: a value out of range is reported and the default restored. */
static void check_ranges(struct vigil_options *o)
{
    struct {
        const char *name;
        int bad;
        const char *expected;
    } checks[] = {
        {"decrement", o->decrement < 1, "a factor >= 1"},
        {"interval", o->interval < 1, "a reset count >= 1"},
        {"interval_growth", o->interval_growth < 1, "a factor >= 1"},
        {"rate_floor", !(o->rate_floor > 0 && o->rate_floor <= 1), "a rate in (0, 1]"},
        {"bursty_rate", !(o->bursty_rate > 0 && o->bursty_rate <= 1), "a rate in (0, 1]"},
        {"out", o->out[0] == '\0', "a directory name"},
    };
    char why[128];
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (!checks[i].bad)
            continue;
        for (size_t k = 0; k < vigil_option_count; k++) {
            if (strcmp(vigil_option_table[k].name, checks[i].name) != 0)
                continue;
            char value[VIGIL_OPT_STRING_MAX];
            vigil_options_format(o, k, value, sizeof value);
            vigil_options_set(o, checks[i].name, vigil_option_table[k].def, why, sizeof why);
            __vigil_message("%s: ignoring \"%s=%s\": expected %s; keeping %s=%s", SOURCE,
                            checks[i].name, value, checks[i].expected, checks[i].name,
                            vigil_option_table[k].def);
        }
    }
}

void __vigil_read_options(struct vigil_options *o)
{
    vigil_options_defaults(o);
    const char *text = getenv(SOURCE);
    if (text) {
        vigil_options_parse(o, text, SOURCE, report_error, NULL);
        size_t len = strlen(text);
        if (len >= sizeof tool_items) {
            __vigil_message("%s is longer than %zu bytes: tool options after that are ignored",
                            SOURCE, sizeof tool_items - 1);
            len = sizeof tool_items - 1;
        }
        /* One NUL-terminated item after another, values unquoted. */
        size_t n = 0;
        for (const char *item = text; *item && item < text + len;) {
            size_t ilen = vigil_option_item_len(item);
            const char *eq = memchr(item, '=', ilen);
            size_t klen = eq ? (size_t)(eq - item) + 1 : ilen;
            if (ilen && n + ilen + 1 <= sizeof tool_items) {
                memcpy(tool_items + n, item, klen);
                if (!eq || vigil_option_unquote(eq + 1, ilen - klen, tool_items + n + klen, ilen - klen + 1) != 0)
                    memcpy(tool_items + n + klen, item + klen, ilen - klen), tool_items[n + ilen] = '\0';
                n += strlen(tool_items + n) + 1;
            }
            item += ilen;
            item += *item != '\0';
        }
        tool_items_len = n;
    }
    const char *plan = getenv("VIGIL_PLAN");
    int planned = plan && plan[0];
    /* Asked for nothing: no report, so that a vigil build leaves no files where it runs (a test
     * suite that lists its working directory, a daemon whose working directory is /). */
    if (!text && !planned)
        o->report = 0;
    if (planned) {
        if (strlen(plan) >= sizeof plan_path)
            __vigil_message("VIGIL_PLAN is longer than %zu bytes: ignored", sizeof plan_path - 1);
        else
            strcpy(plan_path, plan);
    }
    check_ranges(o);
    if (o->help) {
        vigil_options_help(emit_help_line, NULL);
        __vigil_tools_help();
    }
}

int __vigil_option_given(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < tool_items_len; i += strlen(tool_items + i) + 1)
        if (strncmp(tool_items + i, name, len) == 0 && tool_items[i + len] == '=')
            return 1;
    return 0;
}

const char *__vigil_find_tool_option(const char *tool, const char *key)
{
    size_t tlen = strlen(tool), klen = strlen(key);
    const char *found = NULL;
    int known = 0;
    for (unsigned i = 0; i < keys_asked_len; i++)
        known |= strcmp(keys_asked[i].tool, tool) == 0 && strcmp(keys_asked[i].key, key) == 0;
    if (!known && keys_asked_len < sizeof keys_asked / sizeof *keys_asked)
        keys_asked[keys_asked_len++] = (typeof(keys_asked[0])){tool, key};
    for (size_t i = 0; i < tool_items_len; i += strlen(tool_items + i) + 1) {
        const char *item = tool_items + i;
        if (strncmp(item, tool, tlen) == 0 && item[tlen] == '.' &&
            strncmp(item + tlen + 1, key, klen) == 0 && item[tlen + 1 + klen] == '=') {
            found = item + tlen + 1 + klen + 1;   /* the last one given wins */
            tool_item_read[i] = 1;
        }
    }
    return found;
}

void __vigil_tool_keys_asked(const char *tool, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < keys_asked_len && n < len; i++)
        if (strcmp(keys_asked[i].tool, tool) == 0)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", keys_asked[i].key);
}

const char *__vigil_unread_tool_option(size_t *cursor)
{
    while (*cursor < tool_items_len) {
        size_t i = *cursor;
        const char *item = tool_items + i;
        *cursor = i + strlen(item) + 1;
        const char *eq = strchr(item, '=');
        const char *dot = memchr(item, '.', eq ? (size_t)(eq - item) : 0);
        if (dot && dot != item && !tool_item_read[i])
            return item;
    }
    return NULL;
}

const char *__vigil_plan_path(void)
{
    return plan_path[0] ? plan_path : NULL;
}
