/* The hot-spot profiler's runtime part, shared by its files (hotspot.c: clocks, signal handler,
 * threads; report.c: hotspot.json). */
#ifndef HS_INT_H
#define HS_INT_H
#include <stdint.h>

#include "stacktable.h"
#include "vigil/tool.h"

extern struct vigil_tool hs_tool;

enum hs_method { HS_NONE, HS_PERF, HS_TIMER };

/* One thread that was sampled, for the report: written by the thread itself (its hooks and its
 * signal handler), read by the final report. A timeline entry is t_us << 24 | late flag |
 * stack id, t_us the microseconds since start-up (monotonic clock) when the sample was taken. */
struct hs_rec {
    int32_t tid;
    uint32_t index;                 /* order of start: 0 is the first thread sampled */
    int fd;                         /* the perf event's descriptor (-1: none): closed in a fork child */
    uint64_t perf_id;               /* its id (PERF_EVENT_IOC_ID) */
    int exited;
    uint64_t samples;               /* taken in this thread, weighted (hs_state.samples) */
    uint64_t *timeline;             /* timeline_cap entries, mapped at thread start (NULL: none) */
    uint32_t timeline_cap;
    uint32_t timeline_n;            /* entries written (release: the entry first) */
    uint64_t timeline_dropped;      /* samples after the timeline was full */
};

#define HS_MAX_RECS 1024
#define HS_TIMELINE_SHIFT 24
#define HS_TIMELINE_ID 0x7fffffu      /* the stack id's bits (HS_TIMELINE_ID itself: not kept) */
#define HS_TIMELINE_LATE 0x800000u    /* a sample at the late period (weight late_weight) */

/* Written by init (and a fork child's hook), read by the handler and the report. */
struct hs_state {
    uint32_t period_us, depth, max_stacks, delay_ms, timeline;   /* the options, checked */
    uint32_t late_period_us;        /* the period after late_after samples (= period_us: one rate) */
    uint64_t late_after;            /* walk_samples */
    enum hs_method method;          /* the main thread's clock; HS_NONE: not sampling */
    char why[200];                  /* HS_NONE: why not; else "" (or a note on a fallback) */
    int signo;
    uint64_t start_ns;              /* CLOCK_MONOTONIC at init (a fork child: at the fork) */
    uint64_t sample_start_ns;       /* start_ns + delay_ms */
    struct hs_table table;
    struct hs_rec recs[HS_MAX_RECS];
    uint32_t nrecs;                 /* claimed entries of recs (atomic) */
    uint64_t threads;               /* threads whose clock was armed (atomic) */
    uint64_t threads_blocked;       /* threads that started with the signal blocked: not sampled */
    uint64_t threads_failed;        /* threads whose clock could not be made */
    uint64_t threads_fallback;      /* threads that use the timer because perf failed for them */
    uint64_t samples;               /* every sample taken, in units of period_us: one at the
                                       late period counts late_period_us / period_us (atomic) */
    uint64_t signals;               /* every sample taken, one each (atomic) */
    uint64_t samples_unrecorded;    /* samples of threads beyond HS_MAX_RECS (no timeline) */
    uint64_t rearm_failed;          /* threads whose clock could not be re-armed: sampling ended */
    int stepped_back;               /* the program took the signal: sampling stopped */
};
extern struct hs_state hs;

uint64_t hs_mono_ns(void);
/* hotspot.json into the run report (from fini). */
void hs_report_write(void);

#endif
