/* The registry of the tools' compiler parts (cctool.h). */
#include "cctool.h"
#include "xform.h"

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
