/* vigil cache: the instrumentation cache of vigil-cc (docs/cache.md; format: common/cachefmt.h).
 *   vigil cache [--dir DIR] [--json]          counters, entries and size
 *   vigil cache clear [--dir DIR] [--stats]   remove every entry (--stats: zero the counters)
 *   vigil cache show [--dir DIR] FILE.c       the metadata of the entries made from FILE.c */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cachefmt.h"
#include "cmd.h"
#include "json.h"

/* The directory vigil-cc uses: --dir, else VIGIL_CC_CACHE_DIR, else the default. */
static int cache_dir(const char *cmd, const char *given, char *dir, size_t len)
{
    if (vigil_cache_dir(given ? given : getenv("VIGIL_CC_CACHE_DIR"), dir, len) != 0)
        return cmd_error(cmd, "no cache directory: set VIGIL_CC_CACHE_DIR or HOME, or give --dir DIR");
    return 0;
}

struct totals {
    uint64_t entries, bytes;
};

static int add_entry(const struct vigil_cache_entry *e, void *arg)
{
    struct totals *t = arg;
    t->entries++;
    t->bytes += e->bytes;
    return 0;
}

static void print_line(const char *name, unsigned long long value, const char *comment)
{
    printf("%-16s %llu%s%s\n", name, value, comment ? "   " : "", comment ? comment : "");
}

static int summary(const char *cmd, const char *dir, int json)
{
    struct vigil_cache_stats s;
    if (vigil_cache_stats_read(dir, &s) != 0)
        return cmd_error(cmd, "cannot read %s/stats: %s", dir, strerror(errno));
    struct totals t = {0};
    if (vigil_cache_walk(dir, add_entry, &t) < 0)
        return cmd_error(cmd, "cannot read %s: %s", dir, strerror(errno));
    const char *limit_text = getenv("VIGIL_CC_CACHE_MAX_SIZE");
    uint64_t limit = 0;
    if (!limit_text || !*limit_text || vigil_cache_parse_size(limit_text, &limit) != 0) {
        limit_text = VIGIL_CACHE_DEFAULT_MAX;
        vigil_cache_parse_size(limit_text, &limit);
    }
    uint64_t looked = s.v[VIGIL_CACHE_HITS] + s.v[VIGIL_CACHE_MISSES];
    if (json) {
        struct vigil_json j;
        vigil_json_init(&j, stdout, 1);
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "directory");
        vigil_json_string(&j, dir);
        vigil_json_key(&j, "entries");
        vigil_json_uint(&j, t.entries);
        vigil_json_key(&j, "bytes");
        vigil_json_uint(&j, t.bytes);
        vigil_json_key(&j, "limit_bytes");
        vigil_json_uint(&j, limit);
        for (int c = 0; c < VIGIL_CACHE_NCOUNTERS; c++) {
            if (c == VIGIL_CACHE_SIZE) continue;   /* the entries' bytes, counted just now */
            vigil_json_key(&j, vigil_cache_counter_name((enum vigil_cache_counter)c));
            vigil_json_uint(&j, s.v[c]);
        }
        vigil_json_key(&j, "hit_rate");
        if (looked) vigil_json_double(&j, (double)s.v[VIGIL_CACHE_HITS] / (double)looked);
        else vigil_json_null(&j);
        vigil_json_object_end(&j);
        vigil_json_finish(&j);
        return 0;
    }
    char size[32], max[32];
    vigil_cache_format_size(t.bytes, size, sizeof size);
    vigil_cache_format_size(limit, max, sizeof max);
    printf("%-16s %s\n", "cache directory", dir);
    print_line("entries", t.entries, NULL);
    if (limit) printf("%-16s %s (limit %s, VIGIL_CC_CACHE_MAX_SIZE=%s)\n", "size", size, max, limit_text);
    else printf("%-16s %s (no limit: VIGIL_CC_CACHE_MAX_SIZE=0)\n", "size", size);
    print_line("hits", s.v[VIGIL_CACHE_HITS], "compiles served from the cache: no transform, no code generation");
    print_line("  direct", s.v[VIGIL_CACHE_DIRECT_HITS], "of them found by a manifest, without the preprocessor (direct mode)");
    print_line("misses", s.v[VIGIL_CACHE_MISSES], "compiles that found no entry, then compiled");
    if (looked)
        printf("%-16s %.1f%%\n", "hit rate", 100.0 * (double)s.v[VIGIL_CACHE_HITS] / (double)looked);
    print_line("stored", s.v[VIGIL_CACHE_STORED], NULL);
    print_line("uncached", s.v[VIGIL_CACHE_UNCACHED], "compiles the cache does not take (-S, -MJ, a failed preprocessor run)");
    print_line("damaged", s.v[VIGIL_CACHE_DAMAGED], "entries or manifests found damaged: compiled or preprocessed again, replaced");
    print_line("evicted", s.v[VIGIL_CACHE_EVICTED], "entries removed past the size limit, least recently used first");
    print_line("errors", s.v[VIGIL_CACHE_ERRORS], "entries that could not be written or read (disk full, permissions)");
    return 0;
}

static int clear(const char *cmd, const char *dir, int zero_stats)
{
    struct totals t = {0};
    uint64_t kept = 0, left = 0, removed = 0;
    struct stat st;
    if (stat(dir, &st) != 0 && errno == ENOENT) {
        printf("removed 0 entries from %s (it does not exist)\n", dir);
        return 0;
    }
    if (vigil_cache_walk(dir, add_entry, &t) < 0)
        return cmd_error(cmd, "cannot read %s: %s", dir, strerror(errno));
    /* an eviction down to nothing: every entry, and what interrupted writes left */
    if (vigil_cache_evict(dir, 0, &kept, &left, &removed) != 0)
        return cmd_error(cmd, "cannot clear %s: %s", dir, strerror(errno));
    if (left)
        fprintf(stderr, "vigil %s: %llu entries could not be removed (%s)\n", cmd, (unsigned long long)left,
                strerror(errno));
    t.entries = removed;
    if (t.bytes > kept) t.bytes -= kept;
    /* the size counter follows; the others stay unless --stats */
    int64_t zero[VIGIL_CACHE_NCOUNTERS] = {0};
    uint64_t none = 0;
    struct vigil_cache_stats s;
    if (vigil_cache_stats_read(dir, &s) == 0 && (zero_stats || s.v[VIGIL_CACHE_SIZE])) {
        if (zero_stats)
            for (int c = 0; c < VIGIL_CACHE_NCOUNTERS; c++) zero[c] = -(int64_t)s.v[c];
        if (vigil_cache_stats_add(dir, zero, left ? &kept : &none, NULL) != 0)
            return cmd_error(cmd, "cannot write %s/stats: %s", dir, strerror(errno));
    }
    char size[32];
    vigil_cache_format_size(t.bytes, size, sizeof size);
    printf("removed %llu entries (%s) from %s%s\n", (unsigned long long)t.entries, size, dir,
           zero_stats ? "; counters zeroed" : "");
    return 0;
}

/* ---- show ---- */

struct match {
    char key[65];
    char path[4096];
    time_t last_used;
    uint64_t bytes;
};

struct show {
    const char *file;        /* as the user gave it */
    char real[PATH_MAX];     /* its real path, or "" */
    struct match *v;
    size_t n, cap, total;
    size_t damaged;
};

static int ends_with_path(const char *path, const char *tail)
{
    size_t n = strlen(path), m = strlen(tail);
    return m && m <= n && !strcmp(path + n - m, tail) && (m == n || path[n - m - 1] == '/');
}

static int matches(const struct show *s, const char *meta)
{
    char source[4096], abs[4096];
    if (vigil_cache_meta_field(meta, "source", source, sizeof source) != 0) return 0;
    if (vigil_cache_meta_field(meta, "source_abs", abs, sizeof abs) != 0) abs[0] = 0;
    const char *file = s->file;
    while (file[0] == '.' && file[1] == '/') file += 2;
    if (s->real[0] && !strcmp(s->real, abs)) return 1;
    if (!strcmp(file, source)) return 1;
    return file[0] != '/' && ends_with_path(abs, file);
}

static int find_matches(const struct vigil_cache_entry *e, void *arg)
{
    struct show *s = arg;
    char err[256];
    s->total++;
    char *meta = vigil_cache_read_meta(e->path, NULL, err, sizeof err);
    if (!meta) {
        if (errno != ENOENT) s->damaged++;
        return 0;
    }
    if (matches(s, meta)) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 8;
            struct match *v = realloc(s->v, cap * sizeof *v);
            if (!v) { free(meta); return 1; }
            s->v = v;
            s->cap = cap;
        }
        struct match *m = &s->v[s->n++];
        memcpy(m->key, e->key, sizeof m->key);
        snprintf(m->path, sizeof m->path, "%s", e->path);
        m->last_used = e->last_used;
        m->bytes = e->bytes;
    }
    free(meta);
    return 0;
}

static int newest_first(const void *a, const void *b)
{
    const struct match *x = a, *y = b;
    if (x->last_used != y->last_used) return x->last_used > y->last_used ? -1 : 1;
    return strcmp(x->key, y->key);
}

static void format_time(time_t t, char *out, size_t len)
{
    struct tm tm;
    if (!localtime_r(&t, &tm) || !strftime(out, len, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(out, len, "%lld", (long long)t);
}

/* The value of key=VALUE in a line of words, or "?" */
static const char *word_value(const char *line, const char *key, char *out, size_t len)
{
    size_t n = strlen(key);
    for (const char *p = line; (p = strstr(p, key)); p += n)
        if ((p == line || p[-1] == ' ') && p[n] == '=') {
            size_t v = strcspn(p + n + 1, " \n");
            if (v >= len) v = len - 1;
            memcpy(out, p + n + 1, v);
            out[v] = 0;
            return out;
        }
    snprintf(out, len, "?");
    return out;
}

static void print_entry(const struct match *m, const char *meta)
{
    char source[4096], cwd[4096], flags[8192], compiler[256], object[160], errs[160], module[1024], when[64], used[64];
    const struct { const char *name; char *out; size_t len; } fields[] = {
        {"source", source, sizeof source}, {"cwd", cwd, sizeof cwd}, {"flags", flags, sizeof flags},
        {"compiler", compiler, sizeof compiler}, {"object", object, sizeof object}, {"stderr", errs, sizeof errs},
        {"module", module, sizeof module}, {"created", when, sizeof when},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (vigil_cache_meta_field(meta, fields[i].name, fields[i].out, fields[i].len) != 0)
            snprintf(fields[i].out, fields[i].len, "?");
    format_time((time_t)strtoll(when, NULL, 10), when, sizeof when);
    format_time(m->last_used, used, sizeof used);
    char version[64] = "?", build[64] = "?", llvm[64] = "?";
    sscanf(compiler, "%63s %63s %63s", version, build, llvm);
    printf("entry %s\n", m->key);
    printf("  source    %s  (compiled in %s)\n", source, cwd);
    printf("  flags     %s\n", flags[0] ? flags : "(none)");
    printf("  made      %s, last used %s\n", when, used);
    printf("  compiler  vigil-cc %s (build %s), LLVM %s\n", version, build, llvm);
    printf("  object    %lld bytes; stored warnings: %lld bytes\n", strtoll(object, NULL, 10), strtoll(errs, NULL, 10));
    char v[7][32];
    if (!strncmp(module, "uninstrumented", 14)) {
        printf("  module    compiled uninstrumented:%s\n", module + 14);
    } else {
        printf("  module    %s functions: %s instrumented, %s skipped; %s sites, %s dispatch checks, %s probes; "
               "%s with an outlined instrumented copy\n",
               word_value(module, "functions", v[0], 32), word_value(module, "instrumented", v[1], 32),
               word_value(module, "skipped", v[2], 32), word_value(module, "sites", v[3], 32),
               word_value(module, "checks", v[4], 32), word_value(module, "probes", v[5], 32),
               word_value(module, "outlined", v[6], 32));
    }
    int header = 0;
    for (const char *line = meta; line && *line;) {
        const char *end = strchr(line, '\n');
        if (!strncmp(line, "function ", 9)) {
            if (!header++)
                printf("  %-32s %-15s %-40s %7s %7s %7s\n", "function", "how", "instrumented copy", "sites", "checks",
                       "probes");
            char name[512] = "?", how[64] = "?", copy[600] = "?", linebuf[2048];
            size_t n = end ? (size_t)(end - line) : strlen(line);
            if (n >= sizeof linebuf) n = sizeof linebuf - 1;
            memcpy(linebuf, line, n);
            linebuf[n] = 0;
            sscanf(linebuf + 9, "%511s %63s %599s", name, how, copy);
            const char *reason = strstr(linebuf, " reason=");
            printf("  %-32s %-15s %-40s %7s %7s %7s%s%s\n", name, how, strcmp(copy, "-") ? copy : !strcmp(how, "skipped") ? "(none)" : "(in the function)",
                   word_value(linebuf, "sites", v[0], 32), word_value(linebuf, "checks", v[1], 32),
                   word_value(linebuf, "probes", v[2], 32), reason ? "  " : "", reason ? reason + 1 : "");
        }
        line = end ? end + 1 : NULL;
    }
}

static int show(const char *cmd, const char *dir, const char *file)
{
    struct show s = {.file = file};
    if (!realpath(file, s.real)) s.real[0] = 0;
    if (vigil_cache_walk(dir, find_matches, &s) < 0)
        return cmd_error(cmd, "cannot read %s: %s", dir, strerror(errno));
    if (s.n == 0) {
        free(s.v);
        return cmd_error(cmd, "no cache entry was made from %s (%zu entries in %s)", file, s.total, dir);
    }
    qsort(s.v, s.n, sizeof *s.v, newest_first);
    for (size_t i = 0; i < s.n; i++) {
        char err[256];
        char *meta = vigil_cache_read_meta(s.v[i].path, NULL, err, sizeof err);
        if (i) putchar('\n');
        if (!meta) {
            printf("entry %s: %s\n", s.v[i].key, err);
            continue;
        }
        print_entry(&s.v[i], meta);
        free(meta);
    }
    if (s.damaged)
        printf("\nnote: %zu damaged entries were skipped (vigil-cc replaces one when it meets it)\n", s.damaged);
    free(s.v);
    return 0;
}

int cmd_cache(int argc, char **argv)
{
    const char *cmd = argv[0], *dir_arg = NULL, *action = NULL, *file = NULL;
    int json = 0, zero_stats = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--dir")) {
            if (++i >= argc) return cmd_usage_error(cmd, "--dir needs a directory");
            dir_arg = argv[i];
        } else if (!strncmp(a, "--dir=", 6)) {
            dir_arg = a + 6;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--stats")) {
            zero_stats = 1;
        } else if (a[0] == '-' && a[1]) {
            return cmd_usage_error(cmd, "unknown option \"%s\"", a);
        } else if (!action) {
            action = a;
        } else if (!file) {
            file = a;
        } else {
            return cmd_usage_error(cmd, "unexpected \"%s\"", a);
        }
    }
    if (action && strcmp(action, "clear") && strcmp(action, "show"))
        return cmd_usage_error(cmd, "unknown action \"%s\"; expected clear or show", action);
    if (action && !strcmp(action, "show") && !file) return cmd_usage_error(cmd, "show needs a source file");
    if (file && strcmp(action, "show")) return cmd_usage_error(cmd, "unexpected \"%s\"", file);
    if (json && action) return cmd_usage_error(cmd, "--json goes with `vigil cache` alone");
    if (zero_stats && (!action || strcmp(action, "clear")))
        return cmd_usage_error(cmd, "--stats goes with `vigil cache clear`");
    char dir[4096];
    int rc = cache_dir(cmd, dir_arg, dir, sizeof dir);
    if (rc) return rc;
    if (!action) return summary(cmd, dir, json);
    if (!strcmp(action, "clear")) return clear(cmd, dir, zero_stats);
    return show(cmd, dir, file);
}
