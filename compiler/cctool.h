/* The compiler side of a tool (tools/<name>/compiler/): code the tool adds to the copies at
 * the sites the transform finds. A tool fills one struct vigil_cc_tool and registers it with
 * VIGIL_REGISTER_CC_TOOL, the retained-section mechanism of the runtime and the command; the
 * transform calls every registered tool that is active for the module and names none. A
 * tool's compiler part may use the transform's helpers (xform.h). */
#ifndef VIGIL_CCTOOL_H
#define VIGIL_CCTOOL_H
#include <llvm-c/Core.h>
#include <stddef.h>
#include <stdint.h>

struct vigil_xform;
struct xfunc;

#define VIGIL_MAX_CC_TOOLS 4
#define VIGIL_MAX_CASE_SITES 64   /* a switch to more blocks (an interpreter's) gets none */

/* A setting of a tool's compiler part: an environment variable VIGIL_CC_<TOOL>_..., listed
 * by `vigil-cc --vigil-help`, part of the instrumentation cache's key, read with xcc_setting. */
struct vigil_cc_setting {
    const char *name, *def, *meaning;
};

struct vigil_cc_tool {
    const char *name;
    /* Whether the tool adds code to this module (decided from x->settings); asked once per
     * module, after the module's placeholders exist. A tool active for a module makes the
     * transform find branch and call-result sites even with their probes off. */
    int (*active)(const struct vigil_xform *x);
    /* A site of f: a conditional branch, or a condition with no edge (as_i64 NULL; `at` is
     * the br, or a select or zext/sext whose operand 0 is the i1 condition: kind
     * VIGIL_SITE_BRANCH, aux VIGIL_BRANCH_SELECT or _VALUE, counted like a branch's but
     * mid-block), or an integer or pointer call result
     * (as_i64 converts it to i64). at: the instruction in the copy being probed; original:
     * the checking copy's, or NULL; block: the original block's index or VIGIL_CFG_NONE. */
    void (*at_site)(struct xfunc *f, LLVMValueRef at, LLVMValueRef original, uint32_t site,
                    uint32_t block, LLVMValueRef (*as_i64)(struct vigil_xform *, LLVMValueRef));
    /* A case site of f: the edge of the switch `at` to the block of its successor k (one site
     * per distinct successor block, k its first successor index there, 0 = the default; kind
     * VIGIL_SITE_CASE, aux k); original and block as for at_site. Only switches of at most
     * VIGIL_MAX_CASE_SITES such edges get them. NULL: no case sites for this tool. */
    void (*at_case)(struct xfunc *f, LLVMValueRef at, LLVMValueRef original, uint32_t site, uint32_t block,
                    unsigned successor);
    /* Every site of f is known (and f->cfg_edges still there): place what was deferred. */
    void (*function_done)(struct xfunc *f);
    /* A function that VIGIL_CC_CONFIG's [skip] leaves as plain clang compiles it (no copies,
     * no sites): what the tool may still give it that needs neither (a function attribute).
     * Called as the transform reaches it. NULL: nothing. */
    void (*function_skipped)(struct vigil_xform *x, LLVMValueRef fn);
    /* Every function of the module is done (before its tables are emitted); NULL: nothing. */
    void (*module_done)(struct vigil_xform *x);
    const struct vigil_cc_setting *settings;   /* nsettings of them; NULL: none */
    size_t nsettings;
    /* The sections of VIGIL_CC_CONFIG the tool reads (xcc_config_match), without the tool's
     * name: {"tested", NULL} admits [memcheck.tested]. NULL: none. vigil-cc rejects a
     * [TOOL.SECTION] header that no tool lists. */
    const char *const *config_sections;
};

#if defined(__has_attribute) && __has_attribute(retain)
#define VIGIL_CC_SECTION_RETAIN retain,
#else
#define VIGIL_CC_SECTION_RETAIN
#endif
#define VIGIL_REGISTER_CC_TOOL(tool) \
    static const struct vigil_cc_tool *const vigil_cc_tool_ptr_##tool \
        __attribute__((used, VIGIL_CC_SECTION_RETAIN section("vigil_cc_tools"), aligned(sizeof(void *)))) = &tool

/* The tools active for x's module, in link order (at most VIGIL_MAX_CC_TOOLS); their number.
 * A tool's index in this list is its slot in struct xfunc's tool_state. */
unsigned xcc_active_tools(struct vigil_xform *x, const struct vigil_cc_tool **out);
/* Every tool's compiler part linked into vigil-cc, active or not; *n gets their number. */
const struct vigil_cc_tool *const *xcc_all_tools(size_t *n);
/* A tool setting's value: the environment's, else its default (NULL: tool has no such setting). */
const char *xcc_setting(const struct vigil_cc_tool *tool, const char *name);
/* Whether name (len bytes, not terminated) is a setting of some tool's compiler part. */
int xcc_is_tool_setting(const char *name, size_t len);

/* Whether VIGIL_CC_CONFIG (docs/config.md) names function or file (either may be NULL) in
 * [section], which applies to every tool, or in [TOOL.section], tool's own (tool NULL: only
 * the former). file is matched whole and by its base name. 0 when no config is set. */
int xcc_config_match(const struct vigil_xform *x, const struct vigil_cc_tool *tool, const char *section,
                     const char *function, const char *file);
/* Whether VIGIL_CC_CONFIG has [section] or [TOOL.section] (tool NULL: only the former), even
 * with no entry. 0 when no config is set. */
int xcc_config_has(const struct vigil_xform *x, const struct vigil_cc_tool *tool, const char *section);
/* Whether section (of a config header) is one a linked tool reads: "TOOL.S" with S in TOOL's
 * config_sections. */
int xcc_is_tool_section(const char *section);

/* tool's slot of state for f (NULL if the tool is not active): freed and cleared by the tool's
 * function_done. */
void **xcc_state(struct xfunc *f, const struct vigil_cc_tool *tool);

#endif
