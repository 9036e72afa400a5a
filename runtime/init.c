/* Start-up: runs once, from the high-priority constructor or lazily from the first entry
 * point that needs it (a module registering, a dispatch check firing). Only libc calls that
 * work as soon as libc.so has been initialized are used. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);

/* See internal.h. */
struct vigil_options __vigil_opts;
struct vigil_schedule __vigil_sched;
struct vigil_process __vigil_proc;

/* 0 = not started, 1 = running, 2 = done. Written by __vigil_ensure_init only (CAS). */
static int init_state;
/* Set on the thread running start-up, so that a re-entrant call returns instead of waiting
 * for itself. */
static __thread int init_on_this_thread;

void __vigil_message(const char *fmt, ...)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "vigil: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n += m < 0 ? 0 : m >= (int)(sizeof buf - (size_t)n - 1) ? (int)(sizeof buf - (size_t)n - 2) : m;
    buf[n++] = '\n';
    int saved = errno;
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
    errno = saved;
}

uint64_t __vigil_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t __vigil_unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t vigil_now_ns(void)
{
    return __vigil_mono_ns() - __vigil_proc.start_mono_ns;
}

int __vigil_is_ready(void)
{
    return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2;
}

/* dst = the parts one after the other, cut to size. Not snprintf: start-up stays off libc's
 * printf code, which would be more of its pages resident in every process. */
static void concat(char *dst, size_t size, const char *const *parts, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        for (const char *s = parts[i]; *s && len + 1 < size; s++)
            dst[len++] = *s;
    dst[len] = '\0';
}

static void find_executable(void)
{
    struct vigil_process *p = &__vigil_proc;
    ssize_t n = readlink("/proc/self/exe", p->exe, sizeof p->exe - 1);
    if (n <= 0)
        n = 0;
    p->exe[n] = '\0';
    if (n == 0 && p->argc > 0 && p->argv[0])
        concat(p->exe, sizeof p->exe, (const char *const *)p->argv, 1);
    if (!p->exe[0])
        strcpy(p->exe, "unknown");
    const char *slash = strrchr(p->exe, '/');
    p->name = slash && slash[1] ? slash + 1 : p->exe;
}

/* The report directory as an absolute path, so that a chdir() in the program does not move it. */
static void resolve_out_dir(void)
{
    struct vigil_process *p = &__vigil_proc;
    const char *out = __vigil_opts.out[0] ? __vigil_opts.out : ".";
    char cwd[2048];
    if (out[0] == '/' || !getcwd(cwd, sizeof cwd))
        concat(p->out_dir, sizeof p->out_dir, &out, 1);
    else
        concat(p->out_dir, sizeof p->out_dir, (const char *const[]){strcmp(cwd, "/") ? cwd : "", "/", out}, 3);
}

/* Copy argv (pointers and strings) before main can permute or overwrite it. */
static void capture_args(int argc, char **argv)
{
    if (argc <= 0 || !argv || __vigil_proc.argv)
        return;
    size_t bytes = (size_t)(argc + 1) * sizeof(char *);
    for (int i = 0; i < argc; i++)
        bytes += (argv[i] ? strlen(argv[i]) : 0) + 1;
    char **copy = __libc_malloc(bytes);   /* not an event: the runtime's own memory */
    if (!copy)
        return;
    char *s = (char *)(copy + argc + 1);
    for (int i = 0; i < argc; i++) {
        size_t len = argv[i] ? strlen(argv[i]) : 0;
        memcpy(s, argv[i] ? argv[i] : "", len + 1);
        copy[i] = s;
        s += len + 1;
    }
    copy[argc] = NULL;
    __vigil_proc.argc = argc;
    __vigil_proc.argv = copy;
}

/* Without the constructor's arguments (start-up reached first from a library constructor):
 * the kernel's copy of the command line. */
static void read_cmdline(void)
{
    static char buf[8192];
    static char *ptrs[256];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    int argc = 0;
    for (char *s = buf; s < buf + n && argc < 255; s += strlen(s) + 1)
        ptrs[argc++] = s;
    ptrs[argc] = NULL;
    capture_args(argc, ptrs);
}

static void init_once(void)
{
    struct vigil_process *p = &__vigil_proc;
    p->start_mono_ns = __vigil_mono_ns();
    p->start_unix_ns = __vigil_unix_ns();
    p->pid = getpid();
    p->ppid = getppid();

    __vigil_read_options(&__vigil_opts);
    if (!p->argv)
        read_cmdline();
    find_executable();
    resolve_out_dir();
    __vigil_resolve_real_functions();
    __vigil_process_start();
    __vigil_signals_install();
    __vigil_text_ranges_init();
    __vigil_tools_start();
    /* ninstr=0: the tools have now said what burst length they need (the schedule's default if
     * none did). No check fires before this: the program's code runs after init. */
    if (!__vigil_opts.ninstr)
        __vigil_opts.ninstr = __vigil_tools_burst_length();
    /* Nothing would see a burst: no tool, and neither a run report nor a summary (a run with
     * neither VIGIL_OPTIONS nor VIGIL_PLAN). The instrumented copies would run for nothing, and
     * the pages that hold them be read in for nothing: the checks run as in mode=off. */
    if (!__vigil_tools_enabled() && !__vigil_opts.report && !__vigil_opts.summary)
        snprintf(__vigil_opts.mode, sizeof __vigil_opts.mode, "off");
    /* Tools run, but none of them uses what a burst gives (tool.h, VIGIL_BURSTS_UNUSED: a
     * profiler that samples the PC): the same, unless the user asked for a mode. run.txt then
     * says "option mode off", and every site has its executions and no burst. */
    else if (__vigil_tools_enabled() && !__vigil_tools_need_bursts() && !__vigil_option_given("mode"))
        snprintf(__vigil_opts.mode, sizeof __vigil_opts.mode, "off");
    vigil_schedule_init(&__vigil_sched, &__vigil_opts);
    __vigil_opts.ninstr = __vigil_sched.ninstr;   /* the run report names the length in force */
    if (__vigil_opts.verbosity >= 1)
        __vigil_message("started %s (pid %d), mode=%s, reports in %s", p->exe, (int)p->pid,
                        __vigil_opts.mode, p->out_dir);
}

void __vigil_ensure_init(void)
{
    int state = __atomic_load_n(&init_state, __ATOMIC_ACQUIRE);
    if (likely(state == 2) || init_on_this_thread)
        return;
    int expected = 0;
    if (__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        init_on_this_thread = 1;
        init_once();
        init_on_this_thread = 0;
        __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
        return;
    }
    while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)   /* another thread starts up */
        sched_yield();
}

/* glibc passes (argc, argv, envp) to ELF constructors, in executables and shared objects. The
 * priority runs this before the program's own constructors, so that our exit handler is
 * registered early and runs after theirs. */
__attribute__((constructor(101))) static void vigil_constructor(int argc, char **argv, char **envp)
{
    (void)envp;
    capture_args(argc, argv);
    __vigil_ensure_init();
}
