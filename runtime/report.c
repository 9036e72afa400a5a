/* The run report writer (format: docs/formats.md, "Run report"; reader: common/runreport.c).
 * It may run from an exit handler, _exit, or a fatal-signal handler, so it avoids stdio and
 * malloc: run.txt is formatted into a static buffer and written with write(2); directories
 * are created, cleaned and renamed with plain system calls. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runreport.h"

/* One writer at a time: owner's thread id, 0 when free. Taken by __vigil_write_report. */
static pid_t report_owner;
/* 0 until the final report (exit or signal) is claimed, then 1: written once per process.
 * Reset in a fork child. */
static int final_claimed;
/* 1 once the final report is written (or given up): set by its writer; reset in a fork child. */
static int final_done;
/* 1 once this process has flushed a report: only then may the final report replace an
 * existing <prog>.<pid> directory. Written by the report owner; reset in a fork child. */
static int flushed_here;
/* The frame of __vigil_write_report while it writes a report, or the interrupted code's stack
 * during a report a tool's signal function asked for (vigil_report_frame): written by the
 * report owner only, NULL otherwise. */
static void *final_report_frame;
/* Why the final report leaves the tools out (__vigil_report_without_tools), or NULL. Written
 * by a fatal signal's handler before it writes the report. */
static const char *tools_left_out;
/* The temporary report directory while a report is being written, else "" (for
 * vigil_report_open). Written by the report owner only. */
static char report_tmp_dir[4200];

static pid_t my_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* ---- buffered writer over a file descriptor (static buffer: guarded by report_owner) ---- */
struct writer {
    int fd;
    int failed;       /* errno of the first failed write, 0 if none */
    size_t used;
    char buf[16384];
};
static struct writer run_file;

static void flush_writer(struct writer *w)
{
    size_t done = 0;
    while (done < w->used && !w->failed) {
        ssize_t n = write(w->fd, w->buf + done, w->used - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            w->failed = n < 0 ? errno : EIO;
        else
            done += (size_t)n;
    }
    w->used = 0;
}

static void put(struct writer *w, const char *s, size_t n)
{
    while (n) {
        if (w->used == sizeof w->buf)
            flush_writer(w);
        size_t room = sizeof w->buf - w->used, k = n < room ? n : room;
        memcpy(w->buf + w->used, s, k);
        w->used += k, s += k, n -= k;
    }
}

static void putf(struct writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct writer *w, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(w, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* An unsigned decimal followed by `sep`. */
static void put_u64(struct writer *w, uint64_t v, char sep)
{
    char digits[24];
    size_t k = sizeof digits;
    digits[--k] = sep;
    do
        digits[--k] = (char)('0' + v % 10);
    while (v /= 10);
    put(w, digits + k, sizeof digits - k);
}

/* A string field, escaped (vigil_escape) piece by piece so that any length fits. */
static void put_escaped(struct writer *w, const char *s)
{
    char piece[1025], escaped[3 * 1024 + 1];
    if (!*s) {
        vigil_escape(s, escaped, sizeof escaped);
        put(w, escaped, strlen(escaped));
        return;
    }
    while (*s) {
        size_t n = strnlen(s, sizeof piece - 1);
        memcpy(piece, s, n);
        piece[n] = '\0';
        size_t len = vigil_escape(piece, escaped, sizeof escaped);
        put(w, escaped, len);
        s += n;
    }
}

/* ---- directories ---- */

static int mkdir_p(const char *path)
{
    char buf[4096];
    size_t len = strlen(path);
    if (len >= sizeof buf)
        return errno = ENAMETOOLONG, -1;
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return errno = ENOTDIR, -1;
    return 0;
}

/* Remove a directory of plain files (a report directory); no opendir: it allocates. */
static void remove_flat_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096];
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            /* struct linux_dirent64: ino 8, off 8, reclen 2, type 1, name */
            unsigned short reclen;
            memcpy(&reclen, buf + off + 16, sizeof reclen);
            const char *name = buf + off + 19;
            if (strcmp(name, ".") != 0 && strcmp(name, ".."))
                unlinkat(fd, name, 0);
            off += reclen;
        }
    }
    close(fd);
    rmdir(path);
}

/* ---- the crash line ---- */

static int parse_hex_field(const char **s, uintptr_t *out)
{
    uintptr_t v = 0;
    int digits = 0;
    for (;; (*s)++, digits++) {
        char c = **s;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            break;
        v = v << 4 | (uintptr_t)d;
    }
    *out = v;
    return digits ? 0 : -1;
}

/* Past n space-separated fields and the spaces after them. */
static const char *skip_fields(const char *s, int n)
{
    for (int field = 0; field < n; field++) {
        while (*s == ' ')
            s++;
        while (*s && *s != ' ')
            s++;
    }
    while (*s == ' ')
        s++;
    return s;
}

/* The /proc/self/maps line covering pc: "start-end perms offset dev inode path". Read with
 * plain read(2) and parsed in place: this runs in a fault handler (no stdio, no malloc, no
 * loader lock, unlike dladdr). Returns 0 with the file offset and path. */
static int find_mapping(uintptr_t pc, uint64_t *file_offset, char *path, size_t pathlen)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[8192], line[4352];
    size_t used = 0;
    int found = -1;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n && found != 0; i++) {
            if (buf[i] != '\n') {
                if (used < sizeof line - 1)
                    line[used++] = buf[i];
                continue;
            }
            line[used] = '\0';
            used = 0;
            const char *s = line;
            uintptr_t start, end, offset;
            if (parse_hex_field(&s, &start) || *s++ != '-' || parse_hex_field(&s, &end))
                continue;
            if (pc < start || pc >= end)
                continue;
            s = skip_fields(s, 1);                 /* perms */
            if (parse_hex_field(&s, &offset))
                continue;
            s = skip_fields(s, 2);                 /* dev, inode */
            *file_offset = pc - start + offset;
            snprintf(path, pathlen, "%s", s);
            found = 0;
        }
        if (found == 0)
            break;
    }
    close(fd);
    return found;
}

static void write_crash_line(struct writer *w)
{
    if (!__vigil_crash.signo)
        return;
    uint64_t offset = 0;
    char path[4096] = "";
    if (find_mapping(__vigil_crash.pc, &offset, path, sizeof path) != 0)
        offset = 0;
    putf(w, "crash %d 0x%llx 0x%llx ", __vigil_crash.signo,
         (unsigned long long)__vigil_crash.pc, (unsigned long long)offset);
    put_escaped(w, path);
    put(w, "\n", 1);
}

/* ---- run.txt ---- */

static void write_run_txt(struct writer *w, enum vigil_report_end how, int status)
{
    const struct vigil_process *p = &__vigil_proc;
    putf(w, "vigil-run %d\n", VIGIL_RUN_FORMAT_VERSION);
    put(w, "program ", 8);
    put_escaped(w, p->exe);
    put(w, "\n", 1);
    for (int i = 0; i < p->argc; i++) {
        putf(w, "arg %d ", i);
        put_escaped(w, p->argv[i]);
        put(w, "\n", 1);
    }
    putf(w, "pid %lld\nppid %lld\n", (long long)p->pid, (long long)p->ppid);
    if (how == VIGIL_END_SIGNAL)
        putf(w, "signal %d\n", status);
    else if (how == VIGIL_END_FLUSH)
        put(w, "running\n", 8);
    else
        putf(w, "exit %d\n", status & 0xff);
    putf(w, "start_unix_ns %llu\nduration_ns %llu\n", (unsigned long long)p->start_unix_ns,
         (unsigned long long)(__vigil_mono_ns() - p->start_mono_ns));
    char value[VIGIL_OPT_STRING_MAX];
    for (size_t i = 0; i < vigil_option_count; i++) {
        vigil_options_format(&__vigil_opts, i, value, sizeof value);
        put(w, "option ", 7);
        put_escaped(w, vigil_option_table[i].name);
        put(w, " ", 1);
        put_escaped(w, value);
        put(w, "\n", 1);
    }
    char tools[512];
    __vigil_tools_names(tools, sizeof tools);
    put(w, "tools ", 6);
    put_escaped(w, tools);
    put(w, "\n", 1);

    uint32_t index = 0;
    for (struct vigil_module_node *n = __vigil_modules(); n;
         n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE), index++) {
        putf(w, "module %u %016llx %u %u ", index, (unsigned long long)n->tu_hash, n->nsites,
             n->base_id);
        put_escaped(w, n->path);
        put(w, "\n", 1);
    }
    index = 0;
    int others = __vigil_counters_others_begin();
    for (struct vigil_module_node *n = __vigil_modules(); n;
         n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE), index++) {
        if (RELAXED_LOAD(&n->unloaded))
            continue;
        struct __vigil_module *m = n->m;
        /* Only dispatch sites count (common/abi.h dispatch_sites: the kind without reading the
         * site table). Format a level's rate once (printf of a double costs more than the rest;
         * a few levels exist, and the stack may be a small signal stack: a 4-entry cache). */
        struct { int level; char text[28]; } rates[4] = {{-1, ""}, {-1, ""}, {-1, ""}, {-1, ""}};
        /* The reporting thread's countdowns, then the other live threads' (those that ended
         * were folded in at their exit). */
        const uint32_t *counters = __vigil_counters_here(m);
        for (uint32_t d = 0; d < m->ndispatch; d++) {
            const struct __vigil_site_state *st = &m->state[d];
            uint64_t execs = vigil_schedule_execs(st, RELAXED_LOAD(&counters[m->ndispatch + d]),
                                                  RELAXED_LOAD(&counters[d]));
            if (others)
                execs += __vigil_counters_pending_others(m, d);
            if (execs == 0)
                continue;
            uint32_t i = m->dispatch_sites[d] & VIGIL_DISPATCH_SITE;
            enum vigil_site_kind kind_of = m->dispatch_sites[d] & VIGIL_DISPATCH_BACKEDGE ? VIGIL_SITE_BACKEDGE
                                                                                           : VIGIL_SITE_ENTRY;
            uint8_t level = RELAXED_LOAD(&st->level);
            const char *rate = NULL;
            for (int k = 0; k < 4 && !rate; k++)
                if (rates[k].level == level)
                    rate = rates[k].text;
            if (!rate) {
                int k = level % 4;
                rates[k].level = level;
                snprintf(rates[k].text, sizeof rates[k].text, "%.6g", vigil_schedule_rate(&__vigil_sched, level));
                rate = rates[k].text;
            }
            put(w, "site ", 5);
            put_u64(w, index, ' ');
            put_u64(w, i, ' ');
            const char *kind = vigil_site_kind_name(kind_of);
            put(w, kind, strlen(kind));
            put(w, " ", 1);
            put_u64(w, execs, ' ');
            put_u64(w, RELAXED_LOAD(&st->bursts), ' ');
            put(w, rate, strlen(rate));
            put(w, "\n", 1);
        }
    }
    if (others)
        __vigil_counters_others_end();
    write_crash_line(w);
    put(w, "end\n", 4);
}

static void summary_line(const char *dir, enum vigil_report_end how, int status, int written)
{
    uint64_t sites = 0, bursts = 0;
    for (struct vigil_module_node *n = __vigil_modules(); n; n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE)) {
        if (RELAXED_LOAD(&n->unloaded))
            continue;
        for (uint32_t i = 0; i < n->m->ndispatch; i++) {
            const struct __vigil_site_state *st = &n->m->state[i];
            bursts += RELAXED_LOAD(&st->bursts);
            sites += RELAXED_LOAD(&st->level) != 0;
        }
    }
    uint64_t ns = __vigil_mono_ns() - __vigil_proc.start_mono_ns;
    __vigil_message("%s (pid %d): %s %d after %llu.%03llu s; %llu dispatch checks fired, "
                    "%llu bursts; report %s", __vigil_proc.name, (int)__vigil_proc.pid,
                    how == VIGIL_END_SIGNAL ? "signal" : "exit", how == VIGIL_END_SIGNAL ? status : status & 0xff,
                    (unsigned long long)(ns / 1000000000u),
                    (unsigned long long)(ns / 1000000u % 1000u), (unsigned long long)sites,
                    (unsigned long long)bursts, written ? dir : "not written");
}

int __vigil_report_in_progress(void)
{
    return __atomic_load_n(&report_owner, __ATOMIC_ACQUIRE) == my_tid();
}

void __vigil_report_without_tools(const char *why)
{
    tools_left_out = why;
}

static void finish_tools(void)
{
    if (!tools_left_out) {
        __vigil_tools_fini();
        if (__vigil_opts.findings_summary)
            __vigil_tools_summary_line();
        return;
    }
    char names[256];
    __vigil_tools_names(names, sizeof names);
    if (names[0])
        __vigil_message("no report from %s: %s", names, tools_left_out);
}

static int write_report_locked(enum vigil_report_end how, int status)
{
    const struct vigil_process *p = &__vigil_proc;
    char final_dir[4200];
    int final = how != VIGIL_END_FLUSH;
    snprintf(final_dir, sizeof final_dir, "%s/%s.%d", p->out_dir, p->name, (int)p->pid);
    if (!__vigil_opts.report) {
        if (final)
            finish_tools();
        if (final && __vigil_opts.summary)
            summary_line(final_dir, how, status, 0);
        return 0;
    }
    snprintf(report_tmp_dir, sizeof report_tmp_dir, "%s/.%s.%d.tmp", p->out_dir, p->name,
             (int)p->pid);
    const char *step = "";
    int err = 0;
    if (mkdir_p(p->out_dir) != 0) {
        err = errno, step = "";
    } else {
        remove_flat_dir(report_tmp_dir);   /* a leftover of a crash in the report, or a flush */
        if (mkdir(report_tmp_dir, 0777) != 0) {
            err = errno, step = "";
        } else {
            char path[4300];
            snprintf(path, sizeof path, "%s/%s", report_tmp_dir, VIGIL_RUN_FILE);
            struct writer *w = &run_file;
            w->used = 0;
            w->failed = 0;
            w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
            if (w->fd < 0) {
                err = errno, step = " (run.txt)";
            } else {
                write_run_txt(w, how, status);
                flush_writer(w);
                if (close(w->fd) != 0 && !w->failed)
                    w->failed = errno;
                if (w->failed)
                    err = w->failed, step = " (run.txt)";
            }
        }
    }
    if (err)
        report_tmp_dir[0] = '\0';   /* vigil_report_open: no directory, nothing more to say */
    if (final)
        finish_tools();   /* tools write next to run.txt through vigil_report_open */
    else if (!err)
        __vigil_tools_flush();   /* the same while the program runs */
    int written = 0;
    if (!err) {
        int rc = rename(report_tmp_dir, final_dir);
        if (rc != 0 && (errno == EEXIST || errno == ENOTEMPTY) && flushed_here) {
            remove_flat_dir(final_dir);   /* our own earlier flush */
            rc = rename(report_tmp_dir, final_dir);
        }
        /* Someone else's report under our name (a recycled pid): keep it, take <dir>.<n>. */
        size_t base_len = strlen(final_dir);
        for (int n = 1; rc != 0 && (errno == EEXIST || errno == ENOTEMPTY) && n < 100; n++) {
            snprintf(final_dir + base_len, sizeof final_dir - base_len, ".%d", n);
            rc = rename(report_tmp_dir, final_dir);
        }
        if (rc != 0)
            err = errno, step = " (rename)";
        else if (!final)
            flushed_here = 1;
        written = !err;
    }
    if (err) {
        __vigil_message("cannot write report to %s%s: %s", final_dir, step, strerror(err));
        snprintf(report_tmp_dir, sizeof report_tmp_dir, "%s/.%s.%d.tmp", p->out_dir, p->name,
                 (int)p->pid);
        remove_flat_dir(report_tmp_dir);
    }
    report_tmp_dir[0] = '\0';
    if (final && __vigil_opts.summary)
        summary_line(final_dir, how, status, written);
    return err ? -1 : 0;
}

/* A thread that ends the process (exit, _exit) while another writes the final report: in the
 * plain program the first exit would have ended this thread at once, so it must not end the
 * process under the writer (with its own status, and no report: pigz's worker calling _exit
 * after the SIGINT handler's _exit). It waits for the report, then a moment more for the
 * writer's own exit; bounded, so that a writer stuck in a tool cannot hang the program. */
static void await_final_report(void)
{
    if (__vigil_report_in_progress())
        return;
    struct timespec tick = { 0, 1000000 };
    for (int ms = 0; ms < 30000 && !__atomic_load_n(&final_done, __ATOMIC_ACQUIRE); ms++)
        nanosleep(&tick, NULL);
    for (int ms = 0; ms < 1000; ms++)   /* the writer's exit_group normally ends us here */
        nanosleep(&tick, NULL);
}

int __vigil_write_report(enum vigil_report_end how, int status)
{
    __vigil_ensure_init();
    if (how != VIGIL_END_FLUSH &&
        __atomic_exchange_n(&final_claimed, 1, __ATOMIC_ACQ_REL) != 0) {
        if (how == VIGIL_END_EXIT)
            await_final_report();
        return 0;   /* the final report is written (or being written) already */
    }
    pid_t self = my_tid(), free_owner = 0;
    if (__atomic_load_n(&report_owner, __ATOMIC_ACQUIRE) == self)
        return -1;   /* a signal interrupted this thread's own report: give up */
    while (!__atomic_compare_exchange_n(&report_owner, &free_owner, self, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
        free_owner = 0;
        syscall(SYS_sched_yield);
    }
    /* A report while running, once the final one has begun: it would replace it. */
    if (how == VIGIL_END_FLUSH && __atomic_load_n(&final_claimed, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&report_owner, 0, __ATOMIC_RELEASE);
        return 0;
    }
    struct vigil_thread *th = &__vigil_thread;
    int saved_guard = th->in_runtime, saved_errno = errno;
    th->in_runtime = 1;   /* the report's own work (and the tools' fini) raises no events */
    if (how != VIGIL_END_FLUSH)
        final_report_frame = th->live_stack_from ? th->live_stack_from : __builtin_frame_address(0);
    else   /* the interrupted code's stack when a tool's signal asked, else as the final report */
        final_report_frame = __vigil_signal_interrupted_stack() ?: __builtin_frame_address(0);
    int r = write_report_locked(how, status);
    final_report_frame = NULL;
    if (how != VIGIL_END_FLUSH)
        __atomic_store_n(&final_done, 1, __ATOMIC_RELEASE);
    th->in_runtime = saved_guard;
    errno = saved_errno;
    __atomic_store_n(&report_owner, 0, __ATOMIC_RELEASE);
    return r;
}

void __vigil_report_after_fork(void)
{
    /* The child is a new process: its own report, whoever held the writer in the parent. */
    __atomic_store_n(&final_claimed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&final_done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&report_owner, 0, __ATOMIC_RELAXED);
    report_tmp_dir[0] = '\0';
    flushed_here = 0;
}

void *vigil_report_frame(void)
{
    return __vigil_report_in_progress() ? final_report_frame : NULL;
}

FILE *vigil_report_open(const struct vigil_tool *tool, const char *filename)
{
    if (__vigil_report_in_progress() && !report_tmp_dir[0])
        return NULL;   /* the report itself could not be written: already said so */
    if (!report_tmp_dir[0] || !__vigil_report_in_progress() ||
        !filename || !filename[0] || strchr(filename, '/') || strcmp(filename, VIGIL_RUN_FILE) == 0 ||
        filename[0] == '.') {
        if (tool)
            vigil_tool_message(tool, "cannot open report file \"%s\" here (only from fini, a plain "
                               "file name other than run.txt)", filename ? filename : "(null)");
        return NULL;
    }
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", report_tmp_dir, filename);
    FILE *f = fopen(path, "w");
    if (!f && tool)
        vigil_tool_message(tool, "cannot write %s: %s", path, strerror(errno));
    return f;
}
