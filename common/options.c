/* Runtime options: the table, defaults, the VIGIL_OPTIONS parser and the help listing, all
 * generated from options.inc. Used by libvigil (before libc is fully usable for it: no malloc,
 * no exit, no stdio streams) and by the `vigil` command. */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct vigil_option_desc vigil_option_table[] = {
#define VIGIL_OPTION(name, type, def, help) \
    {#name, VIGIL_OPT_##type, def, help, offsetof(struct vigil_options, name)},
#include "options.inc"
#undef VIGIL_OPTION
};
const size_t vigil_option_count = sizeof vigil_option_table / sizeof vigil_option_table[0];

static const char *const type_names[] = {
    [VIGIL_OPT_BOOL] = "bool", [VIGIL_OPT_UINT] = "uint", [VIGIL_OPT_DOUBLE] = "double",
    [VIGIL_OPT_STRING] = "string", [VIGIL_OPT_ENUM] = "enum",
};


/* The choices of an ENUM option: the "{a,b,c}" prefix of its help text. Is value one? */
static int enum_has_choice(const char *help, const char *value)
{
    if (help[0] != '{')
        return 0;
    const char *p = help + 1, *close = strchr(help, '}');
    size_t vlen = strlen(value);
    while (close && p < close) {
        const char *end = p;
        while (end < close && *end != ',')
            end++;
        if ((size_t)(end - p) == vlen && memcmp(p, value, vlen) == 0)
            return 1;
        p = end + 1;
    }
    return 0;
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"1", "true", "yes"}, *const no[] = {"0", "false", "no"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(v, yes[i]) == 0)
            return *out = 1, 0;
        if (strcmp(v, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static int parse_uint(const char *v, uint32_t *out)
{
    uint64_t n = 0;
    if (!*v)
        return -1;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        n = n * 10 + (uint64_t)(*p - '0');
        if (n > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)n;
    return 0;
}

/* Powers of ten that a double holds exactly. */
static const double exact_powers_of_ten[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

int vigil_parse_decimal(const char *v, double *out)
{
    /* Decimal or exponent notation only ("nan", "inf" and hex floats are refused). Digits worth
     * at most 2^53 and a power of ten up to 22 are two exact operands and one rounding, as
     * exact as strtod. That covers every value an option takes, so libvigil's start-up does
     * not run strtod, whose code (with its big-number helpers) is more pages of libc made
     * resident in every process (docs/leaks.md, "Resident memory"). */
    const char *p = v;
    int negative = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    uint64_t digits = 0;
    int exponent = 0, ndigits = 0, exact = 1;
    for (int seen_point = 0;; p++) {
        if (*p == '.' && !seen_point) {
            seen_point = 1;
            continue;
        }
        if (*p < '0' || *p > '9')
            break;
        ndigits++;
        if (digits > ((UINT64_C(1) << 53) - 9) / 10)
            exact = 0;   /* more digits than a double holds: strtod rounds them */
        else
            digits = digits * 10 + (uint64_t)(*p - '0'), exponent -= seen_point;
    }
    if (!ndigits)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        int exp_negative = *p == '-';
        if (*p == '-' || *p == '+')
            p++;
        if (*p < '0' || *p > '9')
            return -1;
        int e = 0;
        for (; *p >= '0' && *p <= '9'; p++)
            e = e < 10000 ? e * 10 + (*p - '0') : e;
        exponent += exp_negative ? -e : e;
    }
    if (*p)
        return -1;
    double d;
    if (exact && exponent >= -22 && exponent <= 22) {
        d = (double)digits;
        d = exponent < 0 ? d / exact_powers_of_ten[-exponent] : d * exact_powers_of_ten[exponent];
    } else {
        char *end;
        errno = 0;
        d = fabs(strtod(v, &end));
        if (*end || errno || !isfinite(d))
            return -1;
    }
    *out = negative ? -d : d;
    return 0;
}

/* Parse value into field, which has d's type. */
static int set_field(void *field, const struct vigil_option_desc *d, const char *value,
                     char *why, size_t whylen)
{
    switch (d->type) {
    case VIGIL_OPT_BOOL:
        if (parse_bool(value, field) == 0)
            return 0;
        snprintf(why, whylen, "expected 0/1, true/false or yes/no");
        return -1;
    case VIGIL_OPT_UINT:
        if (parse_uint(value, field) == 0)
            return 0;
        snprintf(why, whylen, "expected a decimal integer 0..4294967295");
        return -1;
    case VIGIL_OPT_DOUBLE:
        if (vigil_parse_decimal(value, field) == 0)
            return 0;
        snprintf(why, whylen, "expected a decimal number such as 0.001 or 1e-3");
        return -1;
    case VIGIL_OPT_ENUM:
        if (!enum_has_choice(d->help, value)) {
            const char *close = strchr(d->help, '}');
            snprintf(why, whylen, "expected one of %.*s", close ? (int)(close - d->help + 1) : 0,
                     d->help);
            return -1;
        }
        /* fall through: stored like a string */
    case VIGIL_OPT_STRING:
        if (strlen(value) >= VIGIL_OPT_STRING_MAX) {
            snprintf(why, whylen, "expected at most %d characters", VIGIL_OPT_STRING_MAX - 1);
            return -1;
        }
        strcpy(field, value);
        return 0;
    }
    snprintf(why, whylen, "internal error: unknown option type");
    return -1;
}

size_t vigil_option_item_len(const char *text)
{
    const char *p = text;
    char quote = 0;
    for (; *p && (quote || !vigil_option_separator(*p)); p++) {
        if (quote && *p == quote)
            quote = 0;
        else if (!quote && (*p == '"' || *p == '\'') && p > text && p[-1] == '=')
            quote = *p;
    }
    return (size_t)(p - text);
}

int vigil_option_unquote(const char *value, size_t len, char *out, size_t outlen)
{
    if (len >= 1 && (value[0] == '"' || value[0] == '\'')) {
        if (len < 2 || value[len - 1] != value[0])
            return -1;
        value++, len -= 2;
    }
    if (len >= outlen)
        return -1;
    memcpy(out, value, len);
    out[len] = '\0';
    return 0;
}

static size_t field_size(const struct vigil_option_desc *d)
{
    return d->type == VIGIL_OPT_BOOL ? sizeof(int)
         : d->type == VIGIL_OPT_UINT ? sizeof(uint32_t)
         : d->type == VIGIL_OPT_DOUBLE ? sizeof(double) : VIGIL_OPT_STRING_MAX;
}

static const struct vigil_option_desc *set_find(const struct vigil_option_set *set, const char *name,
                                                size_t len)
{
    for (size_t i = 0; i < set->count; i++)
        if (strlen(set->table[i].name) == len && memcmp(set->table[i].name, name, len) == 0)
            return &set->table[i];
    return NULL;
}

void vigil_optset_defaults(const struct vigil_option_set *set, void *values)
{
    char why[8];
    memset(values, 0, set->size);
    for (size_t i = 0; i < set->count; i++)
        set_field((char *)values + set->table[i].offset, &set->table[i], set->table[i].def, why,
                  sizeof why);
}

int vigil_optset_set(const struct vigil_option_set *set, void *values, const char *name,
                     const char *value, char *why, size_t whylen)
{
    const struct vigil_option_desc *d = set_find(set, name, strlen(name));
    if (!d) {
        snprintf(why, whylen, "unknown option \"%s\"", name);
        return -1;
    }
    /* Parse into scratch space so that a bad value leaves the option untouched. */
    union { int b; uint32_t u; double d; char s[VIGIL_OPT_STRING_MAX]; } scratch;
    if (set_field(&scratch, d, value, why, whylen) != 0)
        return -1;
    memcpy((char *)values + d->offset, &scratch, field_size(d));
    return 0;
}

void vigil_optset_format(const struct vigil_option_set *set, const void *values, size_t i,
                         char *buf, size_t len)
{
    if (i >= set->count || len == 0) {
        if (len)
            buf[0] = '\0';
        return;
    }
    const struct vigil_option_desc *d = &set->table[i];
    const void *field = (const char *)values + d->offset;
    switch (d->type) {
    case VIGIL_OPT_BOOL:
        snprintf(buf, len, "%d", *(const int *)field ? 1 : 0);
        break;
    case VIGIL_OPT_UINT:
        snprintf(buf, len, "%u", *(const uint32_t *)field);
        break;
    case VIGIL_OPT_DOUBLE:
        snprintf(buf, len, "%.15g", *(const double *)field);
        break;
    case VIGIL_OPT_STRING:
    case VIGIL_OPT_ENUM:
        snprintf(buf, len, "%s", (const char *)field);
        break;
    }
}

void vigil_optset_help(const struct vigil_option_set *set, void (*emit)(void *arg, const char *line),
                       void *arg)
{
    char line[1024], name[96];
    for (size_t i = 0; i < set->count; i++) {
        const struct vigil_option_desc *d = &set->table[i];
        snprintf(name, sizeof name, "%s%s%s", set->prefix, set->prefix[0] ? "." : "", d->name);
        snprintf(line, sizeof line, "  %-20s %-7s %-10s %s", name, type_names[d->type],
                 d->def[0] ? d->def : "\"\"", d->help);
        emit(arg, line);
    }
}

const char *vigil_option_type_name(enum vigil_opt_type type)
{
    return type_names[type];
}

const struct vigil_option_set vigil_core_options = {
    "", vigil_option_table, sizeof vigil_option_table / sizeof vigil_option_table[0],
    sizeof(struct vigil_options),
};

void vigil_options_defaults(struct vigil_options *o)
{
    vigil_optset_defaults(&vigil_core_options, o);
}

int vigil_options_set(struct vigil_options *o, const char *name, const char *value,
                      char *why, size_t whylen)
{
    return vigil_optset_set(&vigil_core_options, o, name, value, why, whylen);
}

int vigil_options_parse(struct vigil_options *o, const char *text, const char *source,
                        void (*err)(void *arg, const char *msg), void *arg)
{
    int errors = 0;
    char msg[512], why[160], key[64], value[VIGIL_OPT_STRING_MAX + 1], current[VIGIL_OPT_STRING_MAX];
    const char *item = text ? text : "";
    while (*item) {
        const char *end = item + vigil_option_item_len(item);
        int len = (int)(end - item);
        const char *eq = memchr(item, '=', (size_t)len);
        const char *show = len > 80 ? "..." : "";
        int showlen = len > 80 ? 80 : len;
        if (len == 0) {
            /* empty item ("a=1::b=2" or a trailing ':'): nothing to do */
        } else if (!eq || eq == item) {
            snprintf(msg, sizeof msg, "%s: ignoring \"%.*s%s\": expected key=value", source,
                     showlen, item, show);
            errors++, err(arg, msg);
        } else if (memchr(item, '.', (size_t)(eq - item))) {
            /* "tool.key=value": a tool option, read by the runtime through vigil_tool_option */
        } else {
            size_t klen = (size_t)(eq - item), vlen = (size_t)(end - eq - 1);
            const struct vigil_option_desc *d = set_find(&vigil_core_options, item, klen);
            if (!d || klen >= sizeof key) {
                snprintf(msg, sizeof msg, "%s: ignoring \"%.*s%s\": unknown option \"%.*s\" "
                         "(help=1 lists them)", source, showlen, item, show,
                         (int)(klen > 40 ? 40 : klen), item);
                errors++, err(arg, msg);
            } else {
                memcpy(key, item, klen);
                key[klen] = '\0';
                int bad_value = vigil_option_unquote(eq + 1, vlen, value, sizeof value) != 0;
                if (bad_value || vigil_options_set(o, key, value, why, sizeof why) != 0) {
                    if (bad_value)
                        snprintf(why, sizeof why, "expected at most %d characters, and a closing quote "
                                 "after an opening one", VIGIL_OPT_STRING_MAX - 1);
                    vigil_options_format(o, (size_t)(d - vigil_option_table), current,
                                         sizeof current);
                    snprintf(msg, sizeof msg, "%s: ignoring \"%.*s%s\": %s; keeping %s=%s", source,
                             showlen, item, show, why, key, current);
                    errors++, err(arg, msg);
                }
            }
        }
        item = *end ? end + 1 : end;
    }
    return errors;
}

void vigil_options_format(const struct vigil_options *o, size_t i, char *buf, size_t len)
{
    vigil_optset_format(&vigil_core_options, o, i, buf, len);
}

void vigil_options_help(void (*emit)(void *arg, const char *line), void *arg)
{
    char line[1024];
    emit(arg, "vigil options: VIGIL_OPTIONS=name=value:name=value (tool options: tool.key=value)");
    snprintf(line, sizeof line, "  %-20s %-7s %-10s %s", "name", "type", "default", "meaning");
    emit(arg, line);
    vigil_optset_help(&vigil_core_options, emit, arg);
}
