/* A tool's options table, generated from its tools/<name>/options.inc (rows
 * VIGIL_OPTION(name, type, default, help), as common/options.inc). In each part of the tool
 * that reads its options (runtime/ and cmd/):
 *
 *     #define VIGIL_OPTSET_TOOL leak
 *     #define VIGIL_OPTSET_ROWS "tools/leak/options.inc"
 *     #include "optset.h"
 *
 * defines struct leak_options (one field per row) and leak_option_set (a struct
 * vigil_option_set whose prefix is "leak"). Define VIGIL_OPTSET_TYPE_ONLY first for the struct
 * alone (in the tool's other files). The runtime fills a tool's values (struct vigil_tool's
 * options and option_values) with the defaults and the "leak.key=value" items of VIGIL_OPTIONS
 * before the tool's init. */
#include <stddef.h>

#include "options.h"

#define VIGIL_OPTSET_CAT2(a, b) a##b
#define VIGIL_OPTSET_CAT(a, b) VIGIL_OPTSET_CAT2(a, b)
#define VIGIL_OPTSET_STR2(a) #a
#define VIGIL_OPTSET_STR(a) VIGIL_OPTSET_STR2(a)
#define VIGIL_OPTSET_STRUCT VIGIL_OPTSET_CAT(VIGIL_OPTSET_TOOL, _options)

struct VIGIL_OPTSET_STRUCT {
#define VIGIL_OPTION(name, type, def, help) VIGIL_OPT_FIELD_##type(name)
#include VIGIL_OPTSET_ROWS
#undef VIGIL_OPTION
};

#ifndef VIGIL_OPTSET_TYPE_ONLY
static const struct vigil_option_desc VIGIL_OPTSET_CAT(VIGIL_OPTSET_TOOL, _option_table)[] = {
#define VIGIL_OPTION(name, type, def, help) \
    {#name, VIGIL_OPT_##type, def, help, offsetof(struct VIGIL_OPTSET_STRUCT, name)},
#include VIGIL_OPTSET_ROWS
#undef VIGIL_OPTION
};
static const struct vigil_option_set VIGIL_OPTSET_CAT(VIGIL_OPTSET_TOOL, _option_set) = {
    VIGIL_OPTSET_STR(VIGIL_OPTSET_TOOL),
    VIGIL_OPTSET_CAT(VIGIL_OPTSET_TOOL, _option_table),
    sizeof VIGIL_OPTSET_CAT(VIGIL_OPTSET_TOOL, _option_table) /
        sizeof VIGIL_OPTSET_CAT(VIGIL_OPTSET_TOOL, _option_table)[0],
    sizeof(struct VIGIL_OPTSET_STRUCT),
};
#endif
