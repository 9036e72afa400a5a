/* Runtime options, generated from common/options.inc. The parser allocates nothing and never
 * exits: bad input is described in an error callback and the default stays in force. */
#ifndef VIGIL_OPTIONS_H
#define VIGIL_OPTIONS_H
#include <stddef.h>
#include <stdint.h>

#define VIGIL_OPT_STRING_MAX 256

enum vigil_opt_type { VIGIL_OPT_BOOL, VIGIL_OPT_UINT, VIGIL_OPT_DOUBLE, VIGIL_OPT_STRING, VIGIL_OPT_ENUM };

struct vigil_options {
#define VIGIL_OPT_FIELD_BOOL(n) int n;
#define VIGIL_OPT_FIELD_UINT(n) uint32_t n;
#define VIGIL_OPT_FIELD_DOUBLE(n) double n;
#define VIGIL_OPT_FIELD_STRING(n) char n[VIGIL_OPT_STRING_MAX];
#define VIGIL_OPT_FIELD_ENUM(n) char n[VIGIL_OPT_STRING_MAX];
#define VIGIL_OPTION(name, type, def, help) VIGIL_OPT_FIELD_##type(name)
#include "options.inc"
#undef VIGIL_OPTION
};

struct vigil_option_desc {
    const char *name;
    enum vigil_opt_type type;
    const char *def;
    const char *help;
    size_t offset;
};

extern const struct vigil_option_desc vigil_option_table[];
extern const size_t vigil_option_count;

/* A table of options and the struct its values live in: the core's (vigil_core_options,
 * prefix "") or a tool's (prefix: the tool's name; tools/<name>/options.inc through optset.h). */
struct vigil_option_set {
    const char *prefix;
    const struct vigil_option_desc *table;
    size_t count;
    size_t size;   /* of the values struct */
};
extern const struct vigil_option_set vigil_core_options;

/* Items of VIGIL_OPTIONS are separated by ':' or white space (as in ASAN_OPTIONS); a value
 * quoted with ' or " may hold them (out="/tmp/my reports"). */
static inline int vigil_option_separator(char c)
{
    return c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
/* The length of the item that starts at text: up to the first separator outside quotes. */
size_t vigil_option_item_len(const char *text);
/* The value of an item, its quotes removed: copies at most len bytes of value into out
 * (outlen bytes); -1 when it does not fit or a quote is not closed. */
int vigil_option_unquote(const char *value, size_t len, char *out, size_t outlen);

/* The set's defaults into values (set->size bytes). */
void vigil_optset_defaults(const struct vigil_option_set *set, void *values);
/* Set one option of the set by name; 0, or -1 with a reason in why (values untouched). */
int vigil_optset_set(const struct vigil_option_set *set, void *values, const char *name,
                     const char *value, char *why, size_t whylen);
/* The current value of the set's option i as text. */
void vigil_optset_format(const struct vigil_option_set *set, const void *values, size_t i,
                         char *buf, size_t len);
/* One line per option ("  prefix.name type default meaning") through emit. */
void vigil_optset_help(const struct vigil_option_set *set, void (*emit)(void *arg, const char *line),
                       void *arg);
/* "bool", "uint", "double", "string", "enum". */
const char *vigil_option_type_name(enum vigil_opt_type type);

/* Fill every field with its default. */
void vigil_options_defaults(struct vigil_options *o);
/* A decimal number ("0.001", "12", "1e-3", "-2.5"): 0 and *out, or -1 (also for nan, inf and
 * hex floats). Correctly rounded, as strtod. */
int vigil_parse_decimal(const char *text, double *out);

/* Parse "key=value:key=value" (',' inside values is data; ':' or white space separates). For each bad item,
 * calls err(arg, message) with a message naming `source` (e.g. "VIGIL_OPTIONS"), the item and
 * what was expected; keeps going. Returns the number of errors. */
int vigil_options_parse(struct vigil_options *o, const char *text, const char *source,
                        void (*err)(void *arg, const char *msg), void *arg);
/* Set one option by name from text; 0 on success, -1 with a reason in why. */
int vigil_options_set(struct vigil_options *o, const char *name, const char *value,
                      char *why, size_t whylen);
/* Render the current value of option i as text into buf. */
void vigil_options_format(const struct vigil_options *o, size_t i, char *buf, size_t len);
/* Write the help listing (name, type, default, meaning) through a write callback. */
void vigil_options_help(void (*emit)(void *arg, const char *line), void *arg);

#endif
