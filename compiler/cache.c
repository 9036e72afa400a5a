/* The instrumentation cache in vigil-cc (cache.h; docs/cache.md; on disk: common/cachefmt.h).
 *
 * The key is a SHA-256 of, in order, each as a named, length-prefixed field:
 *   the key format, vigil-cc's version and build id (a hash of its sources), the LLVM version
 *   it links, the clang it runs (real path, size, modification time);
 *   every VIGIL_CC_* setting of settings.inc (and VIGIL_DEBUG, TMPDIR) except those that cannot
 *   change the object: the cache's own, VIGIL_CC_VERBOSE, VIGIL_CC_KEEP_TEMPS, VIGIL_DEBUG,
 *   TMPDIR; then every other VIGIL_CC_* variable set (the tools' settings), sorted;
 *   the contents of the configuration file VIGIL_CC_CONFIG (not its path), when set;
 *   the working directory, unless debug info names it '.' (VIGIL_CC_CACHE_BASEDIR);
 *   every argument that reaches the front or back end, in order, except the output, the inputs,
 *   -c and the dependency-file options (the preprocessor run writes the .d file each time);
 *   the source's path as given, its language;
 *   the preprocessed source (clang -E with the front end's arguments).
 * The preprocessed source stands for every header and macro; its line markers carry the paths
 * that end up in debug info and the site table. */
#include "cache.h"

#include "cachefmt.h"

#include <errno.h>
#include <fcntl.h>
#include <llvm/Config/llvm-config.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CACHE_KEY_FORMAT "vigil-cc cache key 2"

struct vcc_cache {
    char dir[PATH_MAX];
    uint64_t max_size;          /* 0: no limit */
    int lookups;                /* 0 under VIGIL_DEBUG or VIGIL_CC_KEEP_TEMPS: compile, then store */
    char cwd[PATH_MAX];
    int cwd_mapped;             /* debug info names the working directory '.': not in the key */
    char *prefix_maps[2];       /* -fdebug-prefix-map=CWD=. (logical and physical names) */
    int color;                  /* stderr is a terminal: the captured diagnostics keep colors */
    char clang_identity[PATH_MAX + 96];
};

struct strbuf {
    char *s;
    size_t len, cap;
};

struct vcc_cache_unit {
    struct vcc_cache *c;
    const struct vcc_input *in;
    char key[65];
    char entry[PATH_MAX + 80];
    int hit;
    char *err_path;             /* the compilers' stderr on a miss */
    int err_fd;
    int uncaptured;             /* a compiler ran with stderr not captured: not stored */
    off_t err_forwarded;
    struct strbuf flags, module, functions;
    int64_t delta[VIGIL_CACHE_NCOUNTERS];
    const char *fe_args[4], *be_args[2];
    /* direct mode (docs/cache.md): */
    int direct;                 /* the direct key is known: look it up, record a manifest */
    int direct_hit;             /* the manifest held: the preprocessor did not run */
    char dkey[65];
    char manifest[PATH_MAX + 96];
    char *dep_path;             /* the dependency file the preprocessor writes, or NULL */
    struct strbuf man;          /* the manifest to write once the entry exists (empty: none) */
    int flags_done;
};

/* ---- small helpers ---- */

static void sb_add(struct strbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap) cap *= 2;
        char *bigger = realloc(b->s, cap);
        if (!bigger) { perror("vigil-cc"); exit(1); }
        b->s = bigger;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct strbuf *b, const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        sb_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) { perror("vigil-cc"); exit(1); }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

/* A word of a metadata line: no spaces or control characters (they become '?'). */
static void sb_word(struct strbuf *b, const char *s)
{
    if (!*s) { sb_add(b, "-", 1); return; }
    for (; *s; s++) {
        char c = (unsigned char)*s <= ' ' || *s == 0x7f ? '?' : *s;
        sb_add(b, &c, 1);
    }
}

/* The rest of a metadata line: no newlines. */
static void sb_text(struct strbuf *b, const char *s)
{
    for (; *s; s++) {
        char c = *s == '\n' || *s == '\r' ? ' ' : *s;
        sb_add(b, &c, 1);
    }
}

static void note(const struct vcc_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const struct vcc_job *job, const char *fmt, ...)
{
    if (!job->verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("vigil-cc: cache: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void hash_field(struct vigil_sha256 *h, const char *name, const char *value)
{
    size_t n = strlen(value);
    unsigned char len[8];
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)n >> (8 * i));
    vigil_sha256_update(h, name, strlen(name) + 1);
    vigil_sha256_update(h, len, 8);
    vigil_sha256_update(h, value, n);
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Copies src to the open descriptor out (when out >= 0) and hashes what it read. Returns the
 * number of bytes, or -1 (errno set). */
static int64_t copy_hashing(const char *src, int out, char hex[65])
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    struct vigil_sha256 h;
    vigil_sha256_init(&h);
    static char buf[1 << 16];
    int64_t total = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { int e = errno; close(in); errno = e; return -1; }
        if (n == 0) break;
        vigil_sha256_update(&h, buf, (size_t)n);
        if (out >= 0 && write_all(out, buf, (size_t)n) != 0) { int e = errno; close(in); errno = e; return -1; }
        total += n;
    }
    close(in);
    unsigned char digest[32];
    vigil_sha256_final(&h, digest);
    vigil_sha256_hex(digest, hex);
    return total;
}

/* ---- setup: settings, the working directory, the base directory ---- */

static int user_mentions(const struct vcc_args *a, const char *needle)
{
    for (int i = 0; i < a->argc; i++)
        if (strstr(a->argv[i], needle)) return 1;
    return 0;
}

static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* An absolute path without "." or ".." components or doubled slashes. */
static int clean_absolute(const char *p)
{
    if (p[0] != '/') return 0;
    for (const char *s = p; *s; s++)
        if (s[0] == '/' && (s[1] == '/' || (s[1] == '.' && (s[2] == '/' || !s[2] || (s[2] == '.' && (s[3] == '/' || !s[3]))))))
            return 0;
    return 1;
}

/* dir is p or a parent of p (both clean absolute paths). */
static int under(const char *p, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    if (n == 1) return 1;   /* "/" */
    return !strncmp(p, dir, n) && (p[n] == '/' || p[n] == 0);
}

/* path relative to cwd (both clean absolute paths), or NULL when it does not name the same file
 * (a symbolic link on the way). malloc'd. */
static char *relative_path(const char *cwd, const char *path)
{
    size_t common = 0;   /* length of the shared leading components, at a '/' or the end */
    for (size_t i = 0;; i++) {
        char a = cwd[i], b = path[i];
        if ((a == '/' || a == 0) && (b == '/' || b == 0)) common = i;
        if (a != b || a == 0) break;
    }
    struct strbuf r = {0};
    for (const char *s = cwd + common; *s; s++)
        if (*s == '/') sb_add(&r, "../", 3);
    const char *rest = path + common;
    if (*rest == '/') rest++;
    if (*rest) sb_add(&r, rest, strlen(rest));
    else if (r.len) r.s[--r.len] = 0;   /* "../../" -> "../.." */
    else sb_add(&r, ".", 1);
    if (!same_file(r.s, path)) {
        free(r.s);
        return NULL;
    }
    return r.s;
}

/* The options whose value names a directory or file of the preprocessor. */
static const char *const path_options[] = {
    "-I", "-iquote", "-isystem", "-idirafter", "-include", "-imacros", "-iprefix", "-iwithprefix",
    "-iwithprefixbefore", "-isystem-after", "-cxx-isystem", NULL,
};

static char *rewrite(struct vcc_cache *c, const char *base, const char *path)
{
    if (!clean_absolute(path) || !under(path, base)) return NULL;
    return relative_path(c->cwd, path);
}

static void rewrite_base_dir(struct vcc_job *job, struct vcc_cache *c, const char *base)
{
    struct vcc_args *a = &job->args;
    for (int i = 0; i < a->argc; i++) {
        char *arg = a->argv[i], *rel;
        if (a->roles[i] & VCC_IS_INPUT) {
            for (int k = 0; k < a->ninputs; k++)
                if (a->inputs[k].argi == i && a->inputs[k].lang != VCC_LANG_OTHER && (rel = rewrite(c, base, arg))) {
                    a->argv[i] = rel;
                    a->inputs[k].path = rel;
                }
            continue;
        }
        for (const char *const *o = path_options; *o; o++) {
            size_t n = strlen(*o);
            if (!strcmp(arg, *o) && i + 1 < a->argc) {
                if ((rel = rewrite(c, base, a->argv[i + 1]))) a->argv[i + 1] = rel;
                i++;
                break;
            }
            /* joined: only -I takes its value joined in practice; the longer names are not
             * prefixes of each other's joined forms, except -isystem-after (listed after). */
            if (!strncmp(arg, *o, n) && arg[n] == '/' && (rel = rewrite(c, base, arg + n))) {
                size_t len = n + strlen(rel) + 1;
                char *joined = malloc(len);
                if (!joined) { perror("vigil-cc"); exit(1); }
                snprintf(joined, len, "%s%s", *o, rel);
                free(rel);
                a->argv[i] = joined;
                break;
            }
        }
    }
}

/* The clang that runs: its real path, size and modification time. */
static void clang_identity(const char *clang, char *out, size_t len)
{
    char found[PATH_MAX] = "";
    if (strchr(clang, '/')) {
        snprintf(found, sizeof found, "%s", clang);
    } else {
        const char *path = getenv("PATH");
        for (const char *p = path ? path : ""; *p || !found[0];) {
            const char *colon = strchr(p, ':');
            size_t n = colon ? (size_t)(colon - p) : strlen(p);
            char candidate[PATH_MAX];
            snprintf(candidate, sizeof candidate, "%.*s%s%s", (int)n, n ? p : ".", "/", clang);
            if (access(candidate, X_OK) == 0) {
                snprintf(found, sizeof found, "%s", candidate);
                break;
            }
            if (!colon) break;
            p = colon + 1;
        }
    }
    char real[PATH_MAX];
    struct stat st;
    if (found[0] && realpath(found, real) && stat(real, &st) == 0)
        snprintf(out, len, "%s %lld %lld.%09ld", real, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                 (long)st.st_mtim.tv_nsec);
    else
        snprintf(out, len, "%s (not found)", clang);
}

void vcc_cache_setup(struct vcc_job *job)
{
    const struct vcc_settings *s = &job->settings;
    if (!vcc_setting_on(s->cache) || job->args.action == VCC_PASS_THROUGH || job->args.nsources == 0)
        return;
    struct vcc_cache *c = calloc(1, sizeof *c);
    if (!c) return;
    if (vigil_cache_dir(s->cache_dir, c->dir, sizeof c->dir) != 0) {
        note(job, "no cache directory (set VIGIL_CC_CACHE_DIR or HOME); compiling without the cache");
        free(c);
        return;
    }
    if (vigil_cache_parse_size(s->cache_max_size, &c->max_size) != 0) {
        fprintf(stderr, "vigil-cc: warning: VIGIL_CC_CACHE_MAX_SIZE=%s is not a size (such as 5G or 500M); using %s\n",
                s->cache_max_size, VIGIL_CACHE_DEFAULT_MAX);
        vigil_cache_parse_size(VIGIL_CACHE_DEFAULT_MAX, &c->max_size);
    }
    c->lookups = !job->debug && !job->keep_temps;
    if (!c->lookups) note(job, "VIGIL_DEBUG or VIGIL_CC_KEEP_TEMPS: compiling (the result is stored)");
    /* The working directory as clang names it: $PWD when it is ".", else the physical one. */
    char physical[PATH_MAX];
    if (!getcwd(physical, sizeof physical)) {
        note(job, "cannot tell the working directory: %s; compiling without the cache", strerror(errno));
        free(c);
        return;
    }
    const char *pwd = getenv("PWD");
    snprintf(c->cwd, sizeof c->cwd, "%s", pwd && clean_absolute(pwd) && same_file(pwd, ".") ? pwd : physical);

    const char *base = s->cache_basedir;
    if (*base && base[0] != '/') {
        fprintf(stderr, "vigil-cc: warning: VIGIL_CC_CACHE_BASEDIR=%s is not an absolute path; ignored\n", base);
    } else if (*base && clean_absolute(c->cwd) && under(c->cwd, base)) {
        rewrite_base_dir(job, c, base);
        /* Debug info names the working directory (DW_AT_comp_dir): '.' instead, unless the
         * user maps paths in debug info himself (then the directory stays in the key). */
        if (!user_mentions(&job->args, "-fdebug-prefix-map") && !user_mentions(&job->args, "-ffile-prefix-map") &&
            !user_mentions(&job->args, "-fdebug-compilation-dir")) {
            c->cwd_mapped = 1;
            const char *names[2] = {c->cwd, strcmp(physical, c->cwd) ? physical : NULL};
            for (int i = 0; i < 2 && names[i]; i++) {
                size_t len = strlen(names[i]) + 32;
                c->prefix_maps[i] = malloc(len);
                if (c->prefix_maps[i]) snprintf(c->prefix_maps[i], len, "-fdebug-prefix-map=%s=.", names[i]);
            }
        }
    }
    c->color = isatty(STDERR_FILENO) && !user_mentions(&job->args, "color-diagnostics") &&
               !user_mentions(&job->args, "diagnostics-color");
    clang_identity(job->clang, c->clang_identity, sizeof c->clang_identity);
    job->cache = c;
}

/* ---- the key ---- */

/* Why this compile is not for the cache, or NULL. */
static const char *uncacheable(const struct vcc_job *job, const char *output)
{
    const struct vcc_args *a = &job->args;
    if (a->action != VCC_COMPILE && a->action != VCC_LINK) return "not compiling to an object (-S)";
    if (!strcmp(output, "-")) return "output to stdout";
    for (int i = 0; i < a->argc; i++) {
        const char *arg = a->argv[i];
        if (!strncmp(arg, "-MJ", 3)) return "-MJ (compilation database entry)";
        if (!strcmp(arg, "-include-pch")) return "-include-pch";
        if (!strncmp(arg, "-fmodules", 9)) return "-fmodules";
    }
    return NULL;
}

/* Runs the preprocessor with the front end's arguments (and the dependency file's), into a
 * temporary file. Returns its path, or NULL when it failed. */
static char *preprocess(struct vcc_job *job, const struct vcc_input *in, char **search_log)
{
    const struct vcc_args *a = &job->args;
    char *out = vcc_temp_file(job, ".i");
    if (!out) return NULL;
    struct vcc_cmd cmd = {0};
    vcc_cmd_push(&cmd, job->clang);
    for (int i = 0; i < a->argc; i++) {
        unsigned r = a->roles[i];
        if ((r & VCC_TO_FE) || (r & VCC_IS_LANG) || i == in->argi) vcc_cmd_push(&cmd, a->argv[i]);
    }
    char *dep_file = vcc_dep_file(a, in), *dep_target = vcc_dep_target(a, in);
    if (dep_file) { vcc_cmd_push(&cmd, "-MF"); vcc_cmd_push(&cmd, dep_file); }
    if (dep_target) { vcc_cmd_push(&cmd, "-MQ"); vcc_cmd_push(&cmd, dep_target); }
    vcc_cmd_push(&cmd, "-E");
    /* direct mode: -v prints the include search list (on stderr), which the manifest needs */
    if (search_log) vcc_cmd_push(&cmd, "-v");
    vcc_cmd_push(&cmd, "-o");
    vcc_cmd_push(&cmd, out);
    /* Its warnings would repeat the front end's: only the front end's are shown (and kept). */
    int err_fd = -1;
    if (search_log && (*search_log = vcc_temp_file(job, ".log")))
        err_fd = open(*search_log, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (err_fd < 0) err_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int status = vcc_run_redirected(job, cmd.v, -1, err_fd);
    if (err_fd >= 0) close(err_fd);
    vcc_cmd_free(&cmd);
    free(dep_file);
    free(dep_target);
    if (status != 0) {
        unlink(out);
        free(out);
        return NULL;
    }
    return out;
}

static int excluded_setting(const char *name)
{
    static const char *const excluded[] = {
        "VIGIL_CC_CACHE", "VIGIL_CC_CACHE_DIR", "VIGIL_CC_CACHE_MAX_SIZE", "VIGIL_CC_CACHE_BASEDIR", "VIGIL_CC_CACHE_DIRECT",
        "VIGIL_CC_VERBOSE", "VIGIL_CC_KEEP_TEMPS", "VIGIL_DEBUG", "TMPDIR",
        "VIGIL_CC_CONFIG",   /* its contents are hashed instead of its path */
        NULL,
    };
    for (const char *const *e = excluded; *e; e++)
        if (!strcmp(*e, name)) return 1;
    return 0;
}

/* Whether NAME=VALUE names a setting of settings.inc. */
static int settings_inc_names(const char *var)
{
    size_t len = strcspn(var, "=");
#define VIGIL_CC_SETTING(field, name, category, def, meaning) \
    if (strlen(name) == len && !strncmp(name, var, len)) return 1;
#include "settings.inc"
#undef VIGIL_CC_SETTING
    return 0;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The fields of both keys: everything but the preprocessed source (the key) or the source's
 * contents and the dependency options (the direct key). */
static int hash_common(struct vcc_job *job, struct vcc_cache_unit *u, struct vigil_sha256 *hp)
{
    const struct vcc_cache *c = u->c;
    const struct vcc_args *a = &job->args;
    struct vigil_sha256 h = *hp;
    hash_field(&h, "format", CACHE_KEY_FORMAT);
    hash_field(&h, "vigil-cc", vcc_version);
    hash_field(&h, "build", vcc_build_id);
    hash_field(&h, "llvm", LLVM_VERSION_STRING);
    hash_field(&h, "clang", c->clang_identity);
#define VIGIL_CC_SETTING(field, name, category, def, meaning) \
    if (!excluded_setting(name)) hash_field(&h, name, job->settings.field);
#include "settings.inc"
#undef VIGIL_CC_SETTING
    /* The other VIGIL_CC_* variables (the tools' settings, which only the transforming part
     * lists; their defaults are in the build id), by name. */
    size_t nextra = 0;
    for (char **e = environ; *e; e++) nextra++;
    const char **extra = calloc(nextra + 1, sizeof *extra);
    if (!extra) return -1;
    nextra = 0;
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "VIGIL_CC_", 9) && !settings_inc_names(*e)) extra[nextra++] = *e;
    qsort(extra, nextra, sizeof *extra, by_string);
    for (size_t i = 0; i < nextra; i++) hash_field(&h, "env", extra[i]);
    free(extra);
    /* The whole configuration file: simpler than the part of it that applies to this unit,
     * and a config changes seldom (an edit rebuilds everything, as a changed flag does). */
    if (job->config_text || job->config) {
        char config_hex[65];
        struct vigil_sha256 ch;
        unsigned char config_digest[32];
        vigil_sha256_init(&ch);
        vigil_sha256_update(&ch, job->config_text ? job->config_text : "", job->config_len);
        vigil_sha256_final(&ch, config_digest);
        vigil_sha256_hex(config_digest, config_hex);
        hash_field(&h, "config-sha256", config_hex);
    }
    hash_field(&h, "cwd", c->cwd_mapped ? "(named . in debug info)" : c->cwd);
    for (int i = 0; i < a->argc; i++) {
        unsigned r = a->roles[i];
        if (r & (VCC_IS_INPUT | VCC_IS_OUTPUT | VCC_IS_ACTION | VCC_IS_LANG)) continue;
        if (!(r & (VCC_TO_FE | VCC_TO_BE))) continue;
        int dep = vcc_dep_option(a->argv[i]);
        if (dep) {
            if (dep == 2) i++;
            continue;
        }
        hash_field(&h, "arg", a->argv[i]);
        if (u->flags_done) continue;
        if (u->flags.len) sb_add(&u->flags, " ", 1);
        sb_text(&u->flags, a->argv[i]);
    }
    u->flags_done = 1;
    hash_field(&h, "source", u->in->path);
    hash_field(&h, "lang", u->in->lang == VCC_LANG_C ? "c" : "cpp-output");
    hash_field(&h, "x", u->in->xlang ? u->in->xlang : "");
    *hp = h;
    return 0;
}

static void set_key(struct vcc_cache_unit *u, struct vigil_sha256 *h)
{
    unsigned char digest[32];
    vigil_sha256_final(h, digest);
    vigil_sha256_hex(digest, u->key);
    snprintf(u->entry, sizeof u->entry, "%s/%.2s/%s", u->c->dir, u->key, u->key);
}

static int compute_key(struct vcc_job *job, struct vcc_cache_unit *u, const char *preprocessed)
{
    struct vigil_sha256 h;
    vigil_sha256_init(&h);
    if (hash_common(job, u, &h) != 0) return -1;
    hash_field(&h, "preprocessed", "");
    char hex[65];
    int64_t n = copy_hashing(preprocessed, -1, hex);   /* a hash of the text, hashed in */
    if (n < 0) return -1;
    hash_field(&h, "preprocessed-sha256", hex);
    set_key(u, &h);
    return 0;
}

/* ---- a hit ---- */

static void damaged(struct vcc_job *job, struct vcc_cache_unit *u, const char *why)
{
    fprintf(stderr, "vigil-cc: warning: cache entry %s is damaged (%s); compiling %s again\n", u->entry, why,
            u->in->path);
    vigil_cache_remove(u->entry);
    u->delta[VIGIL_CACHE_DAMAGED]++;
    (void)job;
}

/* "NAME SIZE HEX" of a meta text. */
static int meta_file(const char *meta, const char *name, int64_t *size, char hex[65])
{
    char value[128];
    long long n;
    if (vigil_cache_meta_field(meta, name, value, sizeof value) != 0) return -1;
    if (sscanf(value, "%lld %64s", &n, hex) != 2 || strlen(hex) != 64 || n < 0) return -1;
    *size = n;
    return 0;
}

/* Writes the stored stderr to ours; without a terminal, without the colors. */
static void replay_stderr(const struct vcc_cache_unit *u, const char *text, size_t len)
{
    if (!len) return;
    fflush(stderr);
    if (isatty(STDERR_FILENO) || !memchr(text, '\033', len)) {
        write_all(STDERR_FILENO, text, len);
        return;
    }
    struct strbuf plain = {0};
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\033' && i + 1 < len && text[i + 1] == '[') {
            i += 2;
            while (i < len && !(text[i] >= 0x40 && text[i] <= 0x7e)) i++;
            continue;
        }
        sb_add(&plain, text + i, 1);
    }
    if (plain.len) write_all(STDERR_FILENO, plain.s, plain.len);
    free(plain.s);
    (void)u;
}

static char *read_whole(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size > (64 << 20)) { close(fd); return NULL; }
    char *buf = malloc((size_t)st.st_size + 1);
    size_t used = 0;
    while (buf) {
        ssize_t n = read(fd, buf + used, (size_t)st.st_size + 1 - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { free(buf); buf = NULL; break; }
        if (n == 0 || (used += (size_t)n) > (size_t)st.st_size) break;
    }
    close(fd);
    if (buf) { buf[used] = 0; *len = used; }
    return buf;
}

/* Opens where output is written: a temporary file beside it (its name in tmp) that
 * close_output renames over it, or output itself when it is not a regular file (/dev/null). */
static int open_output(const char *output, char *tmp, size_t tmplen)
{
    struct stat st;
    int in_place = lstat(output, &st) == 0 && !S_ISREG(st.st_mode);
    int fd = -1;
    tmp[0] = 0;
    if (!in_place) {
        snprintf(tmp, tmplen, "%s.vigil-cache.%ld.tmp", output, (long)getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    }
    if (fd < 0) {
        tmp[0] = 0;
        fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    }
    return fd;
}

/* Closes what open_output opened; ok: everything was written. 0, or -1 (no temporary left). */
static int close_output(int fd, int ok, const char *tmp, const char *output)
{
    ok = close(fd) == 0 && ok;
    if (tmp[0]) {
        if (ok && rename(tmp, output) != 0) ok = 0;
        if (!ok) unlink(tmp);
    }
    return ok ? 0 : -1;
}

/* Copies the verified object (a file, or bytes already in memory) to output. */
static int write_output(const char *object, const char *output)
{
    char tmp[PATH_MAX + 64];
    int fd = open_output(output, tmp, sizeof tmp);
    if (fd < 0) return -1;
    char hex[65];
    return close_output(fd, copy_hashing(object, fd, hex) >= 0, tmp, output);
}

static int write_output_bytes(const char *data, size_t len, const char *output)
{
    char tmp[PATH_MAX + 64];
    int fd = open_output(output, tmp, sizeof tmp);
    if (fd < 0) return -1;
    return close_output(fd, write_all(fd, data, len) == 0, tmp, output);
}

/* 1 on a hit (output written), 0 on a miss. */
static int lookup(struct vcc_job *job, struct vcc_cache_unit *u, const char *output)
{
    char err[512], hex[65], want[65], path[PATH_MAX + 128];
    size_t meta_len;
    char *meta = vigil_cache_read_meta(u->entry, &meta_len, err, sizeof err);
    if (!meta) {
        if (errno != ENOENT) damaged(job, u, err);
        return 0;
    }
    int64_t object_size, stderr_size;
    char key[80];
    if (meta_file(meta, "object", &object_size, want) != 0 || meta_file(meta, "stderr", &stderr_size, hex) != 0 ||
        vigil_cache_meta_field(meta, "key", key, sizeof key) != 0 || strcmp(key, u->key) != 0) {
        free(meta);
        damaged(job, u, "metadata without its key, or the object's or stderr's size and checksum");
        return 0;
    }
    /* the stored warnings, checked */
    char stderr_want[65];
    memcpy(stderr_want, hex, sizeof hex);
    snprintf(path, sizeof path, "%s/%s", u->entry, VIGIL_CACHE_STDERR);
    size_t text_len = 0;
    char *text = read_whole(path, &text_len);
    if (!text) {
        free(meta);
        if (errno != ENOENT) damaged(job, u, "stderr.txt unreadable");
        return 0;
    }
    struct vigil_sha256 h;
    unsigned char digest[32];
    vigil_sha256_init(&h);
    vigil_sha256_update(&h, text, text_len);
    vigil_sha256_final(&h, digest);
    vigil_sha256_hex(digest, hex);
    if ((int64_t)text_len != stderr_size || strcmp(hex, stderr_want)) {
        free(meta);
        free(text);
        damaged(job, u, "stderr.txt does not match its checksum");
        return 0;
    }
    /* the object, checked before it is copied: read once (hashed in memory, then written) */
    snprintf(path, sizeof path, "%s/%s", u->entry, VIGIL_CACHE_OBJECT);
    size_t object_len = 0;
    char *object = object_size <= (64 << 20) ? read_whole(path, &object_len) : NULL;
    int64_t n;
    if (object) {
        vigil_sha256_init(&h);
        vigil_sha256_update(&h, object, object_len);
        vigil_sha256_final(&h, digest);
        vigil_sha256_hex(digest, hex);
        n = (int64_t)object_len;
    } else {
        n = copy_hashing(path, -1, hex);
    }
    if (n < 0) {
        int gone = errno == ENOENT;
        free(meta);
        free(text);
        if (!gone) damaged(job, u, "object.o unreadable");
        return 0;
    }
    if (n != object_size || strcmp(hex, want)) {
        free(meta);
        free(text);
        free(object);
        snprintf(err, sizeof err, "object.o does not match its checksum (%lld bytes, %lld expected)", (long long)n,
                 (long long)object_size);
        damaged(job, u, err);
        return 0;
    }
    free(meta);
    if ((object ? write_output_bytes(object, object_len, output) : write_output(path, output)) != 0) {
        note(job, "cannot write %s: %s; compiling", output, strerror(errno));
        free(text);
        free(object);
        u->delta[VIGIL_CACHE_ERRORS]++;
        return 0;   /* the compile writes it, or says why not */
    }
    free(object);
    replay_stderr(u, text, text_len);
    free(text);
    /* the entry's last use, for eviction */
    snprintf(path, sizeof path, "%s/%s", u->entry, VIGIL_CACHE_META);
    utimensat(AT_FDCWD, path, NULL, 0);
    return 1;
}


/* ---- direct mode: a manifest of what the preprocessor read, checked instead of running it ----
 *
 * The direct key is the key without the preprocessed source, plus the source's contents, the
 * dependency-file options and the output (which name the .d file and its target), and the
 * environment the preprocessor reads (CPATH, C_INCLUDE_PATH, SOURCE_DATE_EPOCH,
 * CCC_OVERRIDE_OPTIONS). Its manifest lists every file the preprocessor entered (the line
 * markers of its output: `# N "PATH" 1`) with its SHA-256, and every place where a header of
 * the same spelled name could have been found first: PATH's name relative to each include
 * directory, to the directory of each file read, and each __has_include name, tried in each
 * of them. A later compile with the same direct key whose files all hash the same and whose
 * absent places are still absent (and present ones present) gets the key without running the
 * preprocessor. Not recorded (the compile preprocesses each time): a file that uses __DATE__,
 * __TIME__ or __TIMESTAMP__, or __has_include with a macro; a file read, or an unused header,
 * modified less than a second before the compile began; options that read files the line
 * markers do not show (-imacros) or that pass the preprocessor arbitrary options (-Xclang,
 * -Xpreprocessor, -Wp, other than the dependency file's). */

/* The dependency file the preprocessor run writes: the name vigil-cc adds (derived from -o),
 * else the user's -MF FILE or -Wp,-MD,FILE. *unknown when -MD/-MMD is given and the name
 * cannot be told. */
static char *dep_output_path(const struct vcc_args *a, const struct vcc_input *in, int *unknown)
{
    *unknown = 0;
    char *derived = vcc_dep_file(a, in);
    if (derived) return derived;
    const char *found = NULL;
    for (int i = 0; i < a->argc; i++) {
        const char *arg = a->argv[i];
        if (!strcmp(arg, "-MF") && i + 1 < a->argc) found = a->argv[++i];
        else if (!strncmp(arg, "-MF", 3) && arg[3]) found = arg + 3;
        else if (!strncmp(arg, "-Wp,-MD,", 8)) found = arg + 8;
        else if (!strncmp(arg, "-Wp,-MMD,", 9)) found = arg + 9;
    }
    if (found) return strdup(found);
    if (a->dep_file) *unknown = 1;
    return NULL;
}

/* Why this compile gets no direct mode, or NULL. */
static const char *no_direct(const struct vcc_job *job, const struct vcc_input *in)
{
    const struct vcc_args *a = &job->args;
    if (!vcc_setting_on(job->settings.cache_direct)) return "VIGIL_CC_CACHE_DIRECT=0";
    if (in->lang != VCC_LANG_C) return "not a C source";
    for (int i = 0; i < a->argc; i++) {
        const char *arg = a->argv[i];
        if (!strcmp(arg, "-imacros")) return "-imacros";
        if (!strncmp(arg, "-working-directory", 18)) return "-working-directory";
        if (!strcmp(arg, "-Xclang") || !strcmp(arg, "-Xpreprocessor")) return arg;
        if (!strncmp(arg, "-Wp,", 4) && strncmp(arg, "-Wp,-MD,", 8) && strncmp(arg, "-Wp,-MMD,", 9)) return "-Wp,";
    }
    return NULL;
}

static int hash_file(const char *path, char hex[65], int64_t *size)
{
    int64_t n = copy_hashing(path, -1, hex);
    if (n < 0) return -1;
    *size = n;
    return 0;
}

static int direct_key(struct vcc_job *job, struct vcc_cache_unit *u, const char *output)
{
    const struct vcc_args *a = &job->args;
    struct vigil_sha256 h;
    vigil_sha256_init(&h);
    if (hash_common(job, u, &h) != 0) return -1;
    hash_field(&h, "direct", "");
    char hex[65];
    int64_t size;
    if (hash_file(u->in->path, hex, &size) != 0) return -1;
    hash_field(&h, "source-sha256", hex);
    static const char *const env[] = {"CPATH", "C_INCLUDE_PATH", "SOURCE_DATE_EPOCH", "CCC_OVERRIDE_OPTIONS", NULL};
    for (const char *const *e = env; *e; e++) {
        const char *v = getenv(*e);
        hash_field(&h, *e, v ? v : "(unset)");
    }
    for (int i = 0; i < a->argc; i++) {
        int dep = vcc_dep_option(a->argv[i]);
        if (!dep) continue;
        hash_field(&h, "dep-arg", a->argv[i]);
        if (dep == 2 && i + 1 < a->argc) hash_field(&h, "dep-arg", a->argv[++i]);
    }
    char *target = vcc_dep_target(a, u->in);
    hash_field(&h, "dep-file", u->dep_path ? u->dep_path : "");
    hash_field(&h, "dep-target", target ? target : "");
    free(target);
    if (u->dep_path) hash_field(&h, "output", output);
    unsigned char digest[32];
    vigil_sha256_final(&h, digest);
    vigil_sha256_hex(digest, u->dkey);
    snprintf(u->manifest, sizeof u->manifest, "%s/%.2s/%s%s", u->c->dir, u->dkey, u->dkey, VIGIL_CACHE_MANIFEST_SUFFIX);
    return 0;
}

/* Writes len bytes to path through a temporary file renamed over it. */
static int write_file_atomic(const char *path, const char *data, size_t len)
{
    char tmp[PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.vigil-cache.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return -1;
    int ok = write_all(fd, data, len) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) unlink(tmp);
    return ok ? 0 : -1;
}

/* 1 when the manifest holds and its entry was a hit (output and dependency file written). */
static int direct_lookup(struct vcc_job *job, struct vcc_cache_unit *u, const char *output)
{
    size_t len;
    char *text = read_whole(u->manifest, &len);
    if (!text) return 0;
    struct vigil_manifest m;
    char err[256];
    if (vigil_manifest_parse(text, len, &m, err, sizeof err) != 0) {
        fprintf(stderr, "vigil-cc: warning: cache manifest %s is damaged (%s); preprocessing %s\n", u->manifest, err,
                u->in->path);
        unlink(u->manifest);
        u->delta[VIGIL_CACHE_DAMAGED]++;
        free(text);
        return 0;
    }
    const char *changed = NULL;
    struct stat st;
    for (size_t i = 0; i < m.nitems && !changed; i++) {
        const struct vigil_manifest_item *it = &m.items[i];
        char hex[65];
        int64_t size;
        switch (it->kind) {
        case VIGIL_MANIFEST_FILE:
            if (stat(it->path, &st) != 0 || st.st_size != it->size || hash_file(it->path, hex, &size) != 0 ||
                size != it->size || strcmp(hex, it->hex))
                changed = it->path;
            break;
        case VIGIL_MANIFEST_ABSENT:
            if (lstat(it->path, &st) == 0) changed = it->path;
            break;
        case VIGIL_MANIFEST_PRESENT:
            if (lstat(it->path, &st) != 0) changed = it->path;
            break;
        }
    }
    int hit = 0;
    if (changed) {
        note(job, "direct: %s changed since the manifest %.16s; preprocessing", changed, u->dkey);
    } else if (m.has_deps && u->dep_path && write_file_atomic(u->dep_path, m.deps, m.deps_len) != 0) {
        note(job, "direct: cannot write %s: %s; preprocessing", u->dep_path, strerror(errno));
    } else if (!m.has_deps != !u->dep_path) {
        note(job, "direct: the manifest %.16s has no dependency file; preprocessing", u->dkey);
    } else {
        struct vigil_sha256 h;
        memcpy(u->key, m.key, 65);
        (void)h;
        snprintf(u->entry, sizeof u->entry, "%s/%.2s/%s", u->c->dir, u->key, u->key);
        hit = lookup(job, u, output);
        if (hit) utimensat(AT_FDCWD, u->manifest, NULL, 0);
    }
    vigil_manifest_free(&m);
    free(text);
    return hit;
}

/* ---- recording a manifest ---- */

struct strset {
    char **v;
    size_t n, cap;
};

static int set_has(const struct strset *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], x)) return 1;
    return 0;
}

static void set_add_n(struct strset *s, const char *x, size_t len)
{
    char *copy = strndup(x, len);
    if (!copy) { perror("vigil-cc"); exit(1); }
    if (set_has(s, copy)) { free(copy); return; }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 32;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) { perror("vigil-cc"); exit(1); }
    }
    s->v[s->n++] = copy;
}

static void set_add(struct strset *s, const char *x)
{
    set_add_n(s, x, strlen(x));
}

static void set_free(struct strset *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

/* A line marker of clang's output, `# N "PATH" FLAGS`: PATH unescaped into out; *enters when
 * its first flag is 1 (a file entered). 0, or -1 when the line is not one. */
static int line_marker(const char *p, const char *end, struct strbuf *out, int *enters)
{
    if (p + 3 > end || p[0] != '#' || p[1] != ' ' || !(p[2] >= '0' && p[2] <= '9')) return -1;
    p += 2;
    while (p < end && *p >= '0' && *p <= '9') p++;
    if (p + 2 > end || p[0] != ' ' || p[1] != '"') return -1;
    p += 2;
    out->len = 0;
    while (p < end && *p != '"') {
        char c = *p++;
        if (c == '\\' && p < end) {
            if (*p >= '0' && *p <= '7') {
                int v = 0;
                for (int k = 0; k < 3 && p < end && *p >= '0' && *p <= '7'; k++) v = v * 8 + (*p++ - '0');
                c = (char)v;
            } else {
                c = *p++;
            }
        }
        sb_add(out, &c, 1);
    }
    if (p >= end) return -1;
    p++;
    *enters = p + 1 < end && p[0] == ' ' && p[1] == '1' && (p + 2 == end || p[2] == ' ');
    if (!out->s) sb_add(out, "", 0);
    return 0;
}

/* Adds the names a __has_include or __has_include_next in text asks about; -1 when one is not
 * a literal <name> or "name". */
static int has_include_names(const char *text, size_t len, struct strset *names)
{
    static const char word[] = "__has_include";
    const char *p = text, *end = text + len;
    while ((p = memmem(p, (size_t)(end - p), word, sizeof word - 1))) {
        p += sizeof word - 1;
        if (end - p >= 5 && !memcmp(p, "_next", 5)) p += 5;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p < end && *p != '(') continue;   /* the word itself (#ifdef __has_include) */
        p++;
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        if (p >= end || (*p != '<' && *p != '"')) return -1;
        char close = *p == '<' ? '>' : '"';
        const char *q = ++p;
        while (q < end && *q != close && *q != '\n') q++;
        if (q >= end || *q != close || q == p) return -1;
        set_add_n(names, p, (size_t)(q - p));
        p = q;
    }
    return 0;
}

/* dir + "/" + rel, or rel when dir is "." and rel is relative. */
static void join_path(struct strbuf *b, const char *dir, const char *rel)
{
    b->len = 0;
    if (!strcmp(dir, ".") && rel[0] != '/') { sb_add(b, rel, strlen(rel)); return; }
    sb_add(b, dir, strlen(dir));
    if (b->len && b->s[b->len - 1] != '/') sb_add(b, "/", 1);
    sb_add(b, rel, strlen(rel));
}

/* Builds u->man from the preprocessed output and the search list (-v); leaves it empty, with a
 * note, when this compile must not have one. t0: when the preprocessor started. */
static void record_manifest(struct vcc_job *job, struct vcc_cache_unit *u, const char *preprocessed,
                            const char *search_log, const struct timespec *t0)
{
    const char *why = NULL;
    struct strset files = {0}, dirs = {0}, names = {0}, absent_dirs = {0}, absent = {0};
    struct strbuf path = {0}, m = {0};
    size_t len = 0;
    char *text = read_whole(preprocessed, &len);
    if (!text) { why = "cannot read the preprocessed source"; goto out; }
    /* the files entered */
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        int enters;
        if (*p == '#' && line_marker(p, eol, &path, &enters) == 0 && (enters || files.n == 0) && path.len &&
            path.s[0] != '<')
            set_add(&files, path.s);
        p = nl ? nl + 1 : end;
    }
    free(text);
    text = NULL;
    if (!set_has(&files, u->in->path)) { why = "no line markers name the source"; goto out; }
    /* the include directories, and those that did not exist */
    size_t log_len = 0;
    char *log = search_log ? read_whole(search_log, &log_len) : NULL;
    if (!log || !strstr(log, "End of search list.")) { free(log); why = "no include search list (-v)"; goto out; }
    int in_list = 0;
    for (char *line = log; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        static const char ignoring[] = "ignoring nonexistent directory \"";
        if (!strncmp(line, ignoring, sizeof ignoring - 1)) {
            char *name = line + sizeof ignoring - 1, *q = strrchr(name, '"');
            if (q) set_add_n(&absent_dirs, name, (size_t)(q - name));
        } else if (strstr(line, "search starts here:")) {
            in_list = 1;
        } else if (!strcmp(line, "End of search list.")) {
            in_list = 0;
        } else if (in_list && line[0] == ' ') {
            char *name = line + 1, *fw = strstr(name, " (framework directory)");
            if (fw) *fw = 0;
            size_t n = strlen(name);
            while (n > 1 && name[n - 1] == '/') n--;
            set_add_n(&dirs, name, n);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(log);
    double start = (double)t0->tv_sec + t0->tv_nsec / 1e9 - 1.0;
    /* the files: their hashes; their directories join the places to look */
    sb_printf(&m, "%s\nkey %s\n", VIGIL_CACHE_MANIFEST_MAGIC, u->key);
    for (size_t i = 0; i < files.n && !why; i++) {
        const char *f = files.v[i];
        struct stat st;
        if (strchr(f, '\n') || stat(f, &st) != 0 || !S_ISREG(st.st_mode)) { why = "a file read is not a regular file"; break; }
        if ((double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 >= start) { why = "a file read changed less than a second before the compile"; break; }
        size_t flen;
        char *content = read_whole(f, &flen);
        if (!content || (int64_t)flen != st.st_size) { free(content); why = "a file read cannot be read"; break; }
        if (memmem(content, flen, "__DATE__", 8) || memmem(content, flen, "__TIME__", 8) ||
            memmem(content, flen, "__TIMESTAMP__", 13)) {
            free(content);
            why = "a file read uses __DATE__, __TIME__ or __TIMESTAMP__";
            break;
        }
        if (has_include_names(content, flen, &names) != 0) {
            free(content);
            why = "a file read uses __has_include with a macro";
            break;
        }
        struct vigil_sha256 h;
        unsigned char digest[32];
        char hex[65];
        vigil_sha256_init(&h);
        vigil_sha256_update(&h, content, flen);
        vigil_sha256_final(&h, digest);
        vigil_sha256_hex(digest, hex);
        free(content);
        sb_printf(&m, "file %lld %s %s\n", (long long)flen, hex, f);
        const char *slash = strrchr(f, '/');
        if (slash) set_add_n(&dirs, f, slash == f ? 1 : (size_t)(slash - f));
        else set_add(&dirs, ".");
    }
    if (why) goto out;
    /* the spelled names: each file's path relative to each directory it is under */
    for (size_t i = 0; i < files.n; i++)
        for (size_t d = 0; d < dirs.n; d++) {
            const char *dir = dirs.v[d], *f = files.v[i];
            size_t n = strlen(dir);
            if (!strcmp(dir, ".") && f[0] != '/') set_add(&names, !strncmp(f, "./", 2) ? f + 2 : f);
            else if (!strncmp(f, dir, n) && f[n] == '/' && f[n + 1]) set_add(&names, f + n + 1);
        }
    if (dirs.n * names.n > 50000) { why = "too many include directories and headers"; goto out; }
    for (size_t d = 0; d < absent_dirs.n; d++) {
        struct stat st;
        if (strchr(absent_dirs.v[d], '\n')) { why = "a newline in a directory's name"; goto out; }
        if (lstat(absent_dirs.v[d], &st) == 0) { why = "an include directory appeared during the compile"; goto out; }
        sb_printf(&m, "absent %s\n", absent_dirs.v[d]);
        set_add(&absent, absent_dirs.v[d]);
    }
    /* every place a header of such a name could be found: absent, present, or read */
    for (size_t d = 0; d < dirs.n; d++)
        for (size_t k = 0; k < names.n; k++) {
            join_path(&path, dirs.v[d], names.v[k]);
            if (set_has(&files, path.s)) continue;
            if (strchr(path.s, '\n')) { why = "a newline in a file's name"; goto out; }
            struct stat st;
            if (lstat(path.s, &st) != 0) {
                if (errno != ENOENT && errno != ENOTDIR) { why = "a place of a header cannot be looked at"; goto out; }
                /* the first missing directory on the way stands for everything under it */
                size_t keep = path.len;
                for (char *slash = path.s; (slash = strchr(slash + 1, '/'));) {
                    *slash = 0;
                    int missing = lstat(path.s, &st) != 0;
                    *slash = '/';
                    if (missing) { keep = (size_t)(slash - path.s); break; }
                }
                path.s[keep] = 0;
                if (!set_has(&absent, path.s)) {
                    set_add(&absent, path.s);
                    sb_printf(&m, "absent %s\n", path.s);
                }
            } else {
                if ((double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 >= start) {
                    why = "an unused header changed less than a second before the compile";
                    goto out;
                }
                sb_printf(&m, "present %s\n", path.s);
            }
        }
    if (u->dep_path) {
        size_t dlen;
        char *deps = read_whole(u->dep_path, &dlen);
        if (!deps) { why = "cannot read the dependency file"; goto out; }
        sb_printf(&m, "deps %zu\n", dlen);
        sb_add(&m, deps, dlen);
        sb_add(&m, "\n", 1);
        free(deps);
    }
out:
    if (why) {
        note(job, "direct: no manifest for %s: %s", u->in->path, why);
        free(m.s);
    } else {
        struct vigil_sha256 h;
        unsigned char digest[32];
        char sum[65];
        vigil_sha256_init(&h);
        vigil_sha256_update(&h, m.s, m.len);
        vigil_sha256_final(&h, digest);
        vigil_sha256_hex(digest, sum);
        sb_printf(&m, "checksum %s\n", sum);
        u->man = m;
    }
    free(text);
    free(path.s);
    set_free(&files);
    set_free(&dirs);
    set_free(&names);
    set_free(&absent_dirs);
    set_free(&absent);
}

/* Writes the recorded manifest (once the entry it leads to exists). */
static void write_manifest(struct vcc_job *job, struct vcc_cache_unit *u)
{
    if (!u->man.len) return;
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof sub, "%s/%.2s", u->c->dir, u->dkey);
    if (vigil_cache_mkdirs(sub) != 0) return;
    char tmp[PATH_MAX + 160];
    static unsigned counter;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", u->manifest, (long)getpid(), counter++);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return;
    int ok = write_all(fd, u->man.s, u->man.len) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, u->manifest) == 0) {
        note(job, "direct: manifest %.16s for %s", u->dkey, u->in->path);
        return;
    }
    unlink(tmp);
}

struct vcc_cache_unit *vcc_cache_begin(struct vcc_job *job, const struct vcc_input *in, const char *output, int *hit)
{
    *hit = 0;
    struct vcc_cache *c = job->cache;
    if (!c) return NULL;
    struct vcc_cache_unit *u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->c = c;
    u->in = in;
    u->err_fd = -1;
    const char *why = uncacheable(job, output);
    char *preprocessed = NULL, *search_log = NULL;
    /* direct mode: the manifest of an earlier compile, checked without the preprocessor */
    const char *no = why ? why : no_direct(job, in);
    int unknown_deps = 0;
    if (!no) u->dep_path = dep_output_path(&job->args, in, &unknown_deps);
    if (!no && unknown_deps) no = "cannot tell the dependency file's name";
    if (!no && direct_key(job, u, output) != 0) no = "cannot read the source";
    if (!no) u->direct = 1;
    else if (!why) note(job, "direct: not for %s: %s", in->path, no);
    if (u->direct && c->lookups && direct_lookup(job, u, output)) {
        note(job, "direct hit %.16s for %s", u->key, in->path);
        u->hit = u->direct_hit = *hit = 1;
        return u;
    }
    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    if (!why && !(preprocessed = preprocess(job, in, u->direct ? &search_log : NULL)))
        why = "the preprocessor failed (the compile says why)";
    if (!why && compute_key(job, u, preprocessed) != 0) why = "cannot read the preprocessed source";
    if (!why && u->direct) record_manifest(job, u, preprocessed, search_log, &t0);
    if (preprocessed) {
        unlink(preprocessed);
        free(preprocessed);
    }
    if (search_log) {
        unlink(search_log);
        free(search_log);
    }
    if (why) {
        note(job, "%s not cached: %s", in->path, why);
        if (vigil_cache_mkdirs(c->dir) == 0) {
            int64_t delta[VIGIL_CACHE_NCOUNTERS] = {0};
            delta[VIGIL_CACHE_UNCACHED] = 1;
            vigil_cache_stats_add(c->dir, delta, NULL, NULL);
        }
        free(u->flags.s);
        free(u->dep_path);
        free(u->man.s);
        free(u);
        return NULL;
    }
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (c->prefix_maps[i]) u->fe_args[n++] = c->prefix_maps[i];
    if (c->color) {
        u->fe_args[n++] = "-fcolor-diagnostics";
        u->be_args[0] = "-fcolor-diagnostics";
    }
    if (c->lookups && lookup(job, u, output)) {
        note(job, "hit %.16s for %s", u->key, in->path);
        u->hit = *hit = 1;
    } else {
        note(job, "miss %.16s for %s", u->key, in->path);
    }
    return u;
}

int vcc_cache_deps_written(const struct vcc_cache_unit *u)
{
    return u != NULL;
}

const char *const *vcc_cache_front_end_args(const struct vcc_cache_unit *u)
{
    return u->fe_args;
}

const char *const *vcc_cache_back_end_args(const struct vcc_cache_unit *u)
{
    return u->be_args;
}

int vcc_cache_run(struct vcc_job *job, struct vcc_cache_unit *u, char **argv)
{
    if (u->err_fd < 0) {
        u->err_path = vcc_temp_file(job, ".err");
        if (u->err_path) u->err_fd = open(u->err_path, O_RDWR | O_APPEND | O_CLOEXEC);
        if (u->err_fd < 0) {
            u->uncaptured = 1;   /* not stored then: its warnings would be lost */
            return vcc_run(job, argv);
        }
    }
    int status = vcc_run_redirected(job, argv, -1, u->err_fd);
    /* what it printed, now */
    fflush(stderr);
    char buf[1 << 14];
    for (;;) {
        ssize_t n = pread(u->err_fd, buf, sizeof buf, u->err_forwarded);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        write_all(STDERR_FILENO, buf, (size_t)n);
        u->err_forwarded += n;
    }
    return status;
}

/* ---- metadata ---- */

void vcc_cache_on_function(void *ctx, const struct vigil_function_report *r)
{
    struct vcc_cache_unit *u = ctx;
    struct strbuf *b = &u->functions;
    sb_add(b, "function ", 9);
    sb_word(b, r->name);
    sb_printf(b, " %s ", r->how);
    sb_word(b, r->copy ? r->copy : "-");
    sb_printf(b, " sites=%u checks=%u probes=%u", r->sites, r->checks, r->probes);
    if (r->reason) {
        sb_add(b, " reason=", 8);
        sb_text(b, r->reason);
    }
    sb_add(b, "\n", 1);
}

void vcc_cache_module(struct vcc_cache_unit *u, const struct vigil_transform_stats *st, const char *uninstrumented)
{
    u->module.len = 0;
    if (!st) {
        u->functions.len = 0;   /* the module was compiled as the front end wrote it */
        sb_add(&u->module, "uninstrumented ", 15);
        sb_text(&u->module, uninstrumented ? uninstrumented : "");
        return;
    }
    sb_printf(&u->module, "functions=%u instrumented=%u skipped=%u sites=%u checks=%u probes=%u outlined=%u",
              st->functions_seen, st->functions_transformed, st->functions_skipped, st->sites,
              st->entry_checks + st->backedge_checks, st->probes, st->outlined);
}

/* ---- storing ---- */

static void tag_directory(const char *dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/CACHEDIR.TAG", dir);
    if (access(path, F_OK) == 0) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) return;
    static const char tag[] = "Signature: 8a477f597d28d172789f06886806bc55\n"
                              "# This file is a cache directory tag created by vigil-cc (the instrumentation cache).\n"
                              "# For information about cache directory tags see https://bford.info/cachedir/\n";
    write_all(fd, tag, sizeof tag - 1);
    close(fd);
}

/* Writes the entry. Returns its size in bytes, 0 when another process stored the same key
 * first or the output cannot be stored (not a regular file), -1 on an error. */
static int64_t store(struct vcc_job *job, struct vcc_cache_unit *u, const char *output)
{
    struct vcc_cache *c = u->c;
    struct stat st;
    if (stat(output, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (u->uncaptured) return 0;   /* its warnings were not captured */
    char sub[PATH_MAX + 8], tmp[PATH_MAX + 128], path[PATH_MAX + 160];
    snprintf(sub, sizeof sub, "%s/%.2s", c->dir, u->key);
    if (vigil_cache_mkdirs(sub) != 0) return -1;
    tag_directory(c->dir);
    static unsigned counter;
    snprintf(tmp, sizeof tmp, "%s/%s.tmp.%ld.%u", sub, u->key, (long)getpid(), counter++);
    if (mkdir(tmp, 0777) != 0) return -1;
    int64_t total = -1, object_size, stderr_size = 0;
    char object_hex[65], stderr_hex[65];
    int fd;

    snprintf(path, sizeof path, "%s/%s", tmp, VIGIL_CACHE_OBJECT);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) goto out;
    object_size = copy_hashing(output, fd, object_hex);
    if (close(fd) != 0 || object_size < 0) goto out;

    snprintf(path, sizeof path, "%s/%s", tmp, VIGIL_CACHE_STDERR);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) goto out;
    if (u->err_path) {
        stderr_size = copy_hashing(u->err_path, fd, stderr_hex);
    } else {
        struct vigil_sha256 h;
        unsigned char digest[32];
        vigil_sha256_init(&h);
        vigil_sha256_final(&h, digest);
        vigil_sha256_hex(digest, stderr_hex);
    }
    if (close(fd) != 0 || stderr_size < 0) goto out;

    struct strbuf m = {0};
    char abs[PATH_MAX];
    const char *path_given = u->in->path;
    if (!realpath(path_given, abs)) snprintf(abs, sizeof abs, "%s/%s", c->cwd, path_given);
    sb_printf(&m, "%s\nkey %s\nsource ", VIGIL_CACHE_ENTRY_MAGIC, u->key);
    sb_text(&m, path_given);
    sb_add(&m, "\nsource_abs ", 12);
    sb_text(&m, abs);
    sb_add(&m, "\ncwd ", 5);
    sb_text(&m, c->cwd);
    sb_add(&m, "\nflags ", 7);
    sb_text(&m, u->flags.s ? u->flags.s : "");
    sb_printf(&m, "\ncreated %lld\ncompiler %s %s %s\n", (long long)time(NULL), vcc_version, vcc_build_id,
              LLVM_VERSION_STRING);
    sb_printf(&m, "object %lld %s\nstderr %lld %s\n", (long long)object_size, object_hex, (long long)stderr_size,
              stderr_hex);
    sb_add(&m, "module ", 7);
    sb_text(&m, u->module.len ? u->module.s : "unknown");
    sb_add(&m, "\n", 1);
    if (u->functions.len) sb_add(&m, u->functions.s, u->functions.len);
    struct vigil_sha256 h;
    unsigned char digest[32];
    char sum[65];
    vigil_sha256_init(&h);
    vigil_sha256_update(&h, m.s, m.len);
    vigil_sha256_final(&h, digest);
    vigil_sha256_hex(digest, sum);
    sb_printf(&m, "checksum %s\n", sum);
    snprintf(path, sizeof path, "%s/%s", tmp, VIGIL_CACHE_META);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    int ok = fd >= 0 && write_all(fd, m.s, m.len) == 0;
    if (fd >= 0 && close(fd) != 0) ok = 0;
    int64_t meta_size = (int64_t)m.len;
    free(m.s);
    if (!ok) goto out;
    if (rename(tmp, u->entry) != 0) {
        /* ENOTEMPTY/EEXIST: another compile stored this key first (make -j) */
        total = errno == ENOTEMPTY || errno == EEXIST ? 0 : -1;
        goto out;
    }
    return object_size + stderr_size + meta_size;
out:
    vigil_cache_remove(tmp);
    (void)job;
    return total;
}

void vcc_cache_end(struct vcc_job *job, struct vcc_cache_unit *u, int status, const char *output)
{
    if (!u) return;
    struct vcc_cache *c = u->c;
    int64_t stored = 0;
    if (u->hit) {
        u->delta[VIGIL_CACHE_HITS]++;
        if (u->direct_hit) u->delta[VIGIL_CACHE_DIRECT_HITS]++;
        else write_manifest(job, u);
    } else {
        u->delta[VIGIL_CACHE_MISSES]++;
        if (status == 0) {
            stored = store(job, u, output);
            if (stored >= 0 && access(u->entry, F_OK) == 0) write_manifest(job, u);
            if (stored > 0) {
                u->delta[VIGIL_CACHE_STORED]++;
                u->delta[VIGIL_CACHE_SIZE] += stored;
                note(job, "stored %.16s (%lld bytes) for %s", u->key, (long long)stored, u->in->path);
            } else if (stored < 0) {
                note(job, "cannot store an entry in %s: %s", c->dir, strerror(errno));
                u->delta[VIGIL_CACHE_ERRORS]++;
            }
        }
    }
    struct vigil_cache_stats after;
    if (vigil_cache_mkdirs(c->dir) == 0 && vigil_cache_stats_add(c->dir, u->delta, NULL, &after) == 0 &&
        stored > 0 && c->max_size && after.v[VIGIL_CACHE_SIZE] > c->max_size) {
        uint64_t kept = 0, entries = 0, removed = 0;
        if (vigil_cache_evict(c->dir, c->max_size * VIGIL_CACHE_EVICT_TO / 100, &kept, &entries, &removed) == 0) {
            int64_t delta[VIGIL_CACHE_NCOUNTERS] = {0};
            delta[VIGIL_CACHE_EVICTED] = (int64_t)removed;
            vigil_cache_stats_add(c->dir, delta, &kept, NULL);
            note(job, "evicted %llu entries: %llu left, %llu bytes", (unsigned long long)removed,
                 (unsigned long long)entries, (unsigned long long)kept);
        }
    }
    if (u->err_fd >= 0) close(u->err_fd);
    free(u->err_path);
    free(u->dep_path);
    free(u->man.s);
    free(u->flags.s);
    free(u->module.s);
    free(u->functions.s);
    free(u);
}
