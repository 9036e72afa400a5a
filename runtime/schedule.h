/* The adaptive sampling schedule of seed 000, as a pure piece: no globals, no I/O.
 * sampler.c owns one struct vigil_schedule built from the options at start-up and calls
 * vigil_schedule_reset() each time a dispatch check's nCheck counter reaches zero.
 *
 * Levels: 0 = check never reset yet (counter still at its emitted 0); level n >= 1 has
 * nCheck0(n) = (decr^(n-1) - 1) * nInstr0, so r(n) = 1 / decr^(n-1) (adaptive mode).
 * The level in force after k resets is a pure function of k: level n+1 is entered at the
 * reset that brings the count to interval * growth^(n-1) (10, 100, 1000, ...), never beyond
 * the level whose rate would fall below rate_floor. */
#ifndef VIGIL_SCHEDULE_H
#define VIGIL_SCHEDULE_H
#include <stdint.h>

#include "abi.h"
#include "options.h"

enum vigil_mode { VIGIL_MODE_ADAPTIVE, VIGIL_MODE_BURSTY, VIGIL_MODE_FULL, VIGIL_MODE_OFF };

#define VIGIL_SCHED_MAX_LEVEL 32   /* enough for decr = 2 down to rate 2^-31 */

/* nInstr0 for ninstr=0, when neither the user nor an enabled tool (vigil_want_burst_length) set it.
 * A check's warm-up (10 bursts at 100%, 90 at 10%, 900 at 1%) runs 1,000 bursts, so it costs
 * 1,000 * nInstr0 instrumented executions per check: with 100, a compressor under the leak tool
 * spent much of its run warming checks up (docs/performance.md). At the floor the rate is the same; bursts are shorter and
 * ten times as frequent, which spreads a leak tool's sampled accesses over time. */
#define VIGIL_DEFAULT_NINSTR 10

struct vigil_schedule {
    enum vigil_mode mode;
    uint32_t ninstr;                 /* nInstr0, >= 1: the option, or VIGIL_DEFAULT_NINSTR for 0 */
    uint32_t max_level;              /* highest level an adaptive check reaches (the floor) */
    /* enter_at[n]: cumulative resets at which level n+1 is entered (n = 1 .. max_level-1);
     * UINT64_MAX when unreachable. */
    uint64_t enter_at[VIGIL_SCHED_MAX_LEVEL + 1];
    /* ncheck0[n]: counter value after a reset at level n (clamped to UINT32_MAX - 1);
     * ncheck0[0] = 0, the value the compiler emits. */
    uint32_t ncheck0[VIGIL_SCHED_MAX_LEVEL + 1];
};

/* Parse the mode name ("adaptive", ...); -1 when unknown. */
int vigil_schedule_mode_from_name(const char *name);
/* Build the schedule from options (values are assumed validated: decrement, interval and
 * interval_growth >= 1, rates in (0, 1]; ninstr 0 is VIGIL_DEFAULT_NINSTR). */
void vigil_schedule_init(struct vigil_schedule *s, const struct vigil_options *o);
/* Level in force after `resets` resets (0 for 0 resets). */
uint32_t vigil_schedule_level_after(const struct vigil_schedule *s, uint64_t resets);
/* nCheck0 at a level (level 0: 0). */
uint32_t vigil_schedule_ncheck0(const struct vigil_schedule *s, uint32_t level);
/* Sampling rate nInstr0 / (nCheck0 + nInstr0) at a level; level 0 reports the rate of level 1
 * (what the check starts at). Mode off: 0; mode full: 1. */
double vigil_schedule_rate(const struct vigil_schedule *s, uint32_t level);
/* One nCheck reset of a site: resets += 1 (saturating), level updated, the countdown consumed
 * since the previous reset (`started`, the value the countdown was set to, + 1) added to
 * check_execs. Returns the new counter value nCheck0. Uses relaxed atomics on *st: threads may
 * race (a lost update at worst), never a C11 data race. */
uint32_t vigil_schedule_reset(const struct vigil_schedule *s, struct __vigil_site_state *st, uint32_t started);
/* The countdown a site may start at instead of 0 (its first execution then goes unsampled), or
 * 0 when the mode samples first executions (all but off). With a non-zero result the caller
 * that stores it as the site's counter (and as the value the counter was set to) calls
 * vigil_schedule_primed: the accounting then counts
 * from there, as after one reset that consumed nothing. */
uint32_t vigil_schedule_prime(const struct vigil_schedule *s);
void vigil_schedule_primed(const struct vigil_schedule *s, struct __vigil_site_state *st);
/* Executions a countdown has counted since it was set to `started` and now holds `left` (0 for
 * a countdown set since by another path: a pin, a park). */
static inline uint32_t vigil_schedule_pending(uint32_t started, uint32_t left)
{
    return left <= started ? started - left : 0;
}
/* Executions of a dispatch check so far, both copies, given the value its countdown was set to
 * at the last reset and its current value. */
uint64_t vigil_schedule_execs(const struct __vigil_site_state *st, uint32_t started, uint32_t counter);

#endif
