/* The hot-spot profiler's report as `vigil hot` uses it, and what it makes of it; pure (no
 * symbolizer, no file system): tests/test_profile.c and tests/fuzz/fuzz_profile.c use it alone.
 *
 *   hs_profile   hotspot.json as written (format: tools/hotspot/README.md, "Report"): modules,
 *                stacks of (module, link-time address) frames, leaf first, and each thread's
 *                timeline as runs of one stack.
 *   hs_view      the same stacks once named: each a list of functions, root first, merged
 *                where they name the same functions; each function's self and inclusive
 *                samples; the folded stacks of flame graphs; Chrome trace events. */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct hs_frame {
    int module;                  /* index into modules; -1: in no loaded object */
    uint64_t address;            /* link-time address (the PC itself when module is -1) */
};

struct hs_pstack {
    uint64_t count;
    size_t nframes;
    struct hs_frame *frames;     /* leaf first: [0] the interrupted PC, then return addresses */
};

struct hs_run {
    uint64_t first_us, last_us;  /* the times of its first and last sample, since start-up */
    int64_t stack;               /* index into stacks; -1: the sample's stack was not kept */
    uint64_t samples;            /* in units of the profile's period_us */
    uint64_t period_us;          /* the period its samples were taken at */
};

struct hs_pthread {
    uint64_t index, tid, samples, timeline_dropped;
    size_t nruns;
    struct hs_run *runs;
};

/* The walker's part ("walk" in hotspot.json; absent in reports of a vigil without it). */
struct hs_pcaller {
    struct hs_frame site;        /* the return address into the caller */
    uint64_t count;
};

struct hs_plevel {
    uint64_t id;                 /* the level's index, as trace events name it */
    struct hs_frame function;    /* its entry */
    uint64_t calls, measured, wall_ns, wall_max_ns, cycles, recursive, tail, unmeasured, callers_other;
    size_t ncallers;
    struct hs_pcaller *callers;
};

struct hs_pwalk {
    struct hs_frame hot;         /* the hot spot's entry */
    uint64_t hot_samples, total_samples;
    char *end;                   /* why the walk ended */
    size_t nlevels;
    struct hs_plevel *levels;    /* the hot spot first, then each caller up */
};

struct hs_pevent {
    uint64_t start_ns, dur_ns;   /* since start-up; the call's wall time */
    uint64_t level;              /* a level id */
};

struct hs_ptrace {
    uint64_t tid, lost;
    size_t nevents;
    struct hs_pevent *events;
};

struct hs_profile {
    char *method, *note;         /* "perf", "timer" or "none"; why none, or a fallback */
    uint64_t signal, period_us, depth, max_stacks, delay_ms, duration_us;
    uint64_t samples;            /* in units of period_us (a late sample counts late/period) */
    uint64_t late_period_us, late_after, signals;   /* absent (older reports): period_us, 0, samples */
    int stepped_back;
    uint64_t dropped_full, dropped_busy, dropped_untracked;
    uint64_t threads_sampled, threads_blocked, threads_failed, threads_fallback, rearm_failed;
    size_t nmodules;
    struct hs_module { char *path; uint64_t bias; } *modules;
    size_t nstacks;
    struct hs_pstack *stacks;
    size_t nthreads;
    struct hs_pthread *threads;
    int has_walk;
    char *instructions;          /* why instructions per call are not given */
    uint64_t walk_calls, walk_hooked, walk_refused, walk_entries;
    char *walk_refused_why;
    size_t nwalks;
    struct hs_pwalk *walks;
    size_t ntraces;
    struct hs_ptrace *traces;
};

/* Parse hotspot.json from text[0..len) (name: for messages). 0, or -1 with "NAME:LINE: what was
 * expected" in err (p is then empty; hs_profile_free is safe either way). */
int hs_profile_parse(const char *text, size_t len, const char *name, struct hs_profile *p, char *err,
                     size_t errlen);
void hs_profile_free(struct hs_profile *p);

/* ---- named stacks ---- */

struct hs_func {
    char *name;
    char *file;                  /* "" when unknown */
    int line;                    /* where the function is defined; 0 when unknown */
    uint64_t self, total;        /* samples in it / in it or below it (hs_view_finish) */
};

struct hs_vstack {
    uint64_t count;
    size_t n;
    uint32_t *funcs;             /* root first */
};

struct hs_view {
    struct hs_func *funcs;
    size_t nfuncs, funcs_cap;
    struct hs_vstack *stacks;
    size_t nstacks, stacks_cap;
    uint64_t samples;            /* the sum of the stacks' counts */
    /* profile stack index -> view stack index (SIZE_MAX: none), set by hs_view_add_stack */
    size_t *of_profile;
    size_t nof_profile;
    void *index;                 /* private: lookups by name and by stack */
    /* The walk's levels by id -> function index (SIZE_MAX: unnamed), set by the caller before
     * hs_view_write_trace so that measured calls become trace events; NULL: none. Freed by hs_view_free. */
    size_t *level_funcs;
    size_t nlevel_funcs;
};

void hs_view_init(struct hs_view *v);
void hs_view_free(struct hs_view *v);
/* The function named name in file (interned: one index per (name, file)); SIZE_MAX when out of
 * memory. line is kept from the first call that gives one. */
size_t hs_view_func(struct hs_view *v, const char *name, const char *file, int line);
/* Add count samples of the stack funcs[0..n) (root first) as the profile's stack pstack (or
 * SIZE_MAX: none); the same functions again add to one stack. 0, or -1 when out of memory. */
int hs_view_add_stack(struct hs_view *v, size_t pstack, const uint32_t *funcs, size_t n, uint64_t count);
/* Each function's self (the leaf) and total (anywhere in the stack, once per sample, so that
 * recursion counts once) samples, and stacks sorted by count (most first, then by names). */
void hs_view_finish(struct hs_view *v);
/* Function indices sorted by self (by_total = 0) or total samples, most first; the caller frees. */
size_t *hs_view_ranking(const struct hs_view *v, int by_total);
/* One line per stack "root;caller;leaf COUNT", as flamegraph.pl and speedscope read them
 * (';' and white space in names become '_'). */
void hs_view_write_folded(const struct hs_view *v, FILE *out);
/* Chrome trace-event JSON (Perfetto, chrome://tracing): the measured calls of the walk
 * (v->level_funcs) as complete events on a track of their own per thread ("tid N: measured
 * calls"), and per thread, one complete ("X") event per
 * function per stretch of consecutive samples whose stacks share it at the same depth (a flame
 * chart over time: a caller's event spans its callees'), from the profile's timelines. A sample
 * at time t covers [t - period, t]; samples more than two periods apart leave a gap. pid and
 * program name the process. A run whose stack was not kept is one function "[stack not kept]"
 * (added to v). */
void hs_view_write_trace(struct hs_view *v, const struct hs_profile *p, FILE *out, int64_t pid,
                         const char *program);

#endif
