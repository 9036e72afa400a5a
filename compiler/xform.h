/* Internal interface between the pieces of the vigil transform (transform.h is the public one).
 *
 * Per function, in this order (transform.c drives it):
 *   demote.c  PHIs and values used outside their block -> stack slots; static allocas -> a new
 *             prologue block shared by both copies;
 *   shortloops.c  (before demotion) loops short enough to need no back-edge check;
 *   clone.c   back-edges of the original body (DFS), then the instrumented copy;
 *   probes.c  which stack slots never escape (before any probe takes an address);
 *   checks.c  dispatch checks at entry and on back-edges of both copies;
 *   probes.c  probes in the instrumented copy.
 * Per module: emit.c declares the runtime interface and finally emits the site table,
 * counters, state, descriptor and constructor; sites.c collects site records. */
#ifndef VIGIL_XFORM_H
#define VIGIL_XFORM_H
#include "cctool.h"
#include "compat.h"
#include "ptrmap.h"
#include "sitefmt.h"
#include "transform.h"

#include <llvm-c/DebugInfo.h>
#include <llvm-c/Target.h>
#include <stdint.h>

/* A growable array of values. */
struct valvec {
    LLVMValueRef *v;
    size_t n, cap;
};
void valvec_push(struct valvec *vec, LLVMValueRef value);
void valvec_free(struct valvec *vec);
/* calloc of at least one element, or "out of memory" and abort (transform.c). */
void *xf_calloc(size_t n, size_t size);

/* A runtime entry point: its declaration and function type (for LLVMBuildCall2). */
struct rt_fn {
    LLVMValueRef fn;
    LLVMTypeRef type;
};

/* The probes of one value each (emit.c xe_event_probe), by the event they report. */
enum xe_event_kind { XE_EVENT_BRANCH, XE_EVENT_RETURN, XE_EVENT_CALL, XE_EVENT_KINDS };

/* Module-wide state of one transform run. */
struct vigil_xform {
    LLVMModuleRef module;
    LLVMContextRef ctx;
    LLVMBuilderRef builder;
    LLVMTargetDataRef layout;
    const struct vigil_transform_settings *settings;
    struct vigil_transform_stats *stats;

    LLVMTypeRef void_t, i1, i8, i32, i64, ptr;   /* ptr: i8* (typed) or ptr (opaque) */
    LLVMTypeRef module_type;                     /* struct __vigil_module */
    LLVMValueRef burst_left;                     /* TLS uint32_t __vigil_burst_left */
    LLVMValueRef active_events;                  /* uint32_t __vigil_active_events (runtime/tools.c) */
    LLVMValueRef descriptor;                     /* this module's struct __vigil_module */
    LLVMValueRef counters, state;                /* i32 / i64 placeholders, replaced by emit */
    LLVMValueRef pred_enable, pred_counts;       /* i8 / i64 placeholders (pred_counters only) */
    struct rt_fn register_module, dispatch_enter, burst_end;
    struct rt_fn probe_load, probe_store, probe_branch, probe_return, probe_call;
    struct rt_fn probe_atomic_load, probe_atomic_store, sync_atomic;   /* atomic instructions (probes.c) */
    int x86_64_elf;                              /* probes through module stubs and site tables left in the file (emit.c), local burst entries (outline.c) */
#define XE_STUB_SIZE_CLASSES 6                   /* emit.c stub_sizes: variable, 1, 2, 4, 8, 16 */
    struct rt_fn access_stubs[2][XE_STUB_SIZE_CLASSES];   /* [is_store][size class], declared on use */
    struct rt_fn event_stubs[XE_EVENT_KINDS];    /* branch, return, call probes: declared on use */
    unsigned prof_kind;                          /* !prof metadata kind */
    const char *cold_section;                    /* section of the companions, or NULL (emit.c) */
    int split_cold;                              /* x86-64 ELF and VIGIL_CC_SPLIT_COLD (coldsplit.c) */
    enum xe_slow_call { XE_SLOW_C, XE_SLOW_X86_ASM } slow_call;  /* emit.c */
    LLVMDIBuilderRef dib;                        /* outline.c: debug info of outlined copies */
    struct ptrmap burst_entries;                 /* function -> its burst entry (outline.c) */
    int interposable;                            /* shared-library code: exported definitions
                                                    may be interposed on (PIC, not PIE) */
    struct valvec instr_calls;                   /* calls cloned into instrumented copies */
    LLVMMetadataRef outline_cu;                  /* their compile unit, made on first use */

    /* Site records (sites.c). */
    struct vigil_sitefmt_builder *sites;
    /* The tools' compiler parts active for this module (cctool.c, on first use). */
    const struct vigil_cc_tool *cc_tools[VIGIL_MAX_CC_TOOLS];
    unsigned ncc_tools;
    int cc_tools_known;
    uint32_t *dispatch_sites, ndispatch, dispatch_cap;   /* common/abi.h dispatch_sites[] */
    uint32_t *dispatch_of, dispatch_of_cap;      /* site -> dispatch index (dispatch sites) */
    uint64_t hash;                               /* FNV-1a over source name and records */
    struct ptrmap inlined_sites;                 /* callee subprogram -> its inlined calls' site + 1 (inlined.c) */
};

/* A counted loop (shortloops.c): per entry, it takes the back-edge a number of times that the
 * values at the end of each entering block give: the counter `start` (its value there) moves
 * by `step` while `counter pred limit` (tests_next: the counter after the step) holds. */
struct xf_counted {
    int64_t step;                /* a power of two, up or down */
    LLVMIntPredicate pred;       /* NE, or <, <= (up) or >, >= (down), signed or not */
    int tests_next;
    struct valvec from, start, limit;   /* per entering block: frozen there, or constants */
};
void xf_free_counted(struct xf_counted *c);

/* One function being transformed. */
struct xfunc {
    struct vigil_xform *x;
    LLVMValueRef fn;
    const char *name;
    LLVMMetadataRef subprogram;          /* NULL when the function has no debug info */
    LLVMBasicBlockRef prologue;          /* shared stack slots, then the entry check */
    struct valvec blocks;                /* original body blocks as values, entry first */
    struct ptrmap clones;                /* original instruction/block -> its clone */
    struct valvec cloned;                /* clones of original instructions, in order */
    struct ptrmap private_slots;         /* allocas that never escape -> non-NULL */
    struct ptrmap originals;             /* clone -> original instruction (probes.c) */
    struct ptrmap block_index;           /* original block -> index + 1 (sites.c, freed by probes.c) */
    struct ptrmap clone_block;           /* clone instruction -> original block index + 1 (probes.c) */
    uint32_t cfg_function;               /* index in the site table's control-flow facts */
    struct vigil_cfg_edge *cfg_edges;    /* the original body's edges and exits (sites.c; freed */
    uint32_t *cfg_exits, cfg_nedges, cfg_nexits;  /* by probes.c, which removes redundant counters) */
    void *tool_state[VIGIL_MAX_CC_TOOLS];  /* per active compiler tool (cctool.h, xcc_state) */
    struct valvec backedge_from, backedge_to;  /* back-edges (blocks as values) */
    struct ptrmap short_headers;         /* headers of loops left without checks (shortloops.c) */
    struct ptrmap counted_headers;       /* header -> struct xf_counted (shortloops.c) */
    LLVMValueRef instr_fn;               /* outlined instrumented copy, or NULL (same function) */
    LLVMBasicBlockRef instr_prologue;    /* its entry block: clones of the prologue's slots */
    LLVMMetadataRef instr_subprogram;    /* its DISubprogram, NULL without debug info */
    int big;                             /* outlined although it has loops (over dual_max) */
    int giant_transfers;                 /* over dual_max, yet given transfers (an interpreter's loop) */
    int dispatch_folded;                 /* checks.c: a back-edge check folded into a computed goto */
    uint32_t entry_site;                 /* the entry check's site: its enable byte pins f (checks.c) */
    int labels_mapped;                   /* labels.c: the clone's computed gotos stay in the clone */
    struct xt_transfer *transfer;        /* transfer.c: outlined copy of a function with loops */
    struct valvec inlined_heads;         /* inlined.c: heads of conditional inlined calls (blocks) */
    struct valvec inlined_callees;       /* ... their callees' subprograms (metadata as values) */
};

/* demote.c */
void xf_demote(struct xfunc *f);
void xf_make_prologue(struct xfunc *f);
/* Per slot of `slots` (private slots: only loaded and stored), into zeros[i]: how many low
 * bits are zero in every value stored into it, as far as its stores' expressions of constants
 * and loads of these slots show (0: nothing known). */
void xf_slot_trailing_zeros(const struct valvec *slots, unsigned char *zeros);
/* clone.c */
void xf_back_edges(LLVMBasicBlockRef *blocks, size_t n, const struct ptrmap *index, struct valvec *from,
                   struct valvec *to);
void xf_find_backedges(struct xfunc *f);   /* after xf_find_short_loops */
unsigned char *xf_reach(const struct valvec *edges, size_t nblocks, size_t start, int with_start, size_t barrier);
/* inlined.c: the immediate dominators of n blocks (by index; the entry, 0, is its own, SIZE_MAX:
 * unreachable) from their successors and predecessors (lists of index + 1), by the iterative
 * algorithm of Cooper, Harvey and Kennedy over a reverse postorder. Freed by the caller. */
size_t *xf_dominators(size_t n, const struct valvec *succs, const struct valvec *preds);
/* shortloops.c: headers of innermost loops of at most settings->short_loop_max iterations per
 * entry (into f->short_headers), read from the SSA form: before xf_demote. */
void xf_find_short_loops(struct xfunc *f);   /* and f->counted_headers */
void xf_clone_body(struct xfunc *f);
LLVMBasicBlockRef xf_clone_block(struct xfunc *f, LLVMBasicBlockRef original);
/* outline.c: the instrumented copy of a loop-free function as a function of its own. */
#define VIGIL_INSTR_SUFFIX ".vigil.instr"   /* the outlined instrumented copy */
#define VIGIL_BURST_SUFFIX ".vigil.b"       /* the burst entry: instrumented callers call it */
#define VIGIL_LOCAL_BURST_SUFFIX ".vigil.b.local"   /* the same, bound within the link (outline.c) */
long xf_instruction_count(LLVMValueRef fn);
int xf_can_outline(struct xfunc *f);                /* after xf_find_backedges; sets f->big */
void xf_outline_body(struct xfunc *f);              /* clone.c: instead of xf_clone_body */
LLVMValueRef xf_new_outlined_function(struct xfunc *f);
/* "<name><suffix>" of the given type: internal (external and not dso_local when
 * interposable), noinline, f's function attributes but those about memory effects; f's
 * parameter attributes too when the type is f's. */
LLVMValueRef xf_new_companion(struct xfunc *f, const char *suffix, LLVMTypeRef type, int interposable);
LLVMMetadataRef xf_outlined_subprogram(struct xfunc *f);
/* Clone of the prologue alloca or body instruction inst at the builder's position (clone.c). */
LLVMValueRef xf_clone_instruction(struct xfunc *f, LLVMValueRef inst);
void xf_clone_blocks_into(struct xfunc *f, LLVMValueRef target);
/* labels.c: computed gotos that stay in the in-function clone. xf_split_computed_gotos (before
 * xf_find_backedges) copies a shared dispatch block into the blocks that branch to it;
 * xf_map_labels (clone blocks made, operands not yet remapped) records f's jump tables -> the
 * clone's in f->clones, or returns 0 when a label address could cross between the copies. */
void xf_split_computed_gotos(struct xfunc *f);
/* v without the bitcasts around it (instructions or constant expressions). */
LLVMValueRef xf_strip_bitcasts(LLVMValueRef v);
int xf_map_labels(struct xfunc *f);
void xf_remap_operands(struct xfunc *f, LLVMValueRef clone);
LLVMMetadataRef xf_outlined_loc(struct xfunc *f, LLVMMetadataRef loc);
LLVMValueRef xf_new_burst_entry(struct xfunc *f);
/* block (in `from`, of f's type) tail-calls target with from's arguments and returns. */
void xf_build_tail_call(struct xfunc *f, LLVMBasicBlockRef block, LLVMValueRef from, LLVMValueRef target);
void xf_redirect_instrumented_calls(struct vigil_xform *x);  /* after all functions */
void xf_export_burst_aliases(struct vigil_xform *x, const struct valvec *functions);   /* then */
void xf_define_local_burst_entries(struct vigil_xform *x, const struct valvec *functions);   /* then */
void xf_finish_outlining(struct vigil_xform *x);    /* once per module, after all functions */
/* inlined.c: xf_find_inlined_calls (after xf_find_backedges, before the copies are made) finds
 * the inlined calls on conditional paths; xi_insert_checks (with the back-edge checks) gives each
 * a check whose slow path goes to instrumented[j], and sets sites[j]. */
void xf_find_inlined_calls(struct xfunc *f, int outermost_only);   /* outermost_only: transfers */
struct xl_loops;
void xi_insert_checks(struct xfunc *f, struct xl_loops *loops, LLVMBasicBlockRef *instrumented, uint32_t *sites);
/* transfer.c: the instrumented copy of a function with loops as a function of its own, entered
 * and left at dispatch checks (instead of xf_outline_body and xf_insert_checks). */
int xt_can_transfer(struct xfunc *f);
void xt_outline_body(struct xfunc *f);
void xt_insert_checks(struct xfunc *f);
void xt_free(struct xfunc *f);
int xt_coasts(const struct xfunc *f);   /* the copy has a coasting copy (after xt_outline_body) */
/* The coasting copy of an original instruction, or NULL (no coasting copy). */
LLVMValueRef xt_coasting_copy(const struct xfunc *f, LLVMValueRef original);
/* probes.c */
void xf_find_private_slots(struct xfunc *f);
/* A stack slot used only as the address of loads and stores (and by lifetime markers). */
int xf_is_private_slot(LLVMValueRef alloca);
int xf_is_lifetime_marker(LLVMValueRef inst);
void xf_insert_probes(struct xfunc *f);
/* The byte offset a GEP's indices from the first one on (first 1: all, 2: all but the first)
 * add, when they are all constants (then 1, else 0). */
int xf_gep_constant_offset(struct vigil_xform *x, LLVMValueRef gep, unsigned first, int64_t *offset);
/* Predicate counters (common/abi.h): the module's enable and count arrays (pred_enable,
 * pred_counts), which the tools' compiler parts fill in (tools/preds/compiler/). */
/* Counters in the instrumented copy only: checks there stay in it when f is pinned. */
static inline int xp_pins(const struct vigil_xform *x)
{
    return x->settings->pred_counters == VIGIL_PRED_COUNTERS_INSTR;
}
/* checks.c */
void xf_insert_checks(struct xfunc *f);
void xf_insert_outlined_entry_check(struct xfunc *f);  /* entry check -> tail call of instr_fn */
/* The checking copy's side of site s, in f: check.s counts down counters[s] (after testing the
 * thread's burst, which leads to `burst`, when burst is not NULL) or, in a batched loop,
 * `local`; when it expires the runtime decides between `instrumented` and the way back to
 * `checking` (*back: through a reload of `local` in a batched loop). Returns check.s. */
/* xc_build_countdown and, where the burst is tested or burst_out asks for it, site s's burst
 * path, both in f. Returns check.s; *burst_out: burst.s, *back_out: the way back (optional). */
LLVMBasicBlockRef xc_build_check(struct xfunc *f, uint32_t site, LLVMMetadataRef loc,
                                 LLVMBasicBlockRef checking, LLVMBasicBlockRef instrumented,
                                 LLVMValueRef local, int test_burst, LLVMBasicBlockRef *burst_out,
                                 LLVMBasicBlockRef *back_out);
LLVMBasicBlockRef xc_build_countdown(struct xfunc *f, uint32_t site, LLVMMetadataRef loc,
                                     LLVMBasicBlockRef checking, LLVMBasicBlockRef instrumented,
                                     LLVMValueRef local, LLVMBasicBlockRef burst, LLVMBasicBlockRef *back);
/* burst (an empty block of fn): the burst goes on in `instrumented` or, at its end, to
 * `checking`; outside a burst the function whose entry site is pin_site stays in
 * `instrumented` when pinned (common/abi.h). */
void xc_count_instr_exec(struct vigil_xform *x, uint32_t site);
void xc_build_burst_path(struct vigil_xform *x, LLVMValueRef fn, uint32_t site, uint32_t pin_site,
                         LLVMBasicBlockRef burst, LLVMBasicBlockRef instrumented, LLVMBasicBlockRef checking);
/* Where fn's code goes when no burst runs: a new block that stays in `instrumented` when the
 * function of pin_site is pinned and goes to `checking` otherwise; `checking` itself in a
 * module without pins. */
LLVMBasicBlockRef xc_build_idle_path(struct vigil_xform *x, LLVMValueRef fn, uint32_t pin_site,
                                     LLVMBasicBlockRef instrumented, LLVMBasicBlockRef checking);
/* Every successor slot of terminator that is `from` becomes `to`. */
void xc_redirect(LLVMValueRef terminator, LLVMBasicBlockRef from, LLVMBasicBlockRef to);
/* Back-edge checks of the checking copy do not test the thread's burst: a loop without calls
 * cannot see a burst begin elsewhere, and a burst that a callee starts (its entry check fired)
 * covers the callee and ends when it returns to the loop, as at a back-edge check that ends it.
 * (xc_build_check's test_burst for back-edges, in both schemes.) */
enum { XC_BACKEDGE_TESTS_BURST = 0 };
/* counters[site] as a relaxed atomic load / store at the builder's position. */
LLVMValueRef xc_load_counter(struct vigil_xform *x, uint32_t site);
void xc_store_counter(struct vigil_xform *x, uint32_t site, LLVMValueRef value);
/* loops.c: back-edge checks of innermost loops count down a local (batched). */
struct xl_loops;
struct xl_loops *xl_plan(struct xfunc *f);   /* before any check is built */
LLVMValueRef xl_local(const struct xl_loops *loops, size_t backedge_index);  /* NULL: not batched */
void xl_note_check(struct xl_loops *loops, LLVMBasicBlockRef check, LLVMBasicBlockRef target);
void xl_rewire(struct xfunc *f, struct xl_loops *loops, const uint32_t *sites);  /* after all checks */
void xl_free(struct xl_loops *loops);

/* sites.c: a new site record; loc is a DILocation or NULL. Returns the local index. */
uint32_t xs_add(struct vigil_xform *x, enum vigil_site_kind kind, const char *function,
                LLVMMetadataRef loc, uint32_t aux);
/* The flags of a site just added (VIGIL_SITE_ATOMIC...: an atomic instruction's access). */
void xs_set_flags(struct vigil_xform *x, uint32_t site, uint32_t flags);
/* Control-flow facts of the original body (before checks and probes change it): blocks,
 * edges, exits and calls (sitefmt version 2). Runs after clone.c, before checks.c. */
void xs_record_cfg(struct xfunc *f);
/* The site for a function's entry: the line of its DISubprogram. */
uint32_t xs_add_entry(struct vigil_xform *x, const char *function, LLVMMetadataRef subprogram);
/* The file of a debug scope as sites name it (relative paths as given, no leading "./");
 * malloc'd, "" when the scope has none. */
char *xs_scope_file(LLVMMetadataRef scope);
/* The dispatch index of a dispatch site (entry or back-edge): its counter and state (abi.h). */
uint32_t xs_dispatch(const struct vigil_xform *x, uint32_t site);
void xs_free(struct vigil_xform *x);
/* The debug location to give code inserted near inst: its own, else line 0 of the function's
 * subprogram, else NULL (function without debug info). */
/* Insert inst at the builder's position under name, keeping inst's own debug location
 * (a builder stamps its current location on everything it inserts). */
void xf_insert_keeping_loc(LLVMBuilderRef b, LLVMValueRef inst, const char *name);
LLVMMetadataRef xf_debug_loc(struct xfunc *f, LLVMValueRef inst);

/* emit.c */
void xe_declare_runtime(struct vigil_xform *x);
/* The runtime's 32-bit global `name` (common/abi.h), declared in the module once. */
LLVMValueRef xe_runtime_i32(struct vigil_xform *x, const char *name);
int xe_emit_tables(struct vigil_xform *x, char *err, size_t errlen);
/* Call a runtime entry point at the builder's position. */
LLVMValueRef xe_call(struct vigil_xform *x, const struct rt_fn *f, LLVMValueRef *args, unsigned nargs);
/* A load or store probe (site, address, size in bytes as i64) at the builder's position;
 * through the module's stub when the target has them and `may_use_stub`. */
LLVMValueRef xe_access_probe(struct vigil_xform *x, int is_store, uint32_t site, LLVMValueRef address,
                             LLVMValueRef size, int may_use_stub);
/* The same for an atomic instruction's access: the runtime's atomic probes (no stub). */
LLVMValueRef xe_atomic_probe(struct vigil_xform *x, int is_store, uint32_t site, LLVMValueRef address,
                             LLVMValueRef size);
/* Whether probes of this event (VIGIL_EV_*) test __vigil_active_events before their call
 * (probes.c `probe`); the module's stubs of an executable test it otherwise. */
int xe_probe_guarded(const struct vigil_xform *x, unsigned event);
/* A branch (value: taken as i32), return (the result as i64) or call probe (the callee as a
 * pointer) for site at the builder's position; through the module's stub as xe_access_probe. */
LLVMValueRef xe_event_probe(struct vigil_xform *x, enum xe_event_kind kind, uint32_t site, LLVMValueRef value,
                            int may_use_stub);
/* Whether the target has xe_call_keeping_registers (x86-64): a call of fn(arg), fn a C-ABI
 * function of one pointer returning void, through a runtime entry that keeps every
 * general-purpose register but rax and r11: the caller's register allocation does not see a
 * call (no callee-saved registers for values live across it). */
int xe_can_call_keeping_registers(struct vigil_xform *x);
void xe_call_keeping_registers(struct vigil_xform *x, LLVMValueRef fn, LLVMValueRef arg);
/* __vigil_dispatch_enter / __vigil_burst_end (fn) for site, in this target's convention
 * (common/abi.h); returns the i32 answer. */
LLVMValueRef xe_call_slow_path(struct vigil_xform *x, const struct rt_fn *fn, uint32_t site);
/* Relaxed (monotonic) atomic load/store at the builder's position: counters shared between
 * threads may lose updates, but must not be data races in the C11 sense. */
LLVMValueRef xe_relaxed_load(struct vigil_xform *x, LLVMTypeRef type, LLVMValueRef ptr, unsigned align);
void xe_relaxed_store(struct vigil_xform *x, LLVMValueRef value, LLVMValueRef ptr, unsigned align);
/* Branch weights making the first successor `first` : `second` as likely. */
void xe_set_weights(struct vigil_xform *x, LLVMValueRef branch, uint32_t first, uint32_t second);

/* coldsplit.c: the synthetic profile that moves a checking copy's burst-only blocks out */
uint32_t xk_fired_weight(const struct xfunc *f);   /* the not-fired side of f's checks (fired: 1) */
void xk_mark_synthetic_profile(struct vigil_xform *x);   /* once per module, at the end */

/* Small helpers (transform.c). */
int xf_has_indirectbr(struct xfunc *f);   /* a computed goto among f's original blocks */
int xf_has_fn_attribute(LLVMValueRef fn, const char *name);
void xf_remove_fn_attribute(LLVMValueRef fn, const char *name);
/* inst and everything after it move into a new block `name` right after their block, which is
 * left without a terminator (the caller ends it); NULL when a successor has PHIs. */
LLVMBasicBlockRef xf_split_before(struct xfunc *f, LLVMValueRef inst, const char *name);
int xf_is_call_to_prefix(LLVMValueRef inst, const char *prefix);
int xf_is_noreturn_call(LLVMValueRef inst);
int xf_is_real_call(LLVMValueRef inst);   /* a call but of an intrinsic (inline asm included) */   /* a call that never returns (abort, exit, assert's) */
const char *xf_callee_name(LLVMValueRef call);

#endif
