/* Unit test of the adaptive schedule (runtime/schedule.c, a pure file): the exact rate
 * sequence and the reset counts of each decrement, the floor, nCheck0 values, the other modes
 * and other parameter values, and the execution accounting against a model of the emitted
 * dispatch-check code (common/abi.h). */
#include <math.h>
#include <string.h>

#include "../../runtime/schedule.c"
#include "check.h"

static struct vigil_options opts(const char *mode)
{
    struct vigil_options o;
    vigil_options_defaults(&o);
    strcpy(o.mode, mode);
    o.ninstr = 100;   /* the seed's example (the default, 0, is VIGIL_DEFAULT_NINSTR) */
    return o;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * (fabs(b) + 1e-300);
}

/* Runs `resets` resets on a fresh site; records the reset counts at which the level changed. */
static unsigned level_changes(const struct vigil_schedule *s, uint32_t resets, uint32_t *at,
                              uint32_t *levels, unsigned max)
{
    struct __vigil_site_state st = {0};
    unsigned n = 0;
    uint32_t prev = 0, started = 0;
    for (uint32_t k = 1; k <= resets; k++) {
        started = vigil_schedule_reset(s, &st, started);
        if (st.level != prev && n < max) {
            at[n] = k;
            levels[n++] = st.level;
        }
        prev = st.level;
    }
    return n;
}

static void test_defaults(void)
{
    struct vigil_options o = opts("adaptive");
    struct vigil_schedule s;
    vigil_schedule_init(&s, &o);
    CHECK(s.mode == VIGIL_MODE_ADAPTIVE, "mode %d", s.mode);
    CHECK(s.max_level == 4, "floor 0.1%% with decr 10 is level 4, got %u", s.max_level);
    static const double rates[] = {1.0, 1.0, 0.1, 0.01, 0.001};
    static const uint32_t ncheck0[] = {0, 0, 900, 9900, 99900};   /* (10^(n-1) - 1) * 100 */
    for (uint32_t n = 0; n <= 4; n++) {
        CHECK(vigil_schedule_ncheck0(&s, n) == ncheck0[n], "level %u nCheck0 %u, expected %u", n,
              vigil_schedule_ncheck0(&s, n), ncheck0[n]);
        CHECK(near(vigil_schedule_rate(&s, n), rates[n]), "level %u rate %g, expected %g", n,
              vigil_schedule_rate(&s, n), rates[n]);
    }
    CHECK(vigil_schedule_ncheck0(&s, 9) == 99900, "levels beyond the floor stay at the floor");

    /* The decrements happen exactly at 10, 100, 1000 cumulative resets, and never again. */
    uint32_t at[8], levels[8];
    unsigned n = level_changes(&s, 200000, at, levels, 8);
    static const uint32_t want_at[] = {1, 10, 100, 1000}, want_level[] = {1, 2, 3, 4};
    CHECK(n == 4, "%u level changes in 200000 resets, expected 4", n);
    for (unsigned i = 0; i < 4 && i < n; i++)
        CHECK(at[i] == want_at[i] && levels[i] == want_level[i],
              "change %u: level %u at reset %u, expected level %u at reset %u", i, levels[i],
              at[i], want_level[i], want_at[i]);

    /* Reset by reset around the decrement points: counter value returned and rate. */
    struct __vigil_site_state st = {0};
    uint32_t started = 0;
    for (uint32_t k = 1; k <= 1001; k++) {
        uint32_t c = vigil_schedule_reset(&s, &st, started);
        started = c;
        uint32_t want = k < 10 ? 0 : k < 100 ? 900 : k < 1000 ? 9900 : 99900;
        if (k == 9 || k == 10 || k == 99 || k == 100 || k == 999 || k == 1000 || k == 1001) {
            CHECK(c == want, "after reset %u nCheck0 %u, expected %u", k, c, want);
            CHECK(st.resets == k, "resets %u, expected %u", st.resets, k);
        }
    }
    CHECK(near(vigil_schedule_rate(&s, st.level), 0.001), "rate at the floor %g",
          vigil_schedule_rate(&s, st.level));
    /* check_execs: 9 resets consumed 1 each before level 2... i.e. sum of (prev nCheck0 + 1). */
    uint64_t want_execs = 10 * 1 + 90 * 901 + 900 * 9901 + 1 * 99901;
    CHECK(st.check_execs == want_execs, "check_execs %llu, expected %llu",
          (unsigned long long)st.check_execs, (unsigned long long)want_execs);

    /* Level as a pure function of the reset count. */
    CHECK(vigil_schedule_level_after(&s, 0) == 0, "no reset: level 0");
    CHECK(vigil_schedule_level_after(&s, 9) == 1, "9 resets: level 1");
    CHECK(vigil_schedule_level_after(&s, 10) == 2, "10 resets: level 2");
    CHECK(vigil_schedule_level_after(&s, 4000000000u) == 4, "floor held");
}

static void test_saturation(void)
{
    struct vigil_options o = opts("adaptive");
    struct vigil_schedule s;
    vigil_schedule_init(&s, &o);
    struct __vigil_site_state st = {0};
    st.resets = UINT32_MAX - 1;
    uint32_t c = vigil_schedule_reset(&s, &st, vigil_schedule_reset(&s, &st, 0));
    CHECK(st.resets == UINT32_MAX, "resets saturate, got %u", st.resets);
    CHECK(st.level == 4 && c == 99900, "a saturated site stays at the floor (level %u, %u)",
          st.level, c);
}

static void test_other_parameters(void)
{
    struct vigil_options o = opts("adaptive");
    struct vigil_schedule s;
    uint32_t at[40], levels[40];

    /* decr 2, interval 3, growth 2, floor 1/8: rates 1, 1/2, 1/4, 1/8 at 3, 6, 12 resets. */
    o.decrement = 2, o.interval = 3, o.interval_growth = 2, o.rate_floor = 0.125, o.ninstr = 7;
    vigil_schedule_init(&s, &o);
    CHECK(s.max_level == 4, "decr 2 floor 1/8: max level %u", s.max_level);
    unsigned n = level_changes(&s, 10000, at, levels, 40);
    CHECK(n == 4 && at[1] == 3 && at[2] == 6 && at[3] == 12, "decrements at %u %u %u (n=%u)",
          n > 1 ? at[1] : 0, n > 2 ? at[2] : 0, n > 3 ? at[3] : 0, n);
    CHECK(vigil_schedule_ncheck0(&s, 4) == 49, "nCheck0(4) = (8-1)*7 = 49, got %u",
          vigil_schedule_ncheck0(&s, 4));
    CHECK(near(vigil_schedule_rate(&s, 3), 0.25), "rate(3) %g", vigil_schedule_rate(&s, 3));

    /* A floor between two levels: the level that would fall below it is not entered. */
    o = opts("adaptive");
    o.rate_floor = 0.05;
    vigil_schedule_init(&s, &o);
    CHECK(s.max_level == 2, "floor 5%% with decr 10: max level %u, expected 2", s.max_level);

    /* Floor 1: always 100%. */
    o.rate_floor = 1;
    vigil_schedule_init(&s, &o);
    n = level_changes(&s, 100000, at, levels, 40);
    CHECK(n == 1 && s.max_level == 1 && vigil_schedule_ncheck0(&s, 1) == 0,
          "floor 1: one level, nCheck0 0 (n=%u max=%u)", n, s.max_level);

    /* Floor 1e-6: two more levels, at 10000 and 100000 resets. */
    o = opts("adaptive");
    o.rate_floor = 1e-6;
    vigil_schedule_init(&s, &o);
    n = level_changes(&s, 200000, at, levels, 40);
    CHECK(s.max_level == 7 && n == 6 && at[4] == 10000 && at[5] == 100000,
          "floor 1e-6: max %u, %u changes, last at %u", s.max_level, n, n ? at[n - 1] : 0);

    /* interval_growth 1: one decrement per reset at most (10, 11, 12). */
    o = opts("adaptive");
    o.interval_growth = 1;
    vigil_schedule_init(&s, &o);
    n = level_changes(&s, 1000, at, levels, 40);
    CHECK(n == 4 && at[1] == 10 && at[2] == 11 && at[3] == 12, "growth 1: decrements at %u %u %u",
          n > 1 ? at[1] : 0, n > 2 ? at[2] : 0, n > 3 ? at[3] : 0);

    /* ninstr 1: nCheck0 = decr^(n-1) - 1. */
    o = opts("adaptive");
    o.ninstr = 1;
    vigil_schedule_init(&s, &o);
    CHECK(vigil_schedule_ncheck0(&s, 2) == 9 && vigil_schedule_ncheck0(&s, 4) == 999,
          "ninstr 1: %u %u", vigil_schedule_ncheck0(&s, 2), vigil_schedule_ncheck0(&s, 4));

    /* ninstr 0 (the option's default, when no tool asked): bursts of VIGIL_DEFAULT_NINSTR. */
    o.ninstr = 0;
    vigil_schedule_init(&s, &o);
    CHECK(s.ninstr == VIGIL_DEFAULT_NINSTR && vigil_schedule_ncheck0(&s, 4) == 999 * VIGIL_DEFAULT_NINSTR,
          "ninstr 0: %u, nCheck0 %u", s.ninstr, vigil_schedule_ncheck0(&s, 4));

    /* A huge burst length: nCheck0 clamps to the counter's range. */
    o.ninstr = 4000000000u;
    vigil_schedule_init(&s, &o);
    CHECK(vigil_schedule_ncheck0(&s, 2) == VIGIL_COUNTER_MAX - 1, "clamped nCheck0 %u",
          vigil_schedule_ncheck0(&s, 2));
}

static void test_modes(void)
{
    struct vigil_schedule s;
    struct vigil_options o = opts("bursty");
    o.bursty_rate = 0.01;
    vigil_schedule_init(&s, &o);
    struct __vigil_site_state st = {0};
    uint32_t c1 = vigil_schedule_reset(&s, &st, 0), c2 = c1;
    for (int i = 0; i < 5000; i++)
        c2 = vigil_schedule_reset(&s, &st, c2);
    CHECK(c1 == 9900 && c2 == 9900, "bursty 1%%: nCheck0 (1/r - 1) * 100 = 9900, got %u %u", c1, c2);
    CHECK(st.level == 1, "bursty: one level, got %u", st.level);
    CHECK(near(vigil_schedule_rate(&s, st.level), 0.01), "bursty rate %g",
          vigil_schedule_rate(&s, st.level));
    CHECK(st.check_execs == 1 + 5000ull * 9901, "bursty check_execs %llu",
          (unsigned long long)st.check_execs);
    o.bursty_rate = 0.001;
    vigil_schedule_init(&s, &o);
    CHECK(vigil_schedule_ncheck0(&s, 1) == 99900, "bursty 0.1%%: %u", vigil_schedule_ncheck0(&s, 1));

    o = opts("off");
    vigil_schedule_init(&s, &o);
    memset(&st, 0, sizeof st);
    c1 = vigil_schedule_reset(&s, &st, 0);
    CHECK(s.mode == VIGIL_MODE_OFF && c1 == VIGIL_COUNTER_MAX, "off: counter parked at %u", c1);
    CHECK(vigil_schedule_rate(&s, 1) == 0 && vigil_schedule_rate(&s, 0) == 0, "off: rate 0");
    /* 1000 executions after the first: still counted. */
    CHECK(vigil_schedule_execs(&st, c1, VIGIL_COUNTER_MAX - 1000) == 1001, "off: execs %llu",
          (unsigned long long)vigil_schedule_execs(&st, c1, VIGIL_COUNTER_MAX - 1000));

    /* Primed at registration (runtime/registry.c): the counter starts at the countdown, the
     * first execution is not sampled, and executions are counted from there exactly. */
    memset(&st, 0, sizeof st);
    uint32_t start = vigil_schedule_prime(&s);
    CHECK(start == VIGIL_COUNTER_MAX, "off: primed at %u", start);
    vigil_schedule_primed(&s, &st);
    CHECK(vigil_schedule_execs(&st, start, start - 3) == 3 && st.check_execs == 0 && st.resets == 1 && st.level == 1,
          "off, primed: 3 executions counted as %llu (check_execs %llu, resets %u, level %u)",
          (unsigned long long)vigil_schedule_execs(&st, start, start - 3), (unsigned long long)st.check_execs,
          st.resets, st.level);
    /* ... and after the counter ran out, a reset accounts for the whole countdown. */
    c1 = vigil_schedule_reset(&s, &st, start);
    CHECK(vigil_schedule_execs(&st, c1, VIGIL_COUNTER_MAX - 5) == (uint64_t)VIGIL_COUNTER_MAX + 1 + 5,
          "off, primed, reset: execs %llu", (unsigned long long)vigil_schedule_execs(&st, c1, VIGIL_COUNTER_MAX - 5));
    for (const char *mode_name = "adaptive";; mode_name = mode_name[0] == 'a' ? "bursty" : "full") {
        struct vigil_options other = opts(mode_name);
        struct vigil_schedule t;
        vigil_schedule_init(&t, &other);
        CHECK(vigil_schedule_prime(&t) == 0, "%s: first executions are sampled, not primed", mode_name);
        if (mode_name[0] == 'f')
            break;
    }

    o = opts("full");
    vigil_schedule_init(&s, &o);
    memset(&st, 0, sizeof st);
    c1 = 0;
    for (int i = 0; i < 100000; i++)
        c1 = vigil_schedule_reset(&s, &st, c1);
    CHECK(c1 == 0 && vigil_schedule_rate(&s, st.level) == 1, "full: nCheck0 %u rate %g", c1,
          vigil_schedule_rate(&s, st.level));

    CHECK(vigil_schedule_mode_from_name("adaptive") == VIGIL_MODE_ADAPTIVE &&
          vigil_schedule_mode_from_name("bursty") == VIGIL_MODE_BURSTY &&
          vigil_schedule_mode_from_name("full") == VIGIL_MODE_FULL &&
          vigil_schedule_mode_from_name("off") == VIGIL_MODE_OFF &&
          vigil_schedule_mode_from_name("fast") == -1, "mode names");
}

/* The emitted code of one dispatch check, run N times by one thread whose bursts are spent
 * at this check (a loop back-edge): counts and the fraction sampled must match the schedule. */
static void test_emitted_code_model(void)
{
    struct vigil_options o = opts("adaptive");
    struct vigil_schedule s;
    vigil_schedule_init(&s, &o);
    struct __vigil_site_state st = {0};
    uint32_t counter = 0, started = 0, burst_left = 0;
    uint64_t tail_total = 0, tail_instr = 0;
    const uint64_t N = 50000000;
    for (uint64_t i = 0; i < N; i++) {
        int in_burst;
        if (burst_left != 0) {                       /* instrumented_check */
            st.instr_execs++;
            if (burst_left > 1) {
                burst_left--;
                in_burst = 1;
            } else {
                burst_left = 0;                      /* __vigil_burst_end: adaptive */
                in_burst = 0;
            }
        } else if (counter == 0) {                   /* __vigil_dispatch_enter */
            counter = started = vigil_schedule_reset(&s, &st, started);
            st.bursts++;
            burst_left = s.ninstr;
            in_burst = 1;
        } else {
            counter--;
            in_burst = 0;
        }
        if (i >= N / 2) {
            tail_total++;
            tail_instr += in_burst;
        }
    }
    uint64_t execs = vigil_schedule_execs(&st, started, counter);
    CHECK(execs == N, "execs accounted %llu, executed %llu", (unsigned long long)execs,
          (unsigned long long)N);
    CHECK(st.level == 4, "a hot check reaches the floor: level %u", st.level);
    double tail_rate = (double)tail_instr / (double)tail_total;
    CHECK(tail_rate > 0.0009 && tail_rate < 0.0011, "steady-state sampled fraction %g, expected 0.001",
          tail_rate);
    CHECK(st.bursts == st.resets, "bursts %llu = resets %u", (unsigned long long)st.bursts, st.resets);

    /* A rare check, executed 5 times: every execution starts a burst (100%). */
    struct __vigil_site_state rare = {0};
    uint32_t rc = 0;
    for (int i = 0; i < 5; i++) {
        CHECK(rc == 0, "rare check: counter %u before execution %d", rc, i);
        rc = vigil_schedule_reset(&s, &rare, rc);
    }
    CHECK(near(vigil_schedule_rate(&s, rare.level), 1.0) && vigil_schedule_execs(&rare, rc, rc) == 5,
          "rare check: rate %g execs %llu", vigil_schedule_rate(&s, rare.level),
          (unsigned long long)vigil_schedule_execs(&rare, rc, rc));
}

/* Thread-local countdowns (common/abi.h, ABI 7): each thread has its own countdown of a site,
 * starting at 0, and all reset the site's shared state. Executions are accounted exactly: each
 * reset adds what that thread's countdown stood for, and a thread's exit folds in what its
 * countdown counted since (runtime/sampler.c, __vigil_counters_fold_thread). */
static void test_per_thread_countdowns(void)
{
    struct vigil_options o = opts("adaptive");
    struct vigil_schedule s;
    vigil_schedule_init(&s, &o);
    struct __vigil_site_state st = {0};
    enum { THREADS = 3 };
    uint32_t counter[THREADS] = {0}, started[THREADS] = {0}, burst_left[THREADS] = {0};
    uint64_t executed = 0;
    /* A thread joining late starts at 0: its first execution consumes 1, not the level's nCheck0. */
    for (uint64_t i = 0; i < 3000000; i++) {
        int t = i < 1000000 ? 0 : (int)(i % (i < 2000000 ? 2 : THREADS));
        executed++;
        if (burst_left[t] != 0) {
            st.instr_execs++;
            burst_left[t]--;
        } else if (counter[t] == 0) {
            uint64_t before = st.check_execs;
            counter[t] = vigil_schedule_reset(&s, &st, started[t]);
            CHECK(st.check_execs - before == (uint64_t)started[t] + 1, "reset adds the thread's own countdown");
            if (i == 1000001)
                CHECK(started[t] == 0 && st.check_execs - before == 1, "a new thread's first check consumes 1");
            started[t] = counter[t];
            burst_left[t] = s.ninstr;   /* the checks after this one, in the instrumented copy */
        } else {
            counter[t]--;
        }
    }
    for (int t = 1; t < THREADS; t++) {   /* threads 1 and 2 exit: their countdowns are folded */
        st.check_execs += started[t] - counter[t];
        started[t] = counter[t];
    }
    uint64_t execs = vigil_schedule_execs(&st, started[0], counter[0]);
    CHECK(execs == executed, "three threads: execs accounted %llu, executed %llu", (unsigned long long)execs,
          (unsigned long long)executed);
    CHECK(st.level >= 3 && st.level == vigil_schedule_level_after(&s, st.resets),
          "the shared level follows every thread's resets: level %u after %u", st.level, st.resets);
}

int main(void)
{
    test_defaults();
    test_saturation();
    test_other_parameters();
    test_modes();
    test_emitted_code_model();
    test_per_thread_countdowns();
    return CHECK_DONE("test_schedule");
}
