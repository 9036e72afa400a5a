/* vigil-cc: a drop-in cc that instruments C sources for vigil.
 * main() runs a list of small named stages over one job; the per-source work (front end,
 * transform, optimize, back end) and the link are in pipeline.c, the command line
 * classification in args.c, and every environment variable in settings.inc. */
#include "pipeline.h"
#include "cache.h"
#include "cctool.h"
#include "transform.h"

#include "ccconfig.h"

#include <dlfcn.h>
#include <errno.h>
#include <llvm/Config/llvm-config.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "version.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* One release number for the whole project (common/version.h). */
#define VIGIL_CC_VERSION VIGIL_VERSION
/* The Makefile defines the build id (a hash of vigil-cc's sources) and rebuilds this file when
 * it changes. */
#ifndef VIGIL_CC_BUILD_ID
#define VIGIL_CC_BUILD_ID "unknown"
#endif
const char vcc_version[] = VIGIL_CC_VERSION, vcc_build_id[] = VIGIL_CC_BUILD_ID;

enum setting_category { VCC_SETTING_USER, VCC_SETTING_DEV };

struct setting_info {
    const char *name, *def, *meaning;
    enum setting_category category;
};
static const struct setting_info setting_table[] = {
#define VIGIL_CC_SETTING(field, name, category, def, meaning) {name, def, meaning, VCC_SETTING_##category},
#include "settings.inc"
#undef VIGIL_CC_SETTING
};

/* ---- small helpers ---- */

void vcc_cmd_push(struct vcc_cmd *c, const char *arg)
{
    if (c->n + 2 > c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->v = realloc(c->v, (size_t)c->cap * sizeof *c->v);
        if (!c->v) { perror("vigil-cc"); exit(1); }
    }
    c->v[c->n++] = (char *)arg;
    c->v[c->n] = NULL;
}

void vcc_cmd_free(struct vcc_cmd *c)
{
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

int vcc_setting_on(const char *value)
{
    return value && (!strcmp(value, "1") || !strcasecmp(value, "yes") || !strcasecmp(value, "on") ||
                     !strcasecmp(value, "true"));
}

/* A setting that names one of a few choices (case-insensitive); anything else gets a warning
 * and the first choice, the default. */
struct setting_word {
    const char *word;
    int value;
};

static int setting_word(const char *name, const char *value, const struct setting_word *words, const char *expected)
{
    for (const struct setting_word *w = words; w->word; w++)
        if (value && !strcasecmp(value, w->word))
            return w->value;
    fprintf(stderr, "vigil-cc: warning: %s=%s is not %s; using %s\n", name, value ? value : "", expected,
            words[0].word);
    return words[0].value;
}

/* ---- temporary files: removed at exit and on the usual termination signals ---- */

static char **temps;
static int ntemps, temps_cap, keep_temps_flag;

static void remove_temps(void)
{
    if (keep_temps_flag) return;
    for (int i = 0; i < ntemps; i++) unlink(temps[i]);
    ntemps = 0;
}

static void on_signal(int sig)
{
    remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

char *vcc_temp_file(const struct vcc_job *job, const char *suffix)
{
    const char *dir = job->settings.tmpdir && *job->settings.tmpdir ? job->settings.tmpdir : "/tmp";
    size_t len = strlen(dir) + strlen(suffix) + 32;
    char *path = malloc(len);
    if (!path) { perror("vigil-cc"); exit(1); }
    snprintf(path, len, "%s/vigil-cc-XXXXXX%s", dir, suffix);
    /* Block the signals that remove temps while the list grows. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    int fd = mkstemps(path, (int)strlen(suffix));
    if (fd >= 0) {
        close(fd);
        if (ntemps == temps_cap) {
            temps_cap = temps_cap ? temps_cap * 2 : 16;
            temps = realloc(temps, (size_t)temps_cap * sizeof *temps);
            if (!temps) { perror("vigil-cc"); exit(1); }
        }
        temps[ntemps++] = strdup(path); /* the caller may free its copy */
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        fprintf(stderr, "vigil-cc: cannot create a temporary file in %s: %s\n", dir, strerror(errno));
        free(path);
        return NULL;
    }
    if (job->keep_temps) fprintf(stderr, "vigil-cc: keeping %s\n", path);
    return path;
}

/* ---- running commands ---- */

static void print_command(char **argv)
{
    fputs("vigil-cc: run:", stderr);
    for (int i = 0; argv[i]; i++) {
        const char *a = argv[i];
        int plain = *a != 0;
        for (const char *p = a; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+./,:@%", *p))
                plain = 0;
        if (plain) {
            fprintf(stderr, " %s", a);
        } else {
            fputs(" '", stderr);
            for (const char *p = a; *p; p++) {
                if (*p == '\'') fputs("'\\''", stderr);
                else fputc(*p, stderr);
            }
            fputc('\'', stderr);
        }
    }
    fputc('\n', stderr);
}

int vcc_run(const struct vcc_job *job, char **argv)
{
    return vcc_run_redirected(job, argv, -1, -1);
}

int vcc_run_redirected(const struct vcc_job *job, char **argv, int out_fd, int err_fd)
{
    if (job->verbose) print_command(argv);
    pid_t pid;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (out_fd >= 0) posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
    if (err_fd >= 0) posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
    int err = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err) {
        fprintf(stderr, "vigil-cc: cannot run %s: %s\n", argv[0], strerror(err));
        return 127;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "vigil-cc: waiting for %s: %s\n", argv[0], strerror(errno));
            return 1;
        }
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "vigil-cc: %s killed by signal %d\n", argv[0], WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return 1;
}

static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char buf[PATH_MAX];
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len == 0) snprintf(buf, sizeof buf, "./%s", name);
        else snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, name);
        if (access(buf, X_OK) == 0) return 1;
        if (!colon) return 0;
        p = colon + 1;
    }
}

/* ---- stages ---- */

enum { CONTINUE = -1 };

static int stage_settings(struct vcc_job *job)
{
    struct vcc_settings *s = &job->settings;
#define VIGIL_CC_SETTING(field, name, category, def, meaning) s->field = getenv(name) ? getenv(name) : def;
#include "settings.inc"
#undef VIGIL_CC_SETTING
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "VIGIL_CC_", 9) != 0) continue;
        size_t len = strcspn(*e, "=");
        int known = 0;
        for (size_t i = 0; i < sizeof setting_table / sizeof setting_table[0]; i++)
            if (strlen(setting_table[i].name) == len && !strncmp(setting_table[i].name, *e, len))
                known = 1;
        /* a tool's setting: only the transforming part knows them (it is loaded for this) */
        const struct vcc_transform_part *part = known ? NULL : vcc_transform(job);
        if (!known && part && !part->is_tool_setting(*e, len))
            fprintf(stderr, "vigil-cc: warning: unknown setting %.*s (see vigil-cc --vigil-help)\n",
                    (int)len, *e);
    }
    job->verbose = vcc_setting_on(s->verbose);
    job->keep_temps = keep_temps_flag = vcc_setting_on(s->keep_temps);
    job->debug = vcc_setting_on(s->debug);
    job->verify = vcc_setting_on(s->verify);
    static const struct setting_word placements[] = {
        {"post", VCC_PLACE_POST}, {"early", VCC_PLACE_EARLY}, {"late", VCC_PLACE_LATE}, {NULL, 0}};
    job->placement = setting_word("VIGIL_CC_PLACEMENT", s->placement, placements, "post, early or late");
    static const struct setting_word pred_counters[] = {
        {"0", VIGIL_PRED_COUNTERS_NONE}, {"1", VIGIL_PRED_COUNTERS_INSTR}, {"yes", VIGIL_PRED_COUNTERS_INSTR},
        {"on", VIGIL_PRED_COUNTERS_INSTR}, {"true", VIGIL_PRED_COUNTERS_INSTR}, {"2", VIGIL_PRED_COUNTERS_BOTH},
        {"both", VIGIL_PRED_COUNTERS_BOTH}, {NULL, 0}};
    job->pred_counters = setting_word("VIGIL_CC_PRED_COUNTERS", s->pred_counters, pred_counters, "0, 1 or 2");
    static const struct setting_word frame_pointers[] = {
        {"1", VCC_FRAME_POINTERS_ALL}, {"yes", VCC_FRAME_POINTERS_ALL}, {"on", VCC_FRAME_POINTERS_ALL},
        {"true", VCC_FRAME_POINTERS_ALL}, {"nonleaf", VCC_FRAME_POINTERS_NONLEAF}, {"0", VCC_FRAME_POINTERS_OFF},
        {"no", VCC_FRAME_POINTERS_OFF}, {"off", VCC_FRAME_POINTERS_OFF}, {"false", VCC_FRAME_POINTERS_OFF}, {NULL, 0}};
    job->frame_pointers = setting_word("VIGIL_CC_FRAME_POINTERS", s->frame_pointers, frame_pointers, "1, nonleaf or 0");
    static const struct setting_word thread_counters[] = {
        {"auto", VIGIL_THREAD_COUNTERS_AUTO}, {"1", VIGIL_THREAD_COUNTERS_ALL}, {"yes", VIGIL_THREAD_COUNTERS_ALL},
        {"on", VIGIL_THREAD_COUNTERS_ALL}, {"true", VIGIL_THREAD_COUNTERS_ALL}, {"0", VIGIL_THREAD_COUNTERS_NONE},
        {"no", VIGIL_THREAD_COUNTERS_NONE}, {"off", VIGIL_THREAD_COUNTERS_NONE}, {"false", VIGIL_THREAD_COUNTERS_NONE},
        {NULL, 0}};
    job->thread_counters = setting_word("VIGIL_CC_THREAD_COUNTERS", s->thread_counters, thread_counters, "auto, 1 or 0");
    return CONTINUE;
}

/* VIGIL_CC_CONFIG: parsed once per command; a bad line or an unknown section fails it with
 * FILE:LINE and what was expected (a build must not silently instrument what the file says to
 * leave alone, or the reverse). */
static int stage_config(struct vcc_job *job)
{
    const char *path = job->settings.config;
    if (!path || !*path)
        return CONTINUE;
    static struct vigil_ccconfig config;
    char err[512];
    if (vigil_ccconfig_load(path, &config, &job->config_text, &job->config_len, err, sizeof err) != 0) {
        fprintf(stderr, "vigil-cc: error: VIGIL_CC_CONFIG: %s\n", err);
        return 1;
    }
    for (size_t i = 0; i < config.nsections; i++) {
        const char *name = config.sections[i].name;
        if (!strcmp(name, "skip") || !strcmp(name, "tested"))
            continue;
        const struct vcc_transform_part *part = vcc_transform(job);
        if (!part) {
            vigil_ccconfig_free(&config);
            return 1;
        }
        if (part->is_tool_section(name))
            continue;
        char tools[512] = "";
        size_t n, used = 0;
        const struct vigil_cc_tool *const *all = part->all_tools(&n);
        for (size_t t = 0; t < n; t++)
            for (const char *const *s = all[t]->config_sections; s && *s && used < sizeof tools; s++)
                used += (size_t)snprintf(tools + used, sizeof tools - used, ", [%s.%s]", all[t]->name, *s);
        fprintf(stderr, "vigil-cc: error: VIGIL_CC_CONFIG: %s:%u: expected a section [skip], [tested] or a tool's (%s); got [%s]\n",
                path, config.sections[i].line, used ? tools + 2 : "none built in", name);
        vigil_ccconfig_free(&config);
        return 1;
    }
    job->config = &config;
    return CONTINUE;
}

static int stage_locate_clang(struct vcc_job *job)
{
    if (*job->settings.clang) {
        job->clang = job->settings.clang;
    } else {
        static const char versioned[] = "clang-" STR(LLVM_VERSION_MAJOR);
        job->clang = on_path(versioned) ? versioned : "clang";
    }
    return CONTINUE;
}

static int stage_classify(struct vcc_job *job)
{
    int argc;
    char **argv = vcc_expand_response_files(job->orig_argc, job->orig_argv, &argc);
    char err[256];
    if (vcc_classify(argc, argv, &job->args, err, sizeof err) < 0) {
        /* clang words the error in its own terms */
        job->args.action = VCC_PASS_THROUGH;
        job->args.pass_reason = err[0] ? strdup(err) : "malformed command line";
    }
    if (vcc_setting_on(job->settings.disable)) {
        job->args.action = VCC_PASS_THROUGH;
        job->args.pass_reason = "VIGIL_CC_DISABLE";
    }
    return CONTINUE;
}

/* `--version`: clang's output with vigil-cc's own line after its first, which stays first and
 * unchanged (configure scripts and build systems parse it). Returns clang's exit status; the
 * line is added only when clang succeeds. */
static int print_version(char **argv)
{
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "vigil-cc: pipe: %s\n", strerror(errno));
        return 1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (err) {
        close(fds[0]);
        fprintf(stderr, "vigil-cc: cannot run %s: %s\n", argv[0], strerror(err));
        return 127;
    }
    size_t len = 0, cap = 4096;
    char *out = malloc(cap);
    while (out) {
        if (len == cap) {
            char *bigger = realloc(out, cap *= 2);
            if (!bigger) { free(out); out = NULL; break; }
            out = bigger;
        }
        ssize_t got = read(fds[0], out + len, cap - len);
        if (got > 0) len += (size_t)got;
        else if (got == 0 || errno != EINTR) break;
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    if (!out) {
        perror("vigil-cc");
        return 1;
    }
    const char *nl = memchr(out, '\n', len);
    size_t first = nl ? (size_t)(nl - out) + 1 : len;
    fwrite(out, 1, first, stdout);
    if (rc == 0) {
        if (!nl && len) putchar('\n');
        printf("vigil-cc %s (build %s)\n", vcc_version, vcc_build_id);
    }
    fwrite(out + first, 1, len - first, stdout);
    free(out);
    return fflush(stdout) == 0 ? rc : 1;
}

/* Hands the original command line to clang, unchanged (under --version, with vigil-cc's version
 * added to clang's). */
static int stage_pass_through(struct vcc_job *job)
{
    if (job->args.action != VCC_PASS_THROUGH) return CONTINUE;
    if (job->verbose || (job->debug && job->args.nsources > 0))
        fprintf(stderr, "vigil-cc: %s: pass-through to clang, nothing instrumented (%s)\n",
                job->verbose ? "run" : "note", job->args.pass_reason);
    struct vcc_cmd cmd = {0};
    vcc_cmd_push(&cmd, job->clang);
    for (int i = 0; i < job->orig_argc; i++) vcc_cmd_push(&cmd, job->orig_argv[i]);
    if (job->verbose) print_command(cmd.v);
    fflush(NULL);
    if (job->args.print_version) return print_version(cmd.v);
    execvp(cmd.v[0], cmd.v);
    fprintf(stderr, "vigil-cc: cannot run %s: %s\n", cmd.v[0], strerror(errno));
    return 127;
}

/* The runtime sees the malloc family and the pthread functions by symbol interposition: the
 * executable's definitions come first in the dynamic symbol lookup, and the pthread hooks
 * forward to the next definition (dlsym(RTLD_NEXT)). A static link with libc.a has neither:
 * dlsym finds nothing (a program that starts a thread aborts in the runtime), and what reaches
 * the hooks is whatever libc.a happens to bind, so allocation, lock and thread events would be
 * wrong without a word. Refused before anything is compiled. */
static int stage_refuse_static(struct vcc_job *job)
{
    const struct vcc_args *a = &job->args;
    if (a->action != VCC_LINK || !a->static_link || !vcc_links_runtime(a)) return CONTINUE;
    fprintf(stderr,
            "vigil-cc: error: %s links are not supported: the vigil runtime intercepts malloc and "
            "the pthread functions by symbol interposition, which a static link with the C library "
            "bypasses, so its reports would be wrong; link dynamically (drop %s), or build without "
            "vigil (VIGIL_CC_DISABLE=1)\n",
            a->static_flag, a->static_flag);
    return 1;
}

/* <dir of vigil-cc>/../lib: the runtime and the transforming part. */
static int locate_libdir(struct vcc_job *job)
{
    if (job->libdir[0]) return 0;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0) {
        fprintf(stderr, "vigil-cc: cannot find its own executable: %s\n", strerror(errno));
        return 1;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    char joined[PATH_MAX + 8];
    snprintf(joined, sizeof joined, "%s/../lib", self);
    if (!realpath(joined, job->libdir)) snprintf(job->libdir, sizeof job->libdir, "%s", joined);
    return 0;
}

static int stage_locate_runtime(struct vcc_job *job)
{
    return locate_libdir(job) ? 1 : CONTINUE;
}

/* The transforming part, dlopen'ed once (pipeline.h). Its libLLVM costs about 20 ms to load:
 * a command the cache answers whole does without it. */
const struct vcc_transform_part *vcc_transform(struct vcc_job *job)
{
    static const struct vcc_transform_part *part;
    static int tried;
    if (tried) return part;
    tried = 1;
    if (locate_libdir(job)) return NULL;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/vigil-cc-transform.so", job->libdir);
    if (job->verbose) fprintf(stderr, "vigil-cc: loading %s\n", path);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "vigil-cc: error: cannot load its transforming part: %s (install it beside libvigil.a: make install)\n",
                dlerror());
        return NULL;
    }
    const struct vcc_transform_part *p = dlsym(handle, "vcc_transform_part");
    if (!p) {
        fprintf(stderr, "vigil-cc: error: %s is not vigil-cc's transforming part (no vcc_transform_part)\n", path);
        return NULL;
    }
    if (strcmp(p->build_id, vcc_build_id) != 0) {
        fprintf(stderr, "vigil-cc: error: %s is of another build (%s; vigil-cc is %s): install vigil-cc and its lib/ together\n",
                path, p->build_id, vcc_build_id);
        return NULL;
    }
    return part = p;
}

/* Inputs clang compiles as they are under -c/-S (assembly, C++, ...): one clang call each, with
 * the user's arguments minus the other inputs. */
static int compile_other(struct vcc_job *job, const struct vcc_input *in)
{
    const struct vcc_args *a = &job->args;
    struct vcc_cmd cmd = {0};
    vcc_cmd_push(&cmd, job->clang);
    for (int i = 0; i < a->argc; i++) {
        unsigned r = a->roles[i];
        if ((r & VCC_IS_INPUT) && i != in->argi) continue;
        if (r & VCC_IS_OUTPUT) continue;
        vcc_cmd_push(&cmd, a->argv[i]);
    }
    if (a->output) {
        vcc_cmd_push(&cmd, "-o");
        vcc_cmd_push(&cmd, a->output);
    }
    int status = vcc_run(job, cmd.v);
    vcc_cmd_free(&cmd);
    return status;
}

static int stage_compile(struct vcc_job *job)
{
    const struct vcc_args *a = &job->args;
    job->objects = calloc((size_t)a->ninputs + 1, sizeof *job->objects);
    if (!job->objects) { perror("vigil-cc"); return 1; }
    int first_failure = 0; /* like clang: report every source's errors, then stop */
    for (int k = 0; k < a->ninputs; k++) {
        const struct vcc_input *in = &a->inputs[k];
        int status;
        if (in->lang == VCC_LANG_OTHER) {
            if (a->action == VCC_LINK) continue; /* the link step takes it as it is */
            status = compile_other(job, in);
        } else {
            char *out;
            if (a->action == VCC_LINK) out = vcc_temp_file(job, ".o");
            else out = a->output ? strdup(a->output) : vcc_default_output(a, in);
            if (!out) return 1; /* no temporary file: nothing else will work either */
            job->objects[k] = out;
            /* The instrumentation cache first: a hit writes the output, and nothing else runs. */
            int hit = 0;
            struct vcc_cache_unit *u = vcc_cache_begin(job, in, out, &hit);
            if (hit) {
                status = 0;
            } else {
                const struct vcc_transform_part *part = vcc_transform(job);
                status = part ? part->compile_source(job, in, out, u) : 1;
            }
            vcc_cache_end(job, u, status, out);
        }
        if (status && !first_failure) first_failure = status;
    }
    if (first_failure) return first_failure;
    return a->action == VCC_LINK ? CONTINUE : 0;
}

/* The instrumentation cache (cache.c): on or off for this command, and the command line's paths
 * under VIGIL_CC_CACHE_BASEDIR made relative. */
static int stage_cache(struct vcc_job *job)
{
    vcc_cache_setup(job);
    return CONTINUE;
}

static int stage_link(struct vcc_job *job)
{
    return vcc_link(job);
}

struct stage {
    const char *name;
    int (*run)(struct vcc_job *job); /* CONTINUE, or the exit status to stop with */
};

static const struct stage stages[] = {
    {"settings", stage_settings},
    {"locate-clang", stage_locate_clang},
    {"classify", stage_classify},
    {"pass-through", stage_pass_through},
    {"config", stage_config},
    {"refuse-static", stage_refuse_static},
    {"locate-runtime", stage_locate_runtime},
    {"cache", stage_cache},
    {"compile", stage_compile},
    {"link", stage_link},
};

static void print_settings(enum setting_category category)
{
    for (size_t i = 0; i < sizeof setting_table / sizeof setting_table[0]; i++) {
        const struct setting_info *s = &setting_table[i];
        if (s->category == category)
            printf("  %-24s default %-8s %s\n", s->name, *s->def ? s->def : "(none)", s->meaning);
    }
}

static void print_help(struct vcc_job *job)
{
    printf("vigil-cc %s (build %s): a drop-in C compiler (clang) that instruments C sources for vigil.\n"
           "Usage: vigil-cc [clang/gcc arguments]   (CC=vigil-cc make, ./configure, cmake)\n\n"
           "Executables get the vigil runtime (libvigil.a) linked in. Shared libraries do not:\n"
           "their __vigil_* references bind to the runtime of the executable that loads them; a\n"
           "program not built with vigil-cc needs LD_PRELOAD=libvigil.so to load them. Static\n"
           "links (-static, -static-pie) are refused: the runtime works by symbol interposition.\n\n"
           "Settings (environment variables; the runtime reads VIGIL_OPTIONS):\n",
           vcc_version, vcc_build_id);
    print_settings(VCC_SETTING_USER);
    size_t ntools = 0;
    const struct vcc_transform_part *part = vcc_transform(job);
    const struct vigil_cc_tool *const *tools = part ? part->all_tools(&ntools) : NULL;
    printf("\nTool settings (each tool's compiler part, tools/<name>/compiler/):\n");
    for (size_t t = 0; t < ntools; t++)
        for (size_t i = 0; i < tools[t]->nsettings; i++) {
            const struct vigil_cc_setting *s = &tools[t]->settings[i];
            printf("  %-24s default %-8s %s: %s\n", s->name, *s->def ? s->def : "(none)", tools[t]->name, s->meaning);
        }
    printf("\nDevelopment knobs (for working on vigil-cc itself; the defaults are the measured choices):\n");
    print_settings(VCC_SETTING_DEV);
}

int main(int argc, char **argv)
{
    static struct vcc_job job;
    if (argc == 2 && !strcmp(argv[1], "--vigil-help")) {
        print_help(&job);
        return 0;
    }
    job.orig_argc = argc - 1;
    job.orig_argv = argv + 1;
    atexit(remove_temps);
    static const int fatal[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        if (signal(fatal[i], on_signal) == SIG_IGN) signal(fatal[i], SIG_IGN); /* keep nohup's choice */

    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        int status = stages[i].run(&job);
        if (status != CONTINUE) {
            if (job.verbose && status)
                fprintf(stderr, "vigil-cc: stage %s failed (status %d)\n", stages[i].name, status);
            return status;
        }
    }
    return 0;
}
