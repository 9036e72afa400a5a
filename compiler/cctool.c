/* The registry of the tools' compiler parts (cctool.h). */
#include "cctool.h"
#include "xform.h"

#include "ccconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every tool's compiler part: pointers placed by VIGIL_REGISTER_CC_TOOL. Weak, so that a
 * vigil-cc without any tool still links. */
extern const struct vigil_cc_tool *const __start_vigil_cc_tools[] __attribute__((weak));
extern const struct vigil_cc_tool *const __stop_vigil_cc_tools[] __attribute__((weak));

unsigned xcc_active_tools(struct vigil_xform *x, const struct vigil_cc_tool **out)
{
    if (!x->cc_tools_known) {
        x->cc_tools_known = 1;
        for (const struct vigil_cc_tool *const *t = __start_vigil_cc_tools;
             t && t < __stop_vigil_cc_tools && x->ncc_tools < VIGIL_MAX_CC_TOOLS; t++)
            if (!(*t)->active || (*t)->active(x))
                x->cc_tools[x->ncc_tools++] = *t;
    }
    for (unsigned i = 0; out && i < x->ncc_tools; i++)
        out[i] = x->cc_tools[i];
    return x->ncc_tools;
}

void **xcc_state(struct xfunc *f, const struct vigil_cc_tool *tool)
{
    for (unsigned i = 0; i < f->x->ncc_tools; i++)
        if (f->x->cc_tools[i] == tool)
            return &f->tool_state[i];
    return NULL;
}

const struct vigil_cc_tool *const *xcc_all_tools(size_t *n)
{
    *n = __start_vigil_cc_tools ? (size_t)(__stop_vigil_cc_tools - __start_vigil_cc_tools) : 0;
    return __start_vigil_cc_tools;
}

const char *xcc_setting(const struct vigil_cc_tool *tool, const char *name)
{
    for (size_t i = 0; i < tool->nsettings; i++)
        if (!strcmp(tool->settings[i].name, name)) {
            const char *v = getenv(name);
            return v ? v : tool->settings[i].def;
        }
    return NULL;
}

int xcc_config_match(const struct vigil_xform *x, const struct vigil_cc_tool *tool, const char *section,
                     const char *function, const char *file)
{
    const struct vigil_ccconfig *c = x->settings->config;
    if (!c)
        return 0;
    if (vigil_ccconfig_match(c, section, function, file))
        return 1;
    if (!tool)
        return 0;
    char own[256];
    snprintf(own, sizeof own, "%s.%s", tool->name, section);
    return vigil_ccconfig_match(c, own, function, file);
}

int xcc_config_has(const struct vigil_xform *x, const struct vigil_cc_tool *tool, const char *section)
{
    const struct vigil_ccconfig *c = x->settings->config;
    if (!c)
        return 0;
    if (vigil_ccconfig_has(c, section))
        return 1;
    if (!tool)
        return 0;
    char own[256];
    snprintf(own, sizeof own, "%s.%s", tool->name, section);
    return vigil_ccconfig_has(c, own);
}

int xcc_is_tool_section(const char *section)
{
    size_t n;
    const struct vigil_cc_tool *const *tools = xcc_all_tools(&n);
    for (size_t t = 0; t < n; t++) {
        size_t len = strlen(tools[t]->name);
        if (strncmp(section, tools[t]->name, len) != 0 || section[len] != '.')
            continue;
        for (const char *const *s = tools[t]->config_sections; s && *s; s++)
            if (!strcmp(section + len + 1, *s))
                return 1;
    }
    return 0;
}

int xcc_is_tool_setting(const char *name, size_t len)
{
    size_t n;
    const struct vigil_cc_tool *const *tools = xcc_all_tools(&n);
    for (size_t t = 0; t < n; t++)
        for (size_t i = 0; i < tools[t]->nsettings; i++)
            if (strlen(tools[t]->settings[i].name) == len && !strncmp(tools[t]->settings[i].name, name, len))
                return 1;
    return 0;
}
