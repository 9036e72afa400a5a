/* The per-source pipeline (front end -> load -> [pre-optimize] -> transform -> optimize ->
 * write -> back end) and the link. The front and back ends are clang processes so that every
 * language and codegen flag behaves as with plain clang; the IR work runs in-process. */
#include "pipeline.h"
#include "cache.h"
#include "cctool.h"
#include "transform.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm/Config/llvm-config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct source_job {
    const struct vcc_input *in;
    const char *output;
    char *bc_front, *bc_opt;   /* temporary bitcode: from the front end, after optimization */
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMTargetMachineRef tm;
    int fallback;              /* the transform failed: compile the original module */
    int split_cold;            /* the module has coldsplit.c's profile: the back end splits */
    struct vcc_cache_unit *cache; /* this compile's cache entry (a miss), or NULL (cache.h) */
};

/* A front- or back-end command: through the cache on a miss (its warnings are kept). */
static int run_compiler(struct vcc_job *job, struct source_job *sj, char **argv)
{
    return sj->cache ? vcc_cache_run(job, sj->cache, argv) : vcc_run(job, argv);
}

static void push_all(struct vcc_cmd *cmd, const char *const *args)
{
    for (; args && *args; args++)
        vcc_cmd_push(cmd, *args);
}

static void note(const struct vcc_job *job, const struct source_job *sj, const char *what)
{
    if (job->verbose) fprintf(stderr, "vigil-cc: %s: %s\n", what, sj->in->path);
}

/* ---- pipeline strings (all known to parse in LLVM 14-16; a bad string can abort) ---- */

static const char *full_pipeline(char level)
{
    switch (level) {
    case '1': return "default<O1>";
    case '2': return "default<O2>";
    case '3': return "default<O3>";
    case 's': return "default<Os>";
    case 'z': return "default<Oz>";
    default: return "default<O0>"; /* always-inline and friends: what clang runs at -O0 */
    }
}

/* placement=late: simplification up to and including the inliner... */
static const char *late_pre_pipeline(char level)
{
    switch (level) {
    case '1': return "thinlto-pre-link<O1>";
    case '2': return "thinlto-pre-link<O2>";
    case '3': return "thinlto-pre-link<O3>";
    case 's': return "thinlto-pre-link<Os>";
    case 'z': return "thinlto-pre-link<Oz>";
    default: return NULL;
    }
}

/* ...then, after the transform, a cleanup that promotes the transform's stack slots again and
 * does the loop optimizations of the module optimization pipeline. */
static const char *late_post_pipeline(char level)
{
    static const char light[] =
        "function(sroa,early-cse<memssa>,instcombine,simplifycfg,loop-mssa(licm),gvn,dse,"
        "instcombine,simplifycfg),globaldce,constmerge";
    static const char full[] =
        "function(sroa,early-cse<memssa>,instcombine,simplifycfg,jump-threading,"
        "correlated-propagation,instcombine,loop-mssa(licm),gvn,memcpyopt,dse,"
        "loop(loop-rotate,indvars,loop-deletion,loop-unroll-full),loop-distribute,loop-vectorize,"
        "loop-load-elim,instcombine,simplifycfg,slp-vectorizer,instcombine,loop-unroll<O2>,"
        "instcombine,loop-mssa(licm),alignment-from-assumptions,loop-sink,instsimplify,"
        "div-rem-pairs,simplifycfg),globaldce,constmerge";
    switch (level) {
    case '0': return NULL;
    case '1': case 'z': return light;
    default: return full;
    }
}

/* placement=post: the whole -O pipeline has run; the transform's stack slots are promoted
 * again and its blocks tidied, nothing more (the checking copy is already optimized). */
static const char *post_cleanup_pipeline(char level)
{
    if (level == '0')
        return NULL;
    return "function(sroa,early-cse<memssa>,instcombine,simplifycfg)";
}

/* ---- stages ---- */

/* Whether some argument of the user's contains `needle`: an option of his that ours must not
 * repeat or contradict. */
static int user_mentions(const struct vcc_args *a, const char *needle)
{
    for (int i = 0; i < a->argc; i++)
        if (strstr(a->argv[i], needle))
            return 1;
    return 0;
}

static int stage_front_end(struct vcc_job *job, struct source_job *sj)
{
    const struct vcc_args *a = &job->args;
    sj->bc_front = vcc_temp_file(job, ".bc");
    if (!sj->bc_front) return 1;
    struct vcc_cmd cmd = {0};
    vcc_cmd_push(&cmd, job->clang);
    /* The site table wants file:line, and the leak tool maps PCs to lines. Line tables the user
     * did not ask for are DWARF 4, not clang's default 5, which Valgrind 3.19 and older tools
     * cannot read ("Possibly corrupted debuginfo file"): a program built without -g must run
     * under them as its plain build does. The module's DWARF version also sets the outlined
     * copies' unit (outline.c). A user's -g, or his -fdebug-default-version, is his choice. */
    if (!a->has_debug_flag) {
        if (!user_mentions(a, "-fdebug-default-version")) vcc_cmd_push(&cmd, "-gdwarf-4");
        vcc_cmd_push(&cmd, "-gline-tables-only"); /* after -gdwarf-4, which alone means -g */
    }
    /* Frame pointers: the runtime captures allocation stacks by walking them, and code
     * without them gives one-frame stacks. Before the user's arguments, so that his own
     * -fomit-frame-pointer (which we then do not contradict at all) has the last word. */
    if (job->frame_pointers && a->omit_frame_pointer != 1) {
        vcc_cmd_push(&cmd, "-fno-omit-frame-pointer");
        /* A user's own -fno-omit-frame-pointer asks for every frame: leaves too. */
        if (job->frame_pointers == VCC_FRAME_POINTERS_NONLEAF && a->omit_frame_pointer != 0 &&
            !user_mentions(a, "omit-leaf-frame-pointer"))
            vcc_cmd_push(&cmd, "-momit-leaf-frame-pointer");
    }
    /* With the cache, the preprocessor run wrote the dependency file already. */
    int deps_done = vcc_cache_deps_written(sj->cache);
    for (int i = 0; i < a->argc; i++) {
        unsigned r = a->roles[i];
        int dep = deps_done && (r & VCC_TO_FE) ? vcc_dep_option(a->argv[i]) : 0;
        if (dep) {
            if (dep == 2) i++;
            continue;
        }
        if ((r & VCC_TO_FE) || (r & VCC_IS_LANG) || i == sj->in->argi)
            vcc_cmd_push(&cmd, a->argv[i]);
    }
    if (sj->cache) push_all(&cmd, vcc_cache_front_end_args(sj->cache));
    /* Dependency output exactly as plain clang would write it for the user's output. */
    char *dep_file = deps_done ? NULL : vcc_dep_file(a, sj->in);
    char *dep_target = deps_done ? NULL : vcc_dep_target(a, sj->in);
    if (dep_file) { vcc_cmd_push(&cmd, "-MF"); vcc_cmd_push(&cmd, dep_file); }
    if (dep_target) { vcc_cmd_push(&cmd, "-MQ"); vcc_cmd_push(&cmd, dep_target); }
    vcc_cmd_push(&cmd, "-Xclang");
    vcc_cmd_push(&cmd, "-disable-llvm-passes");
    vcc_cmd_push(&cmd, "-emit-llvm");
    vcc_cmd_push(&cmd, "-c");
    vcc_cmd_push(&cmd, "-o");
    vcc_cmd_push(&cmd, sj->bc_front);
    int status = run_compiler(job, sj, cmd.v);
    vcc_cmd_free(&cmd);
    free(dep_file);
    free(dep_target);
    return status;
}

static int load_module(struct vcc_job *job, struct source_job *sj)
{
    LLVMMemoryBufferRef buf;
    char *msg = NULL;
    if (LLVMCreateMemoryBufferWithContentsOfFile(sj->bc_front, &buf, &msg)) {
        fprintf(stderr, "vigil-cc: cannot read %s: %s\n", sj->bc_front, msg ? msg : "?");
        LLVMDisposeMessage(msg);
        return 1;
    }
    int bad = LLVMParseBitcodeInContext2(sj->ctx, buf, &sj->mod);
    LLVMDisposeMemoryBuffer(buf);
    if (bad) {
        fprintf(stderr, "vigil-cc: cannot parse the bitcode of %s (is %s from LLVM %d?)\n",
                sj->in->path, job->clang, LLVM_VERSION_MAJOR);
        return 1;
    }
    return 0;
}

static LLVMCodeGenOptLevel codegen_level(char level)
{
    switch (level) {
    case '0': return LLVMCodeGenLevelNone;
    case '1': return LLVMCodeGenLevelLess;
    case '3': return LLVMCodeGenLevelAggressive;
    default: return LLVMCodeGenLevelDefault;
    }
}

static int stage_load(struct vcc_job *job, struct source_job *sj)
{
    note(job, sj, "load");
    sj->ctx = LLVMContextCreate();
    if (load_module(job, sj)) return 1;
    /* A target machine gives the optimizer its cost model; without one (a target this build
     * does not include) the passes still run, with generic costs. */
    const char *triple = LLVMGetTarget(sj->mod);
    char *default_triple = NULL;
    if (!triple || !*triple) triple = default_triple = LLVMGetDefaultTargetTriple();
    LLVMTargetRef target;
    char *msg = NULL;
    if (!LLVMGetTargetFromTriple(triple, &target, &msg))
        sj->tm = LLVMCreateTargetMachine(target, triple, "", "", codegen_level(job->args.opt_level),
                                         LLVMRelocDefault, LLVMCodeModelDefault);
    else if (job->debug)
        fprintf(stderr, "vigil-cc: note: no LLVM target for %s (%s): generic optimization costs\n",
                triple, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    LLVMDisposeMessage(default_triple);
    return 0;
}

static int run_passes(struct vcc_job *job, struct source_job *sj, const char *passes)
{
    if (!passes || !*passes) return 0;
    if (job->verbose) fprintf(stderr, "vigil-cc: passes %s: %s\n", passes, sj->in->path);
    const struct vcc_args *a = &job->args;
    char level = a->opt_level;
    /* The tuning clang derives from the -O level and -f flags (clang's defaults). */
    int loop_vec = level == '2' || level == '3' || level == 's';
    int slp_vec = loop_vec || level == 'z';
    int unroll = level != '0' && level != '1';
    if (a->loop_vectorize >= 0) loop_vec = a->loop_vectorize;
    if (a->slp_vectorize >= 0) slp_vec = a->slp_vectorize;
    if (a->unroll_loops >= 0) unroll = a->unroll_loops;
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(opts, loop_vec);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, slp_vec);
    LLVMPassBuilderOptionsSetLoopUnrolling(opts, unroll);
    LLVMPassBuilderOptionsSetLoopInterleaving(opts, unroll);
    LLVMErrorRef err = LLVMRunPasses(sj->mod, passes, sj->tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (err) {
        char *msg = LLVMGetErrorMessage(err);
        fprintf(stderr, "vigil-cc: pipeline '%s' failed on %s: %s\n", passes, sj->in->path, msg);
        LLVMDisposeErrorMessage(msg);
        return 1;
    }
    return 0;
}

static int stage_pre_optimize(struct vcc_job *job, struct source_job *sj)
{
    char level = job->args.opt_level;
    switch (job->placement) {
    case VCC_PLACE_LATE: {
        const char *custom = job->settings.late_pre;
        return run_passes(job, sj, *custom ? custom : late_pre_pipeline(level));
    }
    case VCC_PLACE_POST:
        return run_passes(job, sj, full_pipeline(level));
    default:
        return 0;
    }
}

/* Back to the module as the front end wrote it, compiled as plain clang would. */
static int fall_back(struct vcc_job *job, struct source_job *sj)
{
    LLVMDisposeModule(sj->mod);
    sj->mod = NULL;
    sj->fallback = 1;
    sj->split_cold = 0;   /* the original module has no synthetic profile */
    return load_module(job, sj);
}

/* Basic-block sections the user asks for himself are his: no split of ours on top. */
static int user_splits_sections(const struct vcc_args *a)
{
    return user_mentions(a, "-fbasic-block-sections") || user_mentions(a, "split-machine-functions") ||
           user_mentions(a, "bbsections-cold-text-prefix");
}

static int stage_transform(struct vcc_job *job, struct source_job *sj)
{
    note(job, sj, "transform");
    const struct vcc_settings *s = &job->settings;
    struct vigil_transform_settings ts = {
        .debug = job->debug,
        .probe_accesses = vcc_setting_on(s->probe_accesses),
        .probe_branches = vcc_setting_on(s->probe_branches),
        .probe_returns = vcc_setting_on(s->probe_returns),
        .probe_calls = vcc_setting_on(s->probe_calls),
        .guard_probes = vcc_setting_on(s->guard_probes),
        .guard_accesses = vcc_setting_on(s->guard_accesses),
        .direct_calls = vcc_setting_on(s->direct_calls),
        .merge_span = strtol(s->merge_span, NULL, 10) > 0 ? strtol(s->merge_span, NULL, 10) : 0,
        .loop_counters = vcc_setting_on(s->loop_counters),
        .loop_calls = vcc_setting_on(s->loop_calls),
        .counted_loops = vcc_setting_on(s->counted_loops),
        .outline = vcc_setting_on(s->outline),
        .outline_loops = vcc_setting_on(s->outline_loops),
        .known_zeros = vcc_setting_on(s->known_zeros),
        .dual_max = strtol(s->dual_max, NULL, 10) > 0 ? strtol(s->dual_max, NULL, 10) : 10000,
        .giant_loops = strtol(s->giant_loops, NULL, 10) >= 0 ? strtol(s->giant_loops, NULL, 10) : 8,
        .short_loop_max = strtol(s->short_loop_max, NULL, 10),
        .inlined_checks = strtol(s->inlined_checks, NULL, 10),
        .split_cold = vcc_setting_on(s->split_cold) && !user_splits_sections(&job->args),
        .pred_counters = job->pred_counters,
        .pred_remove_redundant = vcc_setting_on(s->pred_remove_redundant),
        .thread_counters = job->thread_counters,
        .source_name = sj->in->path,
        .config = job->config,
        .on_function = sj->cache ? vcc_cache_on_function : NULL,
        .on_function_ctx = sj->cache,
    };
    struct vigil_transform_stats stats = {0};
    char err[512] = "";
    int rc = vigil_transform_module(sj->mod, &ts, &stats, err, sizeof err);
    sj->split_cold = rc >= 0 && stats.split_cold;
    if (rc < 0) {
        /* Always said: a user must know that this file's code is not monitored. */
        fprintf(stderr, "vigil-cc: warning: %s: compiling it uninstrumented: %s\n", sj->in->path,
                err[0] ? err : "the transform gave up");
        if (sj->cache) vcc_cache_module(sj->cache, NULL, err[0] ? err : "the transform gave up");
        return fall_back(job, sj);
    }
    char *msg = NULL;
    if (job->verify && LLVMVerifyModule(sj->mod, LLVMReturnStatusAction, &msg)) {
        size_t line = strcspn(msg, "\n");
        fprintf(stderr, "vigil-cc: warning: %s: the vigil transform produced invalid IR (%.*s); "
                        "compiling it uninstrumented\n", sj->in->path, (int)line, msg);
        LLVMDisposeMessage(msg);
        if (sj->cache) vcc_cache_module(sj->cache, NULL, "the transform produced invalid IR");
        return fall_back(job, sj);
    }
    LLVMDisposeMessage(msg);
    if (sj->cache) vcc_cache_module(sj->cache, &stats, NULL);
    if (job->debug)
        fprintf(stderr, "vigil-cc: note: %s: %u functions, %u transformed, %u skipped, "
                        "%u entry (%u of inlined calls) and %u back-edge checks (%u batched, %u of them counted, %u short loops without), %u outlined (%u with loops, %u big: entry only), %u probes (%u accesses merged into others), "
                        "%u predicate counters (%u branch predicates left out)\n",
                sj->in->path, stats.functions_seen, stats.functions_transformed,
                stats.functions_skipped, stats.entry_checks, stats.inlined_checks, stats.backedge_checks, stats.batched_checks, stats.counted_loops, stats.short_loops, stats.outlined, stats.outlined_loops, stats.outlined_big, stats.probes, stats.merged_accesses,
                stats.pred_counters, stats.pred_removed);
    return 0;
}

static int stage_optimize(struct vcc_job *job, struct source_job *sj)
{
    char level = job->args.opt_level;
    if (job->placement == VCC_PLACE_LATE && !sj->fallback && level != '0') {
        const char *custom = job->settings.late_post;
        return run_passes(job, sj, *custom ? custom : late_post_pipeline(level));
    }
    if (job->placement == VCC_PLACE_POST && !sj->fallback) {
        const char *custom = job->settings.post_cleanup;
        return run_passes(job, sj, *custom ? custom : post_cleanup_pipeline(level));
    }
    return run_passes(job, sj, full_pipeline(level));
}

static int stage_write(struct vcc_job *job, struct source_job *sj)
{
    sj->bc_opt = vcc_temp_file(job, ".bc");
    if (!sj->bc_opt) return 1;
    if (LLVMWriteBitcodeToFile(sj->mod, sj->bc_opt) != 0) {
        fprintf(stderr, "vigil-cc: cannot write %s\n", sj->bc_opt);
        return 1;
    }
    return 0;
}

/* VIGIL_CC_CSR_COST, unless it is 0 or the user sets LLVM's option already (LLVM refuses it
 * twice). A value that is not a number is warned about once and ignored. */
static int csr_cost_wanted(const struct vcc_job *job)
{
    const char *cost = job->settings.csr_cost;
    if (!cost[0] || strcmp(cost, "0") == 0)
        return 0;
    if (strspn(cost, "0123456789") != strlen(cost) || strlen(cost) > 9) {
        static int warned;
        if (!warned++)
            fprintf(stderr, "vigil-cc: warning: VIGIL_CC_CSR_COST=%s is not a number; ignored\n", cost);
        return 0;
    }
    return !user_mentions(&job->args, "regalloc-csr-first-time-cost");
}

static int stage_back_end(struct vcc_job *job, struct source_job *sj)
{
    const struct vcc_args *a = &job->args;
    struct vcc_cmd cmd = {0};
    vcc_cmd_push(&cmd, job->clang);
    for (int i = 0; i < a->argc; i++)
        if (a->roles[i] & VCC_TO_BE) vcc_cmd_push(&cmd, a->argv[i]);
    vcc_cmd_push(&cmd, "-Wno-unused-command-line-argument");
    if (sj->cache) push_all(&cmd, vcc_cache_back_end_args(sj->cache));
    char csr_cost[64];
    if (!sj->fallback && csr_cost_wanted(job)) {
        snprintf(csr_cost, sizeof csr_cost, "-regalloc-csr-first-time-cost=%s", job->settings.csr_cost);
        vcc_cmd_push(&cmd, "-mllvm");
        vcc_cmd_push(&cmd, csr_cost);
    }
    if (sj->split_cold) {
        /* the cold part goes where GNU ld gathers the instrumented copies (coldsplit.c) */
        vcc_cmd_push(&cmd, "-fsplit-machine-functions");
        vcc_cmd_push(&cmd, "-mllvm");
        vcc_cmd_push(&cmd, "-bbsections-cold-text-prefix=.text.unlikely.");
    }
    vcc_cmd_push(&cmd, a->action == VCC_ASSEMBLY ? "-S" : "-c");
    vcc_cmd_push(&cmd, "-Xclang");
    vcc_cmd_push(&cmd, "-disable-llvm-passes");
    vcc_cmd_push(&cmd, sj->bc_opt);
    vcc_cmd_push(&cmd, "-o");
    vcc_cmd_push(&cmd, sj->output);
    int status = run_compiler(job, sj, cmd.v);
    vcc_cmd_free(&cmd);
    return status;
}

struct source_stage {
    const char *name;
    int (*run)(struct vcc_job *job, struct source_job *sj); /* 0, or the exit status */
};

static const struct source_stage source_stages[] = {
    {"front-end", stage_front_end},
    {"load", stage_load},
    {"pre-optimize", stage_pre_optimize},
    {"transform", stage_transform},
    {"optimize", stage_optimize},
    {"write", stage_write},
    {"back-end", stage_back_end},
};

static int compile_source(struct vcc_job *job, const struct vcc_input *in, const char *output,
                          struct vcc_cache_unit *cache)
{
    static int llvm_ready;
    if (!llvm_ready) {
        /* The asm parser too: modules with inline asm need it. */
        LLVMInitializeNativeTarget();
        LLVMInitializeNativeAsmPrinter();
        LLVMInitializeNativeAsmParser();
        /* -mllvm options tune the in-process passes too, as they tune clang's own pipeline. */
        const struct vcc_args *a = &job->args;
        struct vcc_cmd llvm_opts = {0};
        vcc_cmd_push(&llvm_opts, "vigil-cc");
        for (int i = 1; i < a->argc; i++)
            if (!strcmp(a->argv[i - 1], "-mllvm") && (a->roles[i - 1] & VCC_TO_BE))
                vcc_cmd_push(&llvm_opts, a->argv[i]);
        if (llvm_opts.n > 1)
            LLVMParseCommandLineOptions(llvm_opts.n, (const char *const *)llvm_opts.v, NULL);
        vcc_cmd_free(&llvm_opts);
        llvm_ready = 1;
    }
    struct source_job sj = {.in = in, .output = output, .cache = cache};
    int status = 0;
    for (size_t i = 0; i < sizeof source_stages / sizeof source_stages[0] && !status; i++) {
        status = source_stages[i].run(job, &sj);
        if (status && job->verbose)
            fprintf(stderr, "vigil-cc: stage %s failed for %s\n", source_stages[i].name, in->path);
    }
    if (sj.mod) LLVMDisposeModule(sj.mod);
    if (sj.tm) LLVMDisposeTargetMachine(sj.tm);
    if (sj.ctx) LLVMContextDispose(sj.ctx);
    free(sj.bc_front);
    free(sj.bc_opt);
    return status;
}

/* The driver finds this part by this one symbol, and checks that it is of its own build. */
#ifndef VIGIL_CC_BUILD_ID
#define VIGIL_CC_BUILD_ID "unknown"
#endif
const struct vcc_transform_part vcc_transform_part = {
    .build_id = VIGIL_CC_BUILD_ID,
    .compile_source = compile_source,
    .all_tools = xcc_all_tools,
    .is_tool_setting = xcc_is_tool_setting,
    .is_tool_section = xcc_is_tool_section,
};
