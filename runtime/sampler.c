/* The dispatch slow paths (code shape in common/abi.h). Only reached when a check's countdown
 * hits zero or a burst runs out; the fast paths are inline in the emitted code. */
#include "internal.h"

/* Dispatch checks left in this thread's burst, 0 = not in a burst. Written by this thread
 * only: the emitted code counts it down, __vigil_dispatch_enter / __vigil_burst_end set it. */
__thread uint32_t __vigil_burst_left __attribute__((tls_model("initial-exec")));

/* Full mode keeps a thread in the instrumented copy: a burst this long is re-armed at its end. */
#define FULL_BURST UINT32_MAX

uint32_t __vigil_dispatch_enter(struct __vigil_module *m, uint32_t site)
{
    if (unlikely(!__vigil_ensure_registered(m)) || unlikely(site >= m->nsites)) {
        if (m->counters && site < m->nsites)
            RELAXED_STORE(&m->counters[site], UINT32_MAX);   /* refused module: checks stay cold */
        return 0;
    }
    const struct vigil_schedule *s = &__vigil_sched;
    struct __vigil_site_state *st = &m->state[site];
    uint32_t ncheck0 = vigil_schedule_reset(s, st);
    RELAXED_STORE(&m->counters[site], ncheck0);
    if (s->mode == VIGIL_MODE_OFF)
        return 0;
    __atomic_fetch_add(&st->bursts, 1, __ATOMIC_RELAXED);
    __vigil_burst_left = s->mode == VIGIL_MODE_FULL ? FULL_BURST : s->ninstr;
    return 1;
}

uint32_t __vigil_burst_end(struct __vigil_module *m, uint32_t site)
{
    (void)m, (void)site;
    if (__vigil_sched.mode == VIGIL_MODE_FULL) {
        __vigil_burst_left = FULL_BURST;
        return 1;
    }
    __vigil_burst_left = 0;
    return 0;
}
