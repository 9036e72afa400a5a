/* hotspot: the hot-spot profiler's first part (tools/hotspot/README.md): each thread's PC and a
 * short frame-pointer stack, sampled on the thread's own CPU clock, counted per distinct stack
 * and written to hotspot.json at exit; `vigil hot` names them.
 *
 * Clocks. Each thread arms a clock of its own CPU time when it starts (the main thread in init,
 * others at VIGIL_THREAD_START, a fork child's thread at VIGIL_THREAD_FORK_CHILD) and closes it
 * at VIGIL_THREAD_EXIT: perf_event_open's task clock (PERF_COUNT_SW_TASK_CLOCK, user mode only,
 * so that the signal never interrupts a system call), whose overflow signal goes to the thread
 * (O_ASYNC, F_SETSIG, F_SETOWN_EX with F_OWNER_TID); where that fails, a POSIX timer on
 * CLOCK_THREAD_CPUTIME_ID with SIGEV_THREAD_ID. Each clock is one-shot and the handler re-arms
 * it: a thread that blocks the signal, or a handler of the program's that replaced ours, gets
 * at most one pending signal, never a queue of them. No thread touches another's clock.
 *
 * The signal. SIGRTMIN + hotspot.signal (3): it must be at its default disposition at start-up
 * (else one message and no sampling). The program may install its own handler later: the hooks
 * (thread start and exit, fork, the final report) check that ours is still in place, and step
 * back with one message when it is not. A signal the process is sent (kill, sigqueue, raise)
 * gets the default action, as without vigil.
 *
 * The handler takes no lock and allocates nothing: the PC from the interrupted context, the
 * frame-pointer chain within the thread's stack (bounds from pthread_getattr_np at its start,
 * each frame checked before it is read), one count in the lock-free stack table (stacktable.h)
 * and one entry in the thread's timeline (mapped at its start). errno is kept. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "hsint.h"
#include "walk.h"

#define VIGIL_OPTSET_TOOL hotspot
#define VIGIL_OPTSET_ROWS "tools/hotspot/options.inc"
#include "optset.h"

static struct hotspot_options hs_opts;   /* written by the runtime before init */
struct hs_state hs;               /* see hsint.h */

#define HS_TIMER_TAG 0x68737074   /* sigev_value of our timers ("hspt") */
#define PROBE_NS 10000000ull      /* before the delay ends: the clock only checks the time */

/* This thread's clock and stack. Written by the thread's own hooks; read by its handler. */
struct hs_self {
    struct hs_rec *rec;           /* NULL: more threads than HS_MAX_RECS (no timeline) */
    uintptr_t lo, hi;             /* the thread's stack */
    enum hs_method method;        /* HS_NONE: no clock */
    int fd;                       /* perf: the event */
    uint64_t perf_id;             /* perf: its id (PERF_EVENT_IOC_ID), to recognise it */
    timer_t timer;                /* timer: the POSIX timer */
    int started;                  /* hs_thread_begin ran for this thread */
    int sampling;                 /* past the delay: the clock runs at the period */
    uint64_t armed_ns;            /* the period the clock was last armed with */
    volatile sig_atomic_t armed;  /* the handler samples and re-arms while set */
};
static __thread struct hs_self self;

/* Set by the final report (and never cleared): handlers neither sample nor re-arm. */
static volatile int ended;

static int hotspot_init(void);
static void hotspot_fini(void);
static void hotspot_flush(void);
static void on_thread(enum vigil_thread_op op, uint64_t id);
static void report_soon(void);
static void make_report_timer(void);

struct vigil_tool hs_tool = {
    .api_version = VIGIL_TOOL_API_VERSION,
    .name = "hotspot",
    .description = "hot spots: PC and frame-pointer stack sampled on each thread's CPU clock; writes hotspot.json (vigil hot)",
    .events = VIGIL_EV_THREAD,
    .init = hotspot_init,
    .fini = hotspot_fini,
    .on_thread = on_thread,
    .flush = hotspot_flush,
    .options = &hotspot_option_set,
    .option_values = &hs_opts,
    .bursts = VIGIL_BURSTS_UNUSED,   /* samples the PC and hooks entries: no instrumented copy */
};
VIGIL_REGISTER_TOOL(hs_tool);

uint64_t hs_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t period_ns(void)
{
    return (uint64_t)hs_opts.period * 1000u;
}

/* The period samples are taken at now: period until late_after samples exist (the walk chooses
 * its hot spots from them), then the late period. */
static uint64_t sampling_ns(void)
{
    if (hs.late_period_us > hs.period_us && __atomic_load_n(&hs.samples, __ATOMIC_RELAXED) >= hs.late_after)
        return (uint64_t)hs.late_period_us * 1000u;
    return period_ns();
}

/* ---- the clocks ---- */

/* A perf event counting this thread's CPU time in user mode, disabled, its overflow signal
 * (hs.signo) sent to this thread; -1 with errno. Kept out of the low descriptors the program
 * expects to get from open(). */
static int perf_open(pid_t tid, uint64_t first_ns, uint64_t *id)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = first_ns;
    a.disabled = 1;
    a.exclude_kernel = 1;   /* overflows only in user mode: the signal interrupts no system call */
    a.exclude_hv = 1;
    a.wakeup_events = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct rlimit rl;
    int floor = 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        floor = rl.rlim_cur > 2048 ? 1024 : (int)(rl.rlim_cur / 2);
    if (fd < floor) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
        if (high >= 0) {
            close(fd);
            fd = high;
        }
    }
    struct f_owner_ex owner = {F_OWNER_TID, tid};
    if (fcntl(fd, F_SETFL, O_ASYNC) != 0 || fcntl(fd, F_SETSIG, hs.signo) != 0 ||
        fcntl(fd, F_SETOWN_EX, &owner) != 0 || ioctl(fd, PERF_EVENT_IOC_ID, id) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Whether fd is still our event (the program may have closed it and reused the number). */
static int perf_is_ours(int fd, uint64_t id)
{
    uint64_t now;
    return fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, &now) == 0 && now == id;
}

static int timer_open(pid_t tid, timer_t *t)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = hs.signo;
    ev.sigev_value.sival_int = HS_TIMER_TAG;
    ev._sigev_un._tid = tid;
    return timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, t);
}

/* One more expiry of this thread's clock after ns of its CPU time (signal-safe). 0, or -1. */
static int arm(struct hs_self *s, uint64_t ns, int new_period)
{
    if (s->method == HS_PERF) {
        if (new_period && ioctl(s->fd, PERF_EVENT_IOC_PERIOD, &ns) != 0)
            return -1;
        return ioctl(s->fd, PERF_EVENT_IOC_REFRESH, 1);
    }
    struct itimerspec it = {{0, 0}, {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)}};
    return timer_settime(s->timer, 0, &it, NULL);
}

static void close_clock(struct hs_self *s)
{
    s->armed = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (s->method == HS_PERF) {
        if (perf_is_ours(s->fd, s->perf_id))
            close(s->fd);
        if (s->rec)
            s->rec->fd = -1;
    } else if (s->method == HS_TIMER) {
        timer_delete(s->timer);
    }
    s->method = HS_NONE;
}

/* ---- the signal handler ---- */

/* Where a direct call's target may lie before the interrupted pc (the function holding it), and
 * before a return address (its caller's start). Sizes of functions, generous: they only bound
 * how far a wrong guess could reach. */
#define HS_CALLEE_SPAN (64u << 10)
#define HS_CALLER_SPAN (4u << 20)

/* The caller that the frame-pointer chain skips when the PC is in a function that has not set
 * up its frame: a leaf built without one (VIGIL_CC_FRAME_POINTERS=nonleaf), or any function in
 * its prologue or after its epilogue. The frame register is then still the caller's, and the
 * return address into the caller is at the stack pointer (or above the frame register just
 * pushed). Taken only when validated twice: it follows a direct call of code at most
 * HS_CALLEE_SPAN before pc, and it lies at most HS_CALLER_SPAN after the start of the function
 * whose frame the register holds (named by the direct call that the frame's own return address
 * follows). A leaf called through a pointer, or whose caller was, keeps the old short stack.
 * Returns the frames written to *out (0 or 1). */
static uint32_t frameless_caller(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t hi, uintptr_t *out)
{
    const uintptr_t *top = (const uintptr_t *)sp;
    uintptr_t slot = top[0] == fp ? sp + sizeof(uintptr_t) : sp;   /* just after `push %rbp` */
    uintptr_t ret = hs_walk_real_return(*(const uintptr_t *)slot, slot);
    uintptr_t callee = vigil_direct_call_target(ret);
    if (!callee || callee > pc || pc - callee >= HS_CALLEE_SPAN)
        return 0;
    if (fp < sp || fp > hi - 16 || (fp & 7))
        return 0;
    uintptr_t framed = hs_walk_real_return(((const uintptr_t *)fp)[1], fp + sizeof(uintptr_t));
    uintptr_t caller = vigil_direct_call_target(framed);
    if (framed == ret || !caller || caller > ret || ret - caller >= HS_CALLER_SPAN)
        return 0;   /* the chain's first frame already names it, or the caller is not known */
    *out = ret;
    return 1;
}

/* weight: the CPU time since the clock's last expiry in periods (1, or late/period). */
static void take_sample(struct hs_self *s, const ucontext_t *uc, uint64_t weight)
{
    uintptr_t pcs[HS_MAX_DEPTH];
    uint32_t n = 0, depth = hs_opts.depth;
    pcs[n++] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    /* Frames lie between the interrupted stack pointer and the top of the thread's stack; off
     * it (a signal stack, a coroutine's), only the PC is kept. */
    uintptr_t lo = sp, hi = s->hi;
    if (sp < s->lo || sp >= s->hi)
        hi = 0;
    if (n < depth && hi >= 16 && sp <= hi - 16 && (sp & 7) == 0)
        n += frameless_caller(pcs[0], sp, fp, hi, &pcs[n]);
    while (n < depth && fp >= lo && hi >= 16 && fp <= hi - 16 && (fp & 7) == 0) {
        const uintptr_t *frame = (const uintptr_t *)fp;
        uintptr_t next = frame[0], ret = hs_walk_real_return(frame[1], fp + sizeof(uintptr_t));
        if (ret < 4096)
            break;
        pcs[n++] = ret;
        if (next <= fp)   /* frames go up the stack: anything else ends the chain */
            break;
        fp = next;
    }
    uint32_t id = hs_table_add(&hs.table, pcs, n, weight);
    __atomic_add_fetch(&hs.samples, weight, __ATOMIC_RELAXED);
    __atomic_add_fetch(&hs.signals, 1, __ATOMIC_RELAXED);
    struct hs_rec *r = s->rec;
    if (!r) {
        __atomic_add_fetch(&hs.samples_unrecorded, weight, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&r->samples, r->samples + weight, __ATOMIC_RELAXED);
    if (r->timeline_n < r->timeline_cap) {
        uint64_t t_us = (hs_mono_ns() - hs.start_ns) / 1000u;
        r->timeline[r->timeline_n] = t_us << HS_TIMELINE_SHIFT | (weight > 1 ? HS_TIMELINE_LATE : 0) |
                                     (id < HS_TIMELINE_ID ? id : HS_TIMELINE_ID);
        __atomic_store_n(&r->timeline_n, r->timeline_n + 1, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(&r->timeline_dropped, r->timeline_dropped + 1, __ATOMIC_RELAXED);
    }
}

/* A signal sent by a process (this one too): the default action, as without vigil. */
static void default_action(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    raise(sig);   /* blocked while this handler runs: acted on when it is unblocked, just below */
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void hs_handler(int sig, siginfo_t *si, void *context)
{
    int saved = errno;
    struct hs_self *s = &self;
    int from_timer = si->si_code == SI_TIMER && si->si_value.sival_int == HS_TIMER_TAG;
    int from_perf = si->si_code >= POLL_IN && si->si_code <= POLL_HUP;
    if (!from_timer && !from_perf) {
        if (si->si_code <= 0)   /* SI_USER, SI_QUEUE, SI_TKILL, ...: sent, not ours */
            default_action(sig);
        errno = saved;
        return;
    }
    if (!s->armed || ended || hs.stepped_back || (from_perf && (s->method != HS_PERF || si->si_fd != s->fd)) ||
        (from_timer && s->method != HS_TIMER)) {
        errno = saved;   /* a clock closed meanwhile, or sampling ended */
        return;
    }
    if (s->sampling) {
        uint64_t weight = s->armed_ns / period_ns();
        take_sample(s, context, weight ? weight : 1);
        hs_walk_step();
        if (hs_walk_report_wanted())
            report_soon();
    } else if (hs_mono_ns() >= hs.sample_start_ns) {
        s->sampling = 1;   /* the delay is over: from now on at the period */
    }
    uint64_t next = s->sampling ? sampling_ns() : PROBE_NS;
    if (arm(s, next, next != s->armed_ns) != 0) {
        s->armed = 0;
        __atomic_add_fetch(&hs.rearm_failed, 1, __ATOMIC_RELAXED);
    }
    s->armed_ns = next;
    errno = saved;
}

/* ---- threads ---- */

static const char *method_name(enum hs_method m)
{
    return m == HS_PERF ? "perf_event task clock" : m == HS_TIMER ? "timer_create thread CPU clock" : "none";
}

/* Is our handler still the signal's disposition? If not, stop once, with a message. */
static int still_ours(void)
{
    if (hs.method == HS_NONE || hs.stepped_back)
        return 0;
    struct sigaction cur;
    if (sigaction(hs.signo, NULL, &cur) != 0 || ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == hs_handler))
        return 1;
    if (__atomic_exchange_n(&hs.stepped_back, 1, __ATOMIC_ACQ_REL))
        return 0;   /* another thread saw it first and said so */
    vigil_tool_message(&hs_tool, "the program set its own disposition for signal %d (SIGRTMIN+%u), which sampling "
                       "uses: sampling stopped after %llu samples (the report covers the time before; a thread's "
                       "armed clock may still deliver one signal to the program's handler); hotspot.signal=N picks "
                       "another signal",
                       hs.signo, hs_opts.signal, (unsigned long long)__atomic_load_n(&hs.samples, __ATOMIC_RELAXED));
    if (self.method != HS_NONE)
        close_clock(&self);   /* this thread's armed expiry at least goes nowhere */
    return 0;
}

/* Arm a clock for the calling thread (its hooks, or init for the main thread). */
static void thread_begin(void)
{
    struct hs_self *s = &self;
    if (s->started || hs.method == HS_NONE || hs.stepped_back || ended)
        return;
    s->started = 1;
    sigset_t mask;
    if (pthread_sigmask(SIG_SETMASK, NULL, &mask) == 0 && sigismember(&mask, hs.signo)) {
        __atomic_add_fetch(&hs.threads_blocked, 1, __ATOMIC_RELAXED);
        return;   /* the program blocks the signal here: a clock would only leave it pending */
    }
    pthread_attr_t attr;
    if (!s->hi && pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr;
        size_t size;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            s->lo = (uintptr_t)addr;
            s->hi = (uintptr_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
    hs_walk_thread_start_stack(s->lo, s->hi);
    pid_t tid = (pid_t)syscall(SYS_gettid);
    uint32_t index = __atomic_fetch_add(&hs.nrecs, 1, __ATOMIC_RELAXED);
    if (index < HS_MAX_RECS) {
        struct hs_rec *r = &hs.recs[index];
        memset(r, 0, sizeof *r);
        r->tid = tid;
        r->index = index;
        r->fd = -1;
        if (hs_opts.timeline) {
            void *m = mmap(NULL, (size_t)hs_opts.timeline * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (m != MAP_FAILED) {
                r->timeline = m;
                r->timeline_cap = hs_opts.timeline;
            }
        }
        s->rec = r;
    }
    s->sampling = hs_mono_ns() >= hs.sample_start_ns;
    uint64_t first = s->sampling ? sampling_ns() : PROBE_NS;
    s->armed_ns = first;
    s->method = hs.method;
    if (s->method == HS_PERF) {
        s->fd = perf_open(tid, first, &s->perf_id);
        if (s->fd < 0 && strcmp(hs_opts.clock, "perf") != 0) {
            s->method = HS_TIMER;   /* (EMFILE, say) this thread uses the timer */
            __atomic_add_fetch(&hs.threads_fallback, 1, __ATOMIC_RELAXED);
        } else if (s->fd < 0) {
            s->method = HS_NONE;
        } else if (s->rec) {
            s->rec->fd = s->fd;
            s->rec->perf_id = s->perf_id;
        }
    }
    if (s->method == HS_TIMER && timer_open(tid, &s->timer) != 0)
        s->method = HS_NONE;
    if (s->method == HS_NONE) {
        __atomic_add_fetch(&hs.threads_failed, 1, __ATOMIC_RELAXED);
        return;
    }
    s->armed = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (arm(s, first, 0) != 0) {
        __atomic_add_fetch(&hs.threads_failed, 1, __ATOMIC_RELAXED);
        close_clock(s);
        return;
    }
    __atomic_add_fetch(&hs.threads, 1, __ATOMIC_RELAXED);
}

static void thread_end(void)
{
    struct hs_self *s = &self;
    if (s->method != HS_NONE)
        close_clock(s);
    if (s->rec)
        s->rec->exited = 1;
}

/* The child of a fork: the parent's clocks are not its own (their descriptors, copied, still
 * count the parent's threads), nor are its samples. Start afresh with this thread, whose stack
 * is the one it had (known: pthread_getattr_np would read /proc in a fork child). */
static void fork_child(void)
{
    struct hs_self *s = &self;
    s->armed = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint32_t n = hs.nrecs < HS_MAX_RECS ? hs.nrecs : HS_MAX_RECS;
    for (uint32_t i = 0; i < n; i++) {
        struct hs_rec *r = &hs.recs[i];
        if (perf_is_ours(r->fd, r->perf_id))
            close(r->fd);
        if (r->timeline)
            munmap(r->timeline, (size_t)r->timeline_cap * sizeof(uint64_t));
    }
    if (!s->rec && s->method == HS_PERF && perf_is_ours(s->fd, s->perf_id))
        close(s->fd);
    uintptr_t lo = s->lo, hi = s->hi;
    memset(s, 0, sizeof *s);   /* a timer is not inherited: nothing to delete */
    s->lo = lo;
    s->hi = hi;
    hs_table_reset(&hs.table);
    hs.nrecs = 0;
    hs.threads = hs.threads_blocked = hs.threads_failed = hs.threads_fallback = 0;
    hs.samples = hs.signals = hs.samples_unrecorded = hs.rearm_failed = 0;
    hs.start_ns = hs_mono_ns();
    hs_walk_fork_child();
    make_report_timer();
    if (still_ours())
        thread_begin();
}

static void on_thread(enum vigil_thread_op op, uint64_t id)
{
    (void)id;
    if (hs.method == HS_NONE)
        return;
    switch (op) {
    case VIGIL_THREAD_START:
        if (still_ours())
            thread_begin();
        break;
    case VIGIL_THREAD_EXIT:
        still_ours();
        thread_end();
        break;
    case VIGIL_THREAD_FORK_CHILD:
        fork_child();
        break;
    default:
        break;
    }
}

/* ---- start and end ---- */

static int option_ok(const char *name, uint32_t value, uint32_t lo, uint32_t hi)
{
    if (value >= lo && value <= hi)
        return 1;
    vigil_tool_message(&hs_tool, "hotspot.%s=%u: expected %u to %u; using the default", name, value, lo, hi);
    return 0;
}

static void not_sampling(const char *fmt, const char *detail)
{
    hs.method = HS_NONE;
    snprintf(hs.why, sizeof hs.why, fmt, detail);
    vigil_tool_message(&hs_tool, "not sampling: %s", hs.why);
}

/* hotspot.json while the program runs. The walk signal stops the walks (or restarts them); when
 * they stop, or the last one ends on its own, the report is written through the runtime
 * (vigil_signal_report: run.txt and every tool's flush) from the walk signal's handler, where
 * the runtime can tell whether the interrupted code allows it. A step that ran in the sampling
 * handler, or a signal that came where a report cannot be written (inside malloc, say), leaves
 * the report pending and a one-shot timer sends the walk signal again a little later; while a
 * report is pending, the walk signal writes it instead of toggling. */
#define REPORT_RETRY_NS (2 * 1000 * 1000)
static timer_t report_timer;          /* created by init with the walk signal's handler, and
                                         again in a fork child (timers are not inherited) */
static int report_timer_ok;           /* written with report_timer */
static int walk_signo;                /* the walk signal (0: none); written by init */
static volatile sig_atomic_t report_pending;   /* set by report_soon, cleared by the handler */

/* The timer sends the walk signal only while it is still ours (the program sees SIG_DFL where
 * the runtime stands in for it): a handler the program installed since must not get it. */
static void report_soon(void)
{
    report_pending = 1;
    struct sigaction now;
    if (report_timer_ok && sigaction(walk_signo, NULL, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
        now.sa_handler == SIG_DFL)
        timer_settime(report_timer, 0, &(struct itimerspec){.it_value = {0, REPORT_RETRY_NS}}, NULL);
}

static void try_report(void)
{
    report_pending = 0;
    if (vigil_signal_report() == 0)
        report_soon();
}

/* The walk signal: a pending report, else stop or restart the walks (walk.h). */
static void walk_signal_handler(int sig)
{
    (void)sig;
    int saved = errno;
    if (report_pending || ended) {
        if (!ended)
            try_report();
        errno = saved;
        return;
    }
    hs_walk_toggle();
    if (hs_walk_report_wanted())
        try_report();
    errno = saved;
}

static void make_report_timer(void)
{
    report_timer_ok = 0;
    report_pending = 0;
    if (!walk_signo)
        return;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = walk_signo;
    report_timer_ok = timer_create(CLOCK_MONOTONIC, &ev, &report_timer) == 0;
}

/* Through the runtime (vigil_on_signal): the program keeps seeing SIG_DFL, a handler of its own
 * replaces ours, and the signal it sends itself keeps its default action. */
static void install_walk_signal(void)
{
    if (!hs_opts.walk_spots)
        return;
    int signo = SIGRTMIN + (int)hs_opts.walk_signal;
    if (signo == hs.signo || vigil_on_signal(signo, walk_signal_handler) != 0) {
        vigil_tool_message(&hs_tool, "walk signal %d (SIGRTMIN+%u) is the sampling signal or the program's: the "
                           "walks cannot be stopped and restarted by a signal (hotspot.walk_signal=N picks another)",
                           signo, hs_opts.walk_signal);
        return;
    }
    walk_signo = signo;
    make_report_timer();
}

/* A report of the running program (vigil_flush_report, the walk signal): hotspot.json of the
 * moment, the walks still going marked so. */
static void hotspot_flush(void)
{
    if (!ended)
        hs_report_write();
}

static int hotspot_init(void)
{
    if (!option_ok("walk_spots", hs_opts.walk_spots, 0, 16))
        hs_opts.walk_spots = 2;
    if (!option_ok("walk_share", hs_opts.walk_share, 1, 100))
        hs_opts.walk_share = 10;
    if (!option_ok("walk_calls", hs_opts.walk_calls, 1, 100000000))
        hs_opts.walk_calls = 1000;
    if (!option_ok("walk_min_share", hs_opts.walk_min_share, 0, 100))
        hs_opts.walk_min_share = 5;
    if (!option_ok("walk_samples", hs_opts.walk_samples, 1, 100000000))
        hs_opts.walk_samples = 100;
    if (!option_ok("walk_timeout_ms", hs_opts.walk_timeout_ms, 1, 3600000))
        hs_opts.walk_timeout_ms = 1000;
    if (!option_ok("walk_trace", hs_opts.walk_trace, 0, 1u << 20))
        hs_opts.walk_trace = 4096;
    if (!option_ok("walk_signal", hs_opts.walk_signal, 0, (uint32_t)(SIGRTMAX - SIGRTMIN)))
        hs_opts.walk_signal = 4;
    if (!option_ok("period", hs_opts.period, 100, 1000000))
        hs_opts.period = 1000;
    if (!option_ok("depth", hs_opts.depth, 1, HS_MAX_DEPTH))
        hs_opts.depth = 32;
    if (!option_ok("max_stacks", hs_opts.max_stacks, 16, HS_MAX_STACKS))
        hs_opts.max_stacks = 8192;
    if (!option_ok("timeline", hs_opts.timeline, 0, 1u << 24))
        hs_opts.timeline = 65536;
    if (!option_ok("signal", hs_opts.signal, 0, (uint32_t)(SIGRTMAX - SIGRTMIN)))
        hs_opts.signal = 3;
    if (hs_opts.late_period && !option_ok("late_period", hs_opts.late_period, hs_opts.period, 1000000))
        hs_opts.late_period = 10000;
    hs.signo = SIGRTMIN + (int)hs_opts.signal;
    hs.period_us = hs_opts.period;
    /* a multiple of the period, so that a late sample weighs a whole number of samples */
    hs.late_period_us = hs_opts.late_period / hs_opts.period * hs_opts.period;
    if (hs.late_period_us < hs.period_us)   /* 0, or the default under a longer period */
        hs.late_period_us = hs.period_us;
    hs.late_after = hs_opts.walk_samples;
    hs.depth = hs_opts.depth;
    hs.max_stacks = hs_opts.max_stacks;
    hs.delay_ms = hs_opts.delay_ms;
    hs.timeline = hs_opts.timeline;
    hs.start_ns = hs_mono_ns();
    hs.sample_start_ns = hs.start_ns + (uint64_t)hs_opts.delay_ms * 1000000u;

    size_t bytes = hs_table_bytes(hs_opts.max_stacks, hs_opts.depth);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        not_sampling("no memory for the stack table (mmap: %s)", strerror(errno));
        return 0;
    }
    hs_table_init(&hs.table, mem, hs_opts.max_stacks, hs_opts.depth);

    /* The signal: free (at its default) or we stay out of the program's way. */
    struct sigaction old;
    if (sigaction(hs.signo, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
        char sig[64];
        snprintf(sig, sizeof sig, "%d (SIGRTMIN+%u)", hs.signo, hs_opts.signal);
        not_sampling("signal %s is not at its default disposition (the program or its parent set a handler "
                     "or ignores it); hotspot.signal=N picks another", sig);
        return 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = hs_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(hs.signo, &sa, NULL) != 0) {
        not_sampling("cannot install the signal handler: %s", strerror(errno));
        return 0;
    }

    /* The clock: perf's task clock, else the POSIX thread CPU-time timer (clock=auto). */
    hs.method = strcmp(hs_opts.clock, "timer") == 0 ? HS_TIMER : HS_PERF;
    if (hs.method == HS_PERF) {
        uint64_t id;
        int fd = perf_open((pid_t)syscall(SYS_gettid), period_ns(), &id);
        if (fd >= 0) {
            close(fd);
        } else if (strcmp(hs_opts.clock, "perf") == 0) {
            not_sampling("perf_event_open: %s (hotspot.clock=perf)", strerror(errno));
            return 0;
        } else {
            snprintf(hs.why, sizeof hs.why, "perf_event_open: %s: using timer_create", strerror(errno));
            hs.method = HS_TIMER;
            if (vigil_verbosity() >= 1)
                vigil_tool_message(&hs_tool, "%s", hs.why);
        }
    }
    struct hs_walk_options wo = {hs_opts.walk_share, hs_opts.walk_spots, hs_opts.walk_calls, hs_opts.walk_min_share,
                                 hs_opts.walk_samples, hs_opts.walk_timeout_ms, hs_opts.walk_trace};
    hs_walk_init(&wo);
    install_walk_signal();
    thread_begin();
    return 0;
}

static void hotspot_fini(void)
{
    still_ours();
    ended = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hs_walk_end();
    hs_report_write();
    if (hs_opts.print)
        vigil_tool_message(&hs_tool, "%s, period %u us (%u us after %llu samples): %llu samples of %u us (%llu "
                           "taken) in %llu thread%s, %u stacks (hotspot.json)",
                           method_name(hs.method), hs.period_us, hs.late_period_us, (unsigned long long)hs.late_after,
                           (unsigned long long)hs.samples, hs.period_us, (unsigned long long)hs.signals,
                           (unsigned long long)hs.threads, hs.threads == 1 ? "" : "s", hs_table_size(&hs.table));
}
