/* preds: predicate counts for statistical debugging (seed 002), written as a feedback report
 * (preds.txt, grammar in docs/formats.md "Feedback report") into the run report directory.
 *
 * Predicates: at a branch site {false, true}; at a return site {< 0, == 0, > 0} (pointers: the
 * value as a signed integer, so null is == 0). Each observation bumps exactly one predicate;
 * the site's observed count is the sum (binary mode: flags, observed = any flag).
 *
 * Collection (VIGIL_OPTIONS preds.collect=sampled|all|plan, preds.binary=0|1;
 * tools/preds/DESIGN.md): sampled: this tool counts what bursts deliver through its hooks (CBI
 * style); all / plan: the emitted code counts at the sites counters.c enables as modules
 * register, and fini reads them. The outcome label is not known here: `vigil ingest` takes it
 * from run.txt (exit status / signal) or from a label.txt written beside it.
 *
 * Counting is lock-free: one slot per process-wide site id in a table reserved once with mmap
 * (pages appear on first touch, so only the ids in use cost memory), relaxed atomic loads and
 * stores without a lock prefix (like the dispatch counters, a racing update may be lost). */
#include "preds.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_SITE_IDS (1u << 22)   /* ids beyond this are counted in `dropped` */
#define STACK_DEPTH 8

enum slot_kind { SLOT_EMPTY = 0, SLOT_BRANCH = 1, SLOT_RETURN = 2 };

struct slot {
    uint64_t count[3];   /* branch: false, true; return: < 0, == 0, > 0 */
    uint32_t kind;       /* enum slot_kind, set by the first event at this id */
    uint32_t pad;
};

/* Written once by preds_init (before any event), read by the hooks and fini. */
static struct slot *slots;
static int binary_mode;
static enum preds_collect collect_mode;

#define VIGIL_OPTSET_TOOL preds
#define VIGIL_OPTSET_ROWS "tools/preds/options.inc"
#include "optset.h"

static struct preds_options opts;  /* written by the runtime before init */
/* Highest id seen + 1: bounds the scan in fini. Raised with a CAS, rarely (new ids only). */
static uint32_t slots_used;
/* Events at ids >= MAX_SITE_IDS (relaxed, lossy like the counters). */
static uint64_t dropped;


static void note_id(uint32_t site)
{
    uint32_t used = __atomic_load_n(&slots_used, __ATOMIC_RELAXED);
    while (site >= used &&
           !__atomic_compare_exchange_n(&slots_used, &used, site + 1, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
        ;
}

static void count(vigil_site_t site, uint32_t kind, unsigned pred)
{
    if (site >= MAX_SITE_IDS) {
        __atomic_store_n(&dropped, __atomic_load_n(&dropped, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
        return;
    }
    struct slot *s = &slots[site];
    if (__atomic_load_n(&s->kind, __ATOMIC_RELAXED) != kind) {
        /* first event here (or a kind clash, which fini resolves with the site table) */
        __atomic_store_n(&s->kind, kind, __ATOMIC_RELAXED);
        note_id(site);
    }
    uint64_t c = __atomic_load_n(&s->count[pred], __ATOMIC_RELAXED);
    if (binary_mode) {
        if (c == 0)     /* store once: later events leave the cache line shared */
            __atomic_store_n(&s->count[pred], 1, __ATOMIC_RELAXED);
    } else {
        __atomic_store_n(&s->count[pred], c + 1, __ATOMIC_RELAXED);
    }
}

static void preds_on_branch(vigil_site_t site, int taken)
{
    count(site, SLOT_BRANCH, taken ? 1 : 0);
}

static void preds_on_return(vigil_site_t site, int64_t value)
{
    count(site, SLOT_RETURN, value < 0 ? 0 : value == 0 ? 1 : 2);
}

static const char *const collect_names[] = {[PREDS_SAMPLED] = "sampled", [PREDS_ALL] = "all", [PREDS_PLAN] = "plan"};

static int preds_init(void)
{
    binary_mode = opts.binary;
    collect_mode = preds_counters_start(opts.collect, opts.binary);
    if (collect_mode != PREDS_SAMPLED) {
        vigil_tool_events(&preds_tool, 0);   /* the counters are in the emitted code, not in the hooks */
        return 0;
    }
    void *m = mmap(NULL, (size_t)MAX_SITE_IDS * sizeof(struct slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        vigil_tool_message(&preds_tool, "cannot reserve the counter table; tool disabled");
        return 1;
    }
    slots = m;
    /* Sampled predicates are counted inside bursts: a few dozen runs rank well with bursts of
     * 100 checks, not with the runtime's default of 10 (tests/preds: sqlite adaptive). */
    vigil_want_burst_length(100);
    return 0;
}

/* The site table's kind for id, or 0 when the runtime does not know the id. */
static uint32_t table_kind(uint32_t id)
{
    struct vigil_site_info info;
    if (vigil_site_lookup(id, &info) != 0 || !info.kind)
        return 0;
    if (strcmp(info.kind, "branch") == 0)
        return SLOT_BRANCH;
    if (strcmp(info.kind, "return") == 0)
        return SLOT_RETURN;
    return 0;
}

/* collect all|plan: one line per monitored site, reached or not (a site monitored but never
 * reached counts in neither F(p obs) nor S(p obs)). */
static int write_counted_site(const struct preds_site *s, void *arg)
{
    FILE *f = arg;
    int two = strcmp(s->kind, "branch") == 0 || strcmp(s->kind, "case") == 0;   /* false, true */
    unsigned npreds = two ? 2 : 3;
    uint64_t observed = 0;
    for (unsigned i = 0; i < npreds; i++)
        observed = binary_mode ? (observed | s->count[i]) : observed + s->count[i];
    fprintf(f, "site %u %s %llu", s->site, s->kind, (unsigned long long)observed);
    for (unsigned i = 0; i < npreds; i++)
        fprintf(f, " %llu", (unsigned long long)s->count[i]);
    fputc('\n', f);
    return 0;
}

static void write_sampled_sites(FILE *f);

static void preds_fini(void)
{
    int sampled = collect_mode == PREDS_SAMPLED;
    preds_counters_fini(vigil_verbosity() >= 1);
    if (sampled && !slots)
        return;
    FILE *f = vigil_report_open(&preds_tool, "preds.txt");
    if (!f) {
        vigil_tool_message(&preds_tool, "cannot open preds.txt in the run report");
        return;
    }
    fprintf(f, "vigil-feedback 1\npid %lld\ncollect %s\nbinary %d\n", (long long)getpid(),
            collect_names[collect_mode], binary_mode);
    if (sampled)
        write_sampled_sites(f);
    else
        preds_counted_sites_each(write_counted_site, f);
    /* Where the process ended: exit()'s caller, or the interrupted code after a fatal signal.
     * ingest keeps it for failing runs only (failure cause, backward search). */
    struct vigil_stack where;
    memset(&where, 0, sizeof where);
    vigil_capture_stack(&where, STACK_DEPTH);
    if (where.depth) {
        fputs("stack", f);
        for (uint32_t i = 0; i < where.depth && i < VIGIL_MAX_STACK; i++)
            fprintf(f, " 0x%llx", (unsigned long long)where.pc[i]);
        fputc('\n', f);
    }
    fputs("end\n", f);
    fclose(f);
}

static void write_sampled_sites(FILE *f)
{
    uint32_t used = __atomic_load_n(&slots_used, __ATOMIC_RELAXED);
    unsigned long mismatched = 0;
    for (uint32_t id = 0; id < used; id++) {
        const struct slot *s = &slots[id];
        uint32_t kind = __atomic_load_n(&s->kind, __ATOMIC_RELAXED);
        if (kind == SLOT_EMPTY)
            continue;
        if (kind != table_kind(id)) {   /* an event that does not fit the site table: drop it */
            mismatched++;
            continue;
        }
        unsigned npreds = kind == SLOT_BRANCH ? 2 : 3;
        uint64_t c[3], observed = 0;
        for (unsigned i = 0; i < npreds; i++) {
            c[i] = __atomic_load_n(&s->count[i], __ATOMIC_RELAXED);
            observed = binary_mode ? (observed | c[i]) : observed + c[i];
        }
        if (observed == 0)
            continue;
        fprintf(f, "site %u %s %llu", id, kind == SLOT_BRANCH ? "branch" : "return",
                (unsigned long long)observed);
        for (unsigned i = 0; i < npreds; i++)
            fprintf(f, " %llu", (unsigned long long)c[i]);
        fputc('\n', f);
    }
    uint64_t lost = __atomic_load_n(&dropped, __ATOMIC_RELAXED);
    if (lost || mismatched)
        vigil_tool_message(&preds_tool, "%llu events beyond site id %u and %lu sites of the wrong kind were dropped",
                           (unsigned long long)lost, MAX_SITE_IDS, mismatched);
}

struct vigil_tool preds_tool = {
    .api_version = VIGIL_TOOL_API_VERSION,
    .name = "preds",
    .description = "branch and return predicate counts for statistical debugging (vigil ingest, vigil rank)",
    .events = VIGIL_EV_BRANCH | VIGIL_EV_RETURN,
    .init = preds_init,
    .fini = preds_fini,
    .on_branch = preds_on_branch,
    .on_return = preds_on_return,
    .options = &preds_option_set,
    .option_values = &opts,
    .on_module = preds_on_module,
    .bursts = VIGIL_BURSTS_NEEDED,
};
VIGIL_REGISTER_TOOL(preds_tool);
