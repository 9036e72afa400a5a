/* The adaptive sampling schedule (see schedule.h). Pure: everything it needs is passed in. */
#include "schedule.h"

#include <string.h>

static const char *const mode_names[] = {
    [VIGIL_MODE_ADAPTIVE] = "adaptive", [VIGIL_MODE_BURSTY] = "bursty",
    [VIGIL_MODE_FULL] = "full",         [VIGIL_MODE_OFF] = "off",
};

int vigil_schedule_mode_from_name(const char *name)
{
    for (int i = 0; i < (int)(sizeof mode_names / sizeof mode_names[0]); i++)
        if (strcmp(name, mode_names[i]) == 0)
            return i;
    return -1;
}

/* nCheck0 as a counter value: at most VIGIL_COUNTER_MAX - 1 (the emitted check treats the
 * countdown as signed, common/abi.h) so that a clamped level still counts down. */
static uint32_t clamp_ncheck0(double v)
{
    if (!(v > 0))
        return 0;
    if (v >= (double)(VIGIL_COUNTER_MAX - 1))
        return VIGIL_COUNTER_MAX - 1;
    return (uint32_t)(v + 0.5);   /* round to nearest; no libm needed */
}

void vigil_schedule_init(struct vigil_schedule *s, const struct vigil_options *o)
{
    memset(s, 0, sizeof *s);
    int mode = vigil_schedule_mode_from_name(o->mode);
    s->mode = mode < 0 ? VIGIL_MODE_ADAPTIVE : (enum vigil_mode)mode;
    s->ninstr = o->ninstr ? o->ninstr : VIGIL_DEFAULT_NINSTR;   /* 0: no one set it */
    for (int n = 0; n <= VIGIL_SCHED_MAX_LEVEL; n++)
        s->enter_at[n] = UINT64_MAX;
    s->max_level = 1;

    switch (s->mode) {
    case VIGIL_MODE_BURSTY:
        s->ncheck0[1] = clamp_ncheck0((1.0 / o->bursty_rate - 1.0) * s->ninstr);
        return;
    case VIGIL_MODE_FULL:
        s->ncheck0[1] = 0;
        return;
    case VIGIL_MODE_OFF:
        s->ncheck0[1] = VIGIL_COUNTER_MAX;   /* a burst never starts; executions are still counted */
        return;
    case VIGIL_MODE_ADAPTIVE:
        break;
    }

    /* Levels n with decr^(n-1) <= 1/rate_floor; the relative slack absorbs the rounding of
     * 1/0.001 = 999.99999... */
    double decr = o->decrement ? o->decrement : 1;
    double limit = (o->rate_floor > 0 ? 1.0 / o->rate_floor : 1.0) * (1 + 1e-9);
    double factor = 1;   /* decr^(n-1) */
    uint64_t enter = o->interval ? o->interval : 1;
    uint64_t growth = o->interval_growth ? o->interval_growth : 1;
    for (uint32_t n = 1; n <= VIGIL_SCHED_MAX_LEVEL; n++) {
        if (n > 1) {
            factor *= decr;
            if (factor > limit)
                break;
            /* One level per reset at most (matters only for interval_growth = 1). */
            if (n > 2 && enter <= s->enter_at[n - 2])
                enter = s->enter_at[n - 2] + 1;
            s->enter_at[n - 1] = enter;
            enter = enter > UINT64_MAX / growth ? UINT64_MAX : enter * growth;
        }
        s->ncheck0[n] = clamp_ncheck0((factor - 1) * s->ninstr);
        s->max_level = n;
    }
}

uint32_t vigil_schedule_level_after(const struct vigil_schedule *s, uint64_t resets)
{
    if (resets == 0)
        return 0;
    uint32_t level = 1;
    while (level < s->max_level && resets >= s->enter_at[level])
        level++;
    return level;
}

uint32_t vigil_schedule_ncheck0(const struct vigil_schedule *s, uint32_t level)
{
    if (level > s->max_level)
        level = s->max_level;
    return s->ncheck0[level];
}

double vigil_schedule_rate(const struct vigil_schedule *s, uint32_t level)
{
    if (s->mode == VIGIL_MODE_OFF)
        return 0;
    if (s->mode == VIGIL_MODE_FULL)
        return 1;
    if (level == 0)
        level = 1;
    uint32_t ncheck0 = vigil_schedule_ncheck0(s, level);
    return (double)s->ninstr / ((double)ncheck0 + (double)s->ninstr);
}

uint32_t vigil_schedule_reset(const struct vigil_schedule *s, struct __vigil_site_state *st, uint32_t started)
{
    uint32_t before = __atomic_load_n(&st->resets, __ATOMIC_RELAXED);
    uint32_t after = before == UINT32_MAX ? before : before + 1;   /* saturate: never wrap to 100% */
    __atomic_store_n(&st->resets, after, __ATOMIC_RELAXED);
    uint32_t level = vigil_schedule_level_after(s, after);
    __atomic_fetch_add(&st->check_execs, (uint64_t)started + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&st->level, (uint8_t)level, __ATOMIC_RELAXED);
    return vigil_schedule_ncheck0(s, level);
}

uint32_t vigil_schedule_prime(const struct vigil_schedule *s)
{
    return s->mode == VIGIL_MODE_OFF ? vigil_schedule_ncheck0(s, vigil_schedule_level_after(s, 1)) : 0;
}

void vigil_schedule_primed(const struct vigil_schedule *s, struct __vigil_site_state *st)
{
    __atomic_store_n(&st->resets, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&st->level, (uint8_t)vigil_schedule_level_after(s, 1), __ATOMIC_RELAXED);
}

uint64_t vigil_schedule_execs(const struct __vigil_site_state *st, uint32_t started, uint32_t counter)
{
    return __atomic_load_n(&st->instr_execs, __ATOMIC_RELAXED) + __atomic_load_n(&st->check_execs, __ATOMIC_RELAXED) +
           vigil_schedule_pending(started, counter);   /* counted down since the last reset, not yet accounted */
}
