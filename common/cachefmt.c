/* The instrumentation cache on disk (see cachefmt.h): SHA-256, the directory's places, the
 * counters, walking, removing and evicting entries, reading an entry's metadata. */
#include "cachefmt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- SHA-256, from FIPS 180-4 section 6.2 ---- */

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_block_portable(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d;
    h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>

/* The same compression with the x86 SHA extensions (sha256rnds2 does two rounds; sha256msg1
 * and sha256msg2 extend the message schedule), four rounds per step. The state is kept as the
 * instructions want it: ABEF in one register, CDGH in the other. About 8 times the portable
 * loop's speed, which a cache hit spends most of its instructions in (hashing the object it
 * verifies and the headers of a manifest). */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha256_block_shani(uint32_t h[8], const unsigned char *p)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i abcd = _mm_loadu_si128((const __m128i *)&h[0]);   /* lanes A B C D */
    __m128i efgh = _mm_loadu_si128((const __m128i *)&h[4]);   /* lanes E F G H */
    __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);
    __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);
    __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);            /* (from the high lane down) A B E F */
    __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);         /* C D G H */
    __m128i abef0 = abef, cdgh0 = cdgh, w[4];
    for (int r = 0; r < 16; r++) {
        __m128i m;
        if (r < 4) {
            m = w[r] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * r)), bswap);
        } else {
            /* W[t] for t = 4r..4r+3: W[t-16] + s0(W[t-15]), + W[t-7], + s1(W[t-2]) */
            __m128i t = _mm_sha256msg1_epu32(w[r % 4], w[(r + 1) % 4]);
            t = _mm_add_epi32(t, _mm_alignr_epi8(w[(r + 3) % 4], w[(r + 2) % 4], 4));
            m = w[r % 4] = _mm_sha256msg2_epu32(t, w[(r + 3) % 4]);
        }
        __m128i wk = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&sha256_k[4 * r]));
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

static void sha256_block_first(uint32_t h[8], const unsigned char *p);
/* Which of the two: decided at the first block (CPUID), then fixed. Written once per process
 * (a race writes the same value). */
static void (*sha256_block)(uint32_t h[8], const unsigned char *p) = sha256_block_first;

static void sha256_block_first(uint32_t h[8], const unsigned char *p)
{
    unsigned a, b, c, d, sse41 = 0, ssse3 = 0, sha = 0;
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        sse41 = (c >> 19) & 1;
        ssse3 = (c >> 9) & 1;
    }
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) sha = (b >> 29) & 1;
    const char *off = getenv("VIGIL_SHA256_PORTABLE");   /* tests compare the two */
    sha256_block = sse41 && ssse3 && sha && !(off && *off == '1') ? sha256_block_shani : sha256_block_portable;
    sha256_block(h, p);
}
#else
#define sha256_block sha256_block_portable
#endif

void vigil_sha256_init(struct vigil_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->used = 0;
}

void vigil_sha256_update(struct vigil_sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->bytes += len;
    if (s->used) {
        size_t take = 64 - s->used < len ? 64 - s->used : len;
        memcpy(s->block + s->used, p, take);
        s->used += take;
        p += take;
        len -= take;
        if (s->used < 64) return;
        sha256_block(s->h, s->block);
        s->used = 0;
    }
    for (; len >= 64; p += 64, len -= 64)
        sha256_block(s->h, p);
    memcpy(s->block, p, len);
    s->used = len;
}

void vigil_sha256_final(struct vigil_sha256 *s, unsigned char digest[32])
{
    uint64_t bits = s->bytes * 8;
    s->block[s->used++] = 0x80;
    if (s->used > 56) {
        memset(s->block + s->used, 0, 64 - s->used);
        sha256_block(s->h, s->block);
        s->used = 0;
    }
    memset(s->block + s->used, 0, 56 - s->used);
    for (int i = 0; i < 8; i++)
        s->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_block(s->h, s->block);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (unsigned char)(s->h[i] >> 24);
        digest[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        digest[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        digest[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void vigil_sha256_hex(const unsigned char digest[32], char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = 0;
}

/* ---- places ---- */

int vigil_cache_dir(const char *setting, char *out, size_t len)
{
    int n;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (setting && *setting) n = snprintf(out, len, "%s", setting);
    else if (xdg && xdg[0] == '/') n = snprintf(out, len, "%s/vigil", xdg);
    else if (home && *home) n = snprintf(out, len, "%s/.cache/vigil", home);
    else return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int vigil_cache_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            *p = c;
            if (!c) break;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int vigil_cache_parse_size(const char *text, uint64_t *bytes)
{
    if (!text || !*text) return -1;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || v < 0) return -1;
    double scale = 1;
    switch (*end) {
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1024.0 * 1024; end++; break;
    case 'g': case 'G': scale = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': scale = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (scale > 1 && (*end == 'i' || *end == 'I')) end++;   /* "5GiB" */
    if (scale > 1 && (*end == 'b' || *end == 'B')) end++;   /* "5GB" */
    if (*end) return -1;
    *bytes = (uint64_t)(v * scale);
    return 0;
}

void vigil_cache_format_size(uint64_t bytes, char *out, size_t len)
{
    static const char *units[] = {"KB", "MB", "GB", "TB"};
    if (bytes < 1024) {
        snprintf(out, len, "%llu bytes", (unsigned long long)bytes);
        return;
    }
    double v = (double)bytes / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    snprintf(out, len, "%.1f %s", v, units[u]);
}

/* ---- counters ---- */

static const char *const counter_names[VIGIL_CACHE_NCOUNTERS] = {
    "hits", "misses", "uncached", "damaged", "stored", "evicted", "errors", "size", "direct_hits",
};

const char *vigil_cache_counter_name(enum vigil_cache_counter c)
{
    return (unsigned)c < VIGIL_CACHE_NCOUNTERS ? counter_names[c] : "?";
}

static int path_join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static void parse_stats(const char *text, struct vigil_cache_stats *s)
{
    for (const char *line = text; line && *line;) {
        for (int c = 0; c < VIGIL_CACHE_NCOUNTERS; c++) {
            size_t n = strlen(counter_names[c]);
            if (!strncmp(line, counter_names[c], n) && line[n] == ' ')
                s->v[c] = strtoull(line + n + 1, NULL, 10);
        }
        line = strchr(line, '\n');
        if (line) line++;
    }
}

static char *read_small_file(const char *path, size_t limit, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (used == cap) {
            if (cap >= limit) { free(buf); buf = NULL; errno = EFBIG; break; }
            char *bigger = realloc(buf, cap * 2 + 1);
            if (!bigger) { free(buf); buf = NULL; break; }
            buf = bigger;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + used, cap - used);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) { free(buf); buf = NULL; break; }
        if (got == 0) break;
        used += (size_t)got;
    }
    int saved = errno;
    close(fd);
    errno = saved;
    if (buf) {
        buf[used] = 0;
        if (len) *len = used;
    }
    return buf;
}

int vigil_cache_stats_read(const char *dir, struct vigil_cache_stats *s)
{
    memset(s, 0, sizeof *s);
    char path[4096];
    if (path_join(path, sizeof path, dir, "stats")) return -1;
    char *text = read_small_file(path, 1 << 16, NULL);
    if (!text) return errno == ENOENT ? 0 : -1;
    parse_stats(text, s);
    free(text);
    return 0;
}

int vigil_cache_stats_add(const char *dir, const int64_t delta[VIGIL_CACHE_NCOUNTERS], const uint64_t *set_size,
                          struct vigil_cache_stats *after)
{
    char lock[4096], path[4096], tmp[4200];
    if (path_join(lock, sizeof lock, dir, "stats.lock") || path_join(path, sizeof path, dir, "stats")) return -1;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lfd < 0) return -1;
    while (flock(lfd, LOCK_EX) != 0 && errno == EINTR)
        ;
    struct vigil_cache_stats s;
    int rc = vigil_cache_stats_read(dir, &s);
    if (rc == 0) {
        for (int c = 0; c < VIGIL_CACHE_NCOUNTERS; c++) {
            int64_t d = delta ? delta[c] : 0;
            if (d < 0 && (uint64_t)-d > s.v[c]) s.v[c] = 0;
            else s.v[c] += (uint64_t)d;
        }
        if (set_size) s.v[VIGIL_CACHE_SIZE] = *set_size;
        FILE *f = fopen(tmp, "w");
        if (!f) {
            rc = -1;
        } else {
            for (int c = 0; c < VIGIL_CACHE_NCOUNTERS; c++)
                fprintf(f, "%s %llu\n", counter_names[c], (unsigned long long)s.v[c]);
            if (fclose(f) != 0 || rename(tmp, path) != 0) {
                unlink(tmp);
                rc = -1;
            }
            if (after) *after = s;
        }
    }
    close(lfd);   /* releases the lock */
    return rc;
}

/* ---- entries ---- */

/* The first n characters of s are lowercase hex digits. */
static int hex_prefix(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

/* s is n lowercase hex digits. */
static int is_hex(const char *s, size_t n)
{
    return strlen(s) == n && hex_prefix(s, n);
}

/* Apparent size of the regular files in a directory. */
static uint64_t dir_bytes(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return 0;
    uint64_t total = 0;
    struct dirent *de;
    struct stat st;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    closedir(d);
    return total;
}

static int remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
    return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

int vigil_cache_remove(const char *entry_path)
{
    static unsigned counter;
    char aside[4200];
    snprintf(aside, sizeof aside, "%s.del.%ld.%u", entry_path, (long)getpid(), counter++);
    if (rename(entry_path, aside) != 0)
        return errno == ENOENT ? 0 : -1;   /* someone else removed it */
    return remove_tree(aside);
}

/* Calls fn for each complete entry; with leftovers, also removes what interrupted writes and
 * removals left behind (older than an hour: a write in progress is younger). */
static int walk(const char *dir, int (*fn)(const struct vigil_cache_entry *e, void *arg), void *arg, int leftovers)
{
    DIR *top = opendir(dir);
    if (!top) return errno == ENOENT ? 0 : -1;
    int visited = 0, stop = 0;
    struct dirent *de;
    time_t now = time(NULL);
    while (!stop && (de = readdir(top))) {
        if (!is_hex(de->d_name, 2)) continue;
        char sub[4096];
        if (path_join(sub, sizeof sub, dir, de->d_name)) continue;
        DIR *d = opendir(sub);
        if (!d) continue;
        struct dirent *ke;
        while (!stop && (ke = readdir(d))) {
            struct vigil_cache_entry e;
            if (ke->d_name[0] == '.') continue;
            if (path_join(e.path, sizeof e.path, sub, ke->d_name)) continue;
            if (!is_hex(ke->d_name, 64)) {
                struct stat st;
                if (leftovers && strlen(ke->d_name) > 64 && hex_prefix(ke->d_name, 64) &&
                    (strstr(ke->d_name, ".del.") ||
                     (strstr(ke->d_name, ".tmp.") && lstat(e.path, &st) == 0 && st.st_mtime < now - 3600)))
                    remove_tree(e.path);
                continue;
            }
            memcpy(e.key, ke->d_name, 65);
            char meta[4200];
            struct stat st;
            snprintf(meta, sizeof meta, "%s/%s", e.path, VIGIL_CACHE_META);
            if (stat(meta, &st) == 0) {
                e.last_used = st.st_mtim.tv_sec;
                e.last_used_nsec = st.st_mtim.tv_nsec;
            } else {
                e.last_used = 0;
                e.last_used_nsec = 0;
            }
            e.bytes = dir_bytes(e.path);
            visited++;
            if (fn && fn(&e, arg)) stop = 1;
        }
        closedir(d);
    }
    closedir(top);
    return visited;
}

int vigil_cache_walk(const char *dir, int (*fn)(const struct vigil_cache_entry *e, void *arg), void *arg)
{
    return walk(dir, fn, arg, 0);
}

struct entry_list {
    struct vigil_cache_entry *v;
    size_t n, cap;
};

static int collect(const struct vigil_cache_entry *e, void *arg)
{
    struct entry_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct vigil_cache_entry *v = realloc(l->v, cap * sizeof *v);
        if (!v) return 1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *e;
    return 0;
}

static int older_first(const void *a, const void *b)
{
    const struct vigil_cache_entry *x = a, *y = b;
    if (x->last_used != y->last_used) return x->last_used < y->last_used ? -1 : 1;
    if (x->last_used_nsec != y->last_used_nsec) return x->last_used_nsec < y->last_used_nsec ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Removes the direct-mode manifests (XY/KEY.manifest) last used before (sec, nsec), or all. */
static void prune_manifests(const char *dir, time_t sec, long nsec, int all)
{
    DIR *top = opendir(dir);
    if (!top) return;
    struct dirent *de;
    size_t suffix = strlen(VIGIL_CACHE_MANIFEST_SUFFIX);
    while ((de = readdir(top))) {
        if (!is_hex(de->d_name, 2)) continue;
        char sub[4096];
        if (path_join(sub, sizeof sub, dir, de->d_name)) continue;
        DIR *d = opendir(sub);
        if (!d) continue;
        struct dirent *ke;
        struct stat st;
        while ((ke = readdir(d))) {
            size_t n = strlen(ke->d_name);
            if (n < 64 + suffix || !hex_prefix(ke->d_name, 64) || !strstr(ke->d_name + 64, VIGIL_CACHE_MANIFEST_SUFFIX))
                continue;
            int tmp = strstr(ke->d_name + 64, ".tmp.") != NULL;
            if (fstatat(dirfd(d), ke->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
            if (all || (tmp && st.st_mtime < time(NULL) - 3600) ||
                (!tmp && (st.st_mtim.tv_sec < sec || (st.st_mtim.tv_sec == sec && st.st_mtim.tv_nsec <= nsec))))
                unlinkat(dirfd(d), ke->d_name, 0);
        }
        closedir(d);
    }
    closedir(top);
}

int vigil_cache_evict(const char *dir, uint64_t target, uint64_t *kept_bytes, uint64_t *kept_entries,
                      uint64_t *removed)
{
    char lock[4096];
    if (path_join(lock, sizeof lock, dir, "cleanup.lock")) return -1;
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lfd < 0) return -1;
    while (flock(lfd, LOCK_EX) != 0 && errno == EINTR)
        ;
    struct entry_list l = {0};
    int rc = walk(dir, collect, &l, 1) < 0 ? -1 : 0;
    uint64_t total = 0, gone = 0;
    for (size_t i = 0; i < l.n; i++)
        total += l.v[i].bytes;
    qsort(l.v, l.n, sizeof *l.v, older_first);
    time_t cut_sec = 0;
    long cut_nsec = -1;
    for (size_t i = 0; i < l.n && total > target; i++) {
        if (vigil_cache_remove(l.v[i].path) != 0) continue;
        total -= l.v[i].bytes;
        gone++;
        cut_sec = l.v[i].last_used;
        cut_nsec = l.v[i].last_used_nsec;
    }
    /* manifests used no later than the last entry that went: what they lead to is likely gone */
    prune_manifests(dir, cut_sec, cut_nsec, target == 0);
    if (kept_bytes) *kept_bytes = total;
    if (kept_entries) *kept_entries = l.n - gone;
    if (removed) *removed = gone;
    free(l.v);
    close(lfd);
    return rc;
}

char *vigil_cache_read_meta(const char *entry_path, size_t *len, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", entry_path, VIGIL_CACHE_META);
    size_t n = 0;
    char *text = read_small_file(path, 16u << 20, &n);
    if (!text) {
        int saved = errno;
        snprintf(err, errlen, "cannot read %s: %s", VIGIL_CACHE_META, strerror(saved));
        errno = saved;
        return NULL;
    }
    size_t magic = strlen(VIGIL_CACHE_ENTRY_MAGIC);
    if (n < magic + 1 || memcmp(text, VIGIL_CACHE_ENTRY_MAGIC, magic) != 0 || text[magic] != '\n') {
        snprintf(err, errlen, "%s does not start with \"%s\"", VIGIL_CACHE_META, VIGIL_CACHE_ENTRY_MAGIC);
        goto bad;
    }
    if (strlen(text) != n) {
        snprintf(err, errlen, "%s holds a NUL byte", VIGIL_CACHE_META);
        goto bad;
    }
    /* the last line: "checksum " + 64 hex digits + "\n" */
    size_t last = 9 + 64 + 1;
    if (n < magic + 1 + last || strncmp(text + n - last, "checksum ", 9) != 0 || text[n - 1] != '\n' ||
        text[n - last - 1] != '\n') {
        snprintf(err, errlen, "%s does not end with its checksum line", VIGIL_CACHE_META);
        goto bad;
    }
    struct vigil_sha256 s;
    unsigned char digest[32];
    char hex[65];
    vigil_sha256_init(&s);
    vigil_sha256_update(&s, text, n - last);
    vigil_sha256_final(&s, digest);
    vigil_sha256_hex(digest, hex);
    if (memcmp(hex, text + n - last + 9, 64) != 0) {
        snprintf(err, errlen, "%s does not match its checksum", VIGIL_CACHE_META);
        goto bad;
    }
    if (len) *len = n;
    return text;
bad:
    free(text);
    errno = EBADMSG;
    return NULL;
}

int vigil_cache_meta_field(const char *meta, const char *name, char *out, size_t len)
{
    size_t n = strlen(name);
    for (const char *line = meta; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t linelen = end ? (size_t)(end - line) : strlen(line);
        if (linelen > n && !strncmp(line, name, n) && line[n] == ' ') {
            size_t vlen = linelen - n - 1;
            if (len == 0) return 0;
            if (vlen >= len) vlen = len - 1;
            memcpy(out, line + n + 1, vlen);
            out[vlen] = 0;
            return 0;
        }
        line = end ? end + 1 : NULL;
    }
    return -1;
}

/* ---- direct-mode manifests ---- */

void vigil_manifest_free(struct vigil_manifest *m)
{
    free(m->items);
    m->items = NULL;
    m->nitems = 0;
}

static int manifest_error(char *err, size_t errlen, unsigned line, const char *what)
{
    snprintf(err, errlen, "line %u: expected %s", line, what);
    return -1;
}

int vigil_manifest_parse(char *text, size_t len, struct vigil_manifest *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    size_t magic = strlen(VIGIL_CACHE_MANIFEST_MAGIC), last = 9 + 64 + 1;
    if (len < magic + 1 + last || memcmp(text, VIGIL_CACHE_MANIFEST_MAGIC, magic) != 0 || text[magic] != '\n')
        return manifest_error(err, errlen, 1, "\"" VIGIL_CACHE_MANIFEST_MAGIC "\"");
    if (strncmp(text + len - last, "checksum ", 9) != 0 || text[len - 1] != '\n' || text[len - last - 1] != '\n') {
        snprintf(err, errlen, "no checksum line at the end");
        return -1;
    }
    struct vigil_sha256 s;
    unsigned char digest[32];
    char hex[65];
    vigil_sha256_init(&s);
    vigil_sha256_update(&s, text, len - last);
    vigil_sha256_final(&s, digest);
    vigil_sha256_hex(digest, hex);
    if (memcmp(hex, text + len - last + 9, 64) != 0) {
        snprintf(err, errlen, "the checksum does not match");
        return -1;
    }
    char *p = text + magic + 1, *end = text + len - last;
    unsigned line = 1;
    size_t cap = 0;
    while (p < end) {
        line++;
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) { vigil_manifest_free(m); return manifest_error(err, errlen, line, "a newline"); }
        *nl = 0;
        if (memchr(p, 0, (size_t)(nl - p))) { vigil_manifest_free(m); return manifest_error(err, errlen, line, "text without NUL bytes"); }
        if (!strncmp(p, "key ", 4)) {
            if (strlen(p + 4) != 64 || !is_hex(p + 4, 64)) { vigil_manifest_free(m); return manifest_error(err, errlen, line, "key and 64 hex digits"); }
            memcpy(m->key, p + 4, 65);
        } else if (!strncmp(p, "deps ", 5)) {
            char *q;
            errno = 0;
            unsigned long long n = strtoull(p + 5, &q, 10);
            if (q == p + 5 || *q || errno || m->has_deps || n > (size_t)(end - nl - 1) || nl[1 + n] != '\n') {
                vigil_manifest_free(m);
                return manifest_error(err, errlen, line, "deps SIZE, then SIZE bytes and a newline");
            }
            m->has_deps = 1;
            m->deps = nl + 1;
            m->deps_len = (size_t)n;
            for (size_t i = 0; i < n; i++) if (m->deps[i] == '\n') line++;
            nl = nl + 1 + n;
            *nl = 0;
        } else {
            struct vigil_manifest_item it = {0};
            char *q = p;
            if (!strncmp(q, "file ", 5)) {
                q += 5;
                it.kind = VIGIL_MANIFEST_FILE;
                char *e;
                errno = 0;
                long long size = strtoll(q, &e, 10);
                if (e == q || *e != ' ' || size < 0 || errno || strlen(e + 1) < 66 || !hex_prefix(e + 1, 64) || e[65] != ' ') {
                    vigil_manifest_free(m);
                    return manifest_error(err, errlen, line, "file SIZE SHA256 PATH");
                }
                it.size = size;
                memcpy(it.hex, e + 1, 64);
                it.hex[64] = 0;
                q = e + 66;
            } else if (!strncmp(q, "present ", 8)) {
                it.kind = VIGIL_MANIFEST_PRESENT;
                q += 8;
            } else if (!strncmp(q, "absent ", 7)) {
                it.kind = VIGIL_MANIFEST_ABSENT;
                q += 7;
            } else {
                vigil_manifest_free(m);
                return manifest_error(err, errlen, line, "key, file, absent, present or deps");
            }
            if (!*q) { vigil_manifest_free(m); return manifest_error(err, errlen, line, "a path"); }
            it.path = q;
            if (m->nitems == cap) {
                cap = cap ? cap * 2 : 64;
                struct vigil_manifest_item *v = realloc(m->items, cap * sizeof *v);
                if (!v) { vigil_manifest_free(m); snprintf(err, errlen, "out of memory"); return -1; }
                m->items = v;
            }
            m->items[m->nitems++] = it;
        }
        p = nl + 1;
    }
    if (!m->key[0]) { vigil_manifest_free(m); return manifest_error(err, errlen, line, "a key line"); }
    return 0;
}
