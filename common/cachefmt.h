/* The instrumentation cache on disk: written by vigil-cc (compiler/cache.c), read and cleared by
 * `vigil cache` (cmd/cache.c). docs/cache.md describes the design; this is the format.
 *
 * Layout of the cache directory (VIGIL_CC_CACHE_DIR; default $XDG_CACHE_HOME/vigil, else
 * ~/.cache/vigil):
 *   CACHEDIR.TAG          the standard tag: backup tools skip the directory
 *   stats                 counters, one "name value" line each (vigil_cache_stats_*); replaced
 *                         by rename under an flock of stats.lock
 *   stats.lock, cleanup.lock   empty lock files (flock)
 *   XY/KEY/               one entry: KEY is the 64 hex digits of its SHA-256 key, XY its first
 *                         two. An entry is made in XY/KEY.tmp.PID.N/ and renamed into place (a
 *                         directory rename is atomic: a reader sees all of an entry or none);
 *                         removed by a rename to XY/KEY.del.PID.N/ first, then deleted.
 *     object.o            the object file vigil-cc produced
 *     stderr.txt          what the front and back ends printed (warnings), replayed on a hit
 *     meta.txt            metadata, text, "name value" lines; its last line is "checksum HEX",
 *                         the SHA-256 of every byte before that line; it holds the size and
 *                         SHA-256 of object.o and stderr.txt. Its modification time is the
 *                         entry's last use (a hit touches it): eviction removes the least
 *                         recently used entries first.
 *
 * meta.txt lines (in this order; later versions may add names, readers skip unknown ones):
 *   vigil-cache-entry 1
 *   key HEX
 *   source PATH               the source as given to the compiler (after base-dir rewriting)
 *   source_abs PATH           its absolute path when the entry was made
 *   cwd PATH                  the directory of that compilation
 *   flags ARGS                the arguments that went into the key (for people, not parsed)
 *   created UNIXTIME
 *   compiler VERSION BUILDID LLVMVERSION
 *   object SIZE HEX           size and SHA-256 of object.o
 *   stderr SIZE HEX           size and SHA-256 of stderr.txt
 *   module k=v ...            the transform's totals: functions, instrumented, skipped, sites,
 *                             checks, probes, outlined (or "module uninstrumented REASON")
 *   function NAME HOW COPY sites=N checks=N probes=N    one line per function with a body;
 *                             HOW: transfer, outlined, outlined-entry, cloned or skipped; COPY:
 *                             the instrumented copy's symbol ("-" when it shares the function's
 *                             body or there is none); a skipped function ends with reason=TEXT
 *   checksum HEX
 *
 *   XY/DKEY.manifest      direct mode: what a compile with the direct key DKEY (everything of
 *                         the key but the preprocessed source, plus the source's contents and
 *                         the dependency-file options) read, and the key it gave. A file,
 *                         written to DKEY.manifest.tmp.PID and renamed over the last one; a
 *                         direct hit touches it. Text, "name value" lines:
 *     vigil-cc-manifest 1
 *     key HEX                 the entry's key (the preprocessed source's)
 *     file SIZE HEX PATH      a file the preprocessor read: its size and SHA-256
 *     absent PATH             a place where a header of that name could have been found first
 *                             (another include directory), or an include directory, that did not
 *                             exist: once it does, the manifest no longer holds
 *     present PATH            such a place that did exist, unused (later in the search order,
 *                             or asked by __has_include): the manifest holds while it exists
 *     deps SIZE               the dependency file (-MD) the preprocessor wrote: SIZE bytes follow
 *                             this line, then a newline (written again on a direct hit)
 *     checksum HEX            the SHA-256 of every byte before this line
 */
#ifndef VIGIL_CACHEFMT_H
#define VIGIL_CACHEFMT_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define VIGIL_CACHE_ENTRY_MAGIC "vigil-cache-entry 1"
#define VIGIL_CACHE_OBJECT "object.o"
#define VIGIL_CACHE_STDERR "stderr.txt"
#define VIGIL_CACHE_META "meta.txt"
#define VIGIL_CACHE_DEFAULT_MAX "5G"
/* Eviction brings the cache down to this share of its limit (in percent), so that it does not
 * run again at the next store. */
#define VIGIL_CACHE_EVICT_TO 90

/* ---- SHA-256 (FIPS 180-4) ---- */
struct vigil_sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char block[64];
    size_t used;
};
void vigil_sha256_init(struct vigil_sha256 *s);
void vigil_sha256_update(struct vigil_sha256 *s, const void *data, size_t len);
void vigil_sha256_final(struct vigil_sha256 *s, unsigned char digest[32]);
/* digest as 64 lowercase hex digits and a NUL */
void vigil_sha256_hex(const unsigned char digest[32], char hex[65]);

/* ---- places ---- */
/* The cache directory: setting if not empty, else $XDG_CACHE_HOME/vigil, else $HOME/.cache/vigil.
 * Returns 0, or -1 when none can be named (no HOME). */
int vigil_cache_dir(const char *setting, char *out, size_t len);
/* mkdir -p; 0 or -1 (errno set). */
int vigil_cache_mkdirs(const char *path);
/* "5G", "500M", "64K", "1T", "123" (bytes; K, M, G, T are powers of 1024; "0": no limit).
 * Returns 0 or -1 when the text is not a size. */
int vigil_cache_parse_size(const char *text, uint64_t *bytes);
/* "1.2 GB", "340.0 KB", "12 bytes" (powers of 1024) */
void vigil_cache_format_size(uint64_t bytes, char *out, size_t len);

/* ---- counters ---- */
enum vigil_cache_counter {
    VIGIL_CACHE_HITS,       /* compiles served from the cache */
    VIGIL_CACHE_MISSES,     /* compiles that looked and compiled (then stored) */
    VIGIL_CACHE_UNCACHED,   /* compiles the cache could not take (-S, no preprocessor output, ...) */
    VIGIL_CACHE_DAMAGED,    /* entries found damaged (a miss, a message, the entry removed) */
    VIGIL_CACHE_STORED,     /* entries written */
    VIGIL_CACHE_EVICTED,    /* entries removed to stay under the size limit */
    VIGIL_CACHE_ERRORS,     /* cache operations that failed (a full disk, permissions): compiled without */
    VIGIL_CACHE_SIZE,       /* bytes of all entries, as last counted (stores add, eviction recounts) */
    VIGIL_CACHE_DIRECT_HITS, /* hits found by a manifest, without running the preprocessor (also in hits) */
    VIGIL_CACHE_NCOUNTERS
};
struct vigil_cache_stats {
    uint64_t v[VIGIL_CACHE_NCOUNTERS];
};
const char *vigil_cache_counter_name(enum vigil_cache_counter c);  /* "hits", ... as in the file */
/* Reads DIR/stats (all zero when it does not exist). 0, or -1 when it exists but is unreadable. */
int vigil_cache_stats_read(const char *dir, struct vigil_cache_stats *s);
/* Adds delta[] to the counters (a counter never goes below 0); when set_size is not NULL the
 * size counter becomes *set_size instead; when after is not NULL it gets the new counters.
 * Under an flock, replaced by rename. 0 or -1. */
int vigil_cache_stats_add(const char *dir, const int64_t delta[VIGIL_CACHE_NCOUNTERS], const uint64_t *set_size,
                          struct vigil_cache_stats *after);

/* ---- entries ---- */
struct vigil_cache_entry {
    char key[65];
    char path[4096];        /* DIR/XY/KEY */
    uint64_t bytes;         /* apparent size of its files */
    time_t last_used;       /* meta.txt's modification time */
    long last_used_nsec;    /* ... its nanoseconds */
};
/* Calls fn for every complete entry (a directory XY/KEY with 64 hex digits; temporary and
 * removed ones are skipped); a non-zero return stops the walk. Returns the number visited, or
 * -1 when DIR cannot be read. */
int vigil_cache_walk(const char *dir, int (*fn)(const struct vigil_cache_entry *e, void *arg), void *arg);
/* Removes an entry directory: renamed aside first, so that no reader sees half of it. 0 or -1. */
int vigil_cache_remove(const char *entry_path);
/* Removes entries, least recently used first, until the cache holds at most target bytes;
 * also leftovers of interrupted writes older than an hour. Reports what stays and what went. */
int vigil_cache_evict(const char *dir, uint64_t target, uint64_t *kept_bytes, uint64_t *kept_entries,
                      uint64_t *removed);

/* Reads an entry's meta.txt into a malloc'd NUL-terminated buffer and checks it: the magic line
 * first, the checksum line last and matching. Returns the buffer, or NULL with a reason in err
 * (errno ENOENT when the file is not there: the entry went away, not damaged). */
char *vigil_cache_read_meta(const char *entry_path, size_t *len, char *err, size_t errlen);
/* The value of the first "name value" line of a meta text, copied into out; 0, or -1 if none. */
int vigil_cache_meta_field(const char *meta, const char *name, char *out, size_t len);

/* ---- direct-mode manifests ---- */
#define VIGIL_CACHE_MANIFEST_MAGIC "vigil-cc-manifest 1"
#define VIGIL_CACHE_MANIFEST_SUFFIX ".manifest"
enum vigil_manifest_kind { VIGIL_MANIFEST_FILE, VIGIL_MANIFEST_ABSENT, VIGIL_MANIFEST_PRESENT };
struct vigil_manifest_item {
    enum vigil_manifest_kind kind;
    int64_t size;              /* FILE */
    char hex[65];              /* FILE: its SHA-256 */
    const char *path;          /* points into the parsed text */
};
struct vigil_manifest {
    char key[65];
    int has_deps;
    const char *deps;          /* has_deps: deps_len bytes, in the parsed text */
    size_t deps_len;
    struct vigil_manifest_item *items;
    size_t nitems;
};
/* Parses a manifest's text (len bytes; the buffer is modified: paths end in NULs). Returns 0,
 * or -1 with what is wrong in err ("line N: expected ..."). vigil_manifest_free frees items. */
int vigil_manifest_parse(char *text, size_t len, struct vigil_manifest *m, char *err, size_t errlen);
void vigil_manifest_free(struct vigil_manifest *m);

#endif
