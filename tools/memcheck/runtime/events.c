/* The memory checker's event log (vigil/mcevents.h): every error occurrence mc_report sees,
 * kept in memory and written compressed as memcheck.events.zst with the report (at exit and at
 * each flush, through vigil_report_open: atomically, all the events so far).
 *
 * The events go into a pool of chunks mapped at init (NORESERVE: a page costs only once
 * written). A thread takes a chunk with one atomic add and fills it alone; each record is
 * published by a release store of its chunk's count, which the writer reads with acquire. No
 * lock and no allocation on the way; when the pool is used up, later events are counted as
 * dropped (the summary log still counts every error per site and kind).
 *
 * Compression: libzstd, loaded when the log is first written (dlopen, so that a program that
 * never writes one, or a static one, does not carry it). Without it the log is still a zstd
 * frame, of raw (stored) blocks, which any zstd reader takes. */
#include "mcint.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

/* Weak: a static program does not link the C library's dlopen (nor its warning); NULL there. */
extern void *dlopen(const char *file, int mode) __attribute__((weak));

#define CHUNK 256                         /* records per chunk */

static struct vigil_mcev *pool;           /* nchunks * CHUNK records, mapped by init */
static uint32_t *chunk_used;              /* records published per chunk (release stores by its thread) */
static uint32_t nchunks;                  /* by init */
static uint32_t next_chunk;               /* chunks taken (atomic; may pass nchunks) */
static uint32_t next_thread;              /* thread numbers given (atomic) */
static uint64_t dropped;                  /* events that found the pool full (atomic) */

/* The calling thread's chunk (written by its thread only; a forked child keeps its copy). */
static __thread struct {
    uint32_t chunk, pos, thread;
    int have;
} ev_self;

int mc_events_init(uint32_t max_events)
{
    if (!max_events)
        return 0;
    nchunks = (max_events + CHUNK - 1) / CHUNK;
    pool = mc_map((size_t)nchunks * CHUNK * sizeof *pool);
    chunk_used = mc_map((size_t)nchunks * sizeof *chunk_used);
    return pool && chunk_used ? 0 : -1;
}

void mc_event(const struct mc_error *e)
{
    if (!pool)
        return;
    if (!ev_self.have || ev_self.pos == CHUNK) {
        uint32_t c = __atomic_load_n(&next_chunk, __ATOMIC_RELAXED) < nchunks
                         ? __atomic_fetch_add(&next_chunk, 1, __ATOMIC_RELAXED)
                         : nchunks;
        if (c >= nchunks) {
            ev_self.have = 0;
            __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
            return;
        }
        ev_self.chunk = c;
        ev_self.pos = 0;
        ev_self.have = 1;
        if (!ev_self.thread)
            ev_self.thread = __atomic_add_fetch(&next_thread, 1, __ATOMIC_RELAXED);
    }
    struct vigil_mcev *r = &pool[(size_t)ev_self.chunk * CHUNK + ev_self.pos];
    uint32_t use = e->use & 7;
    *r = (struct vigil_mcev){
        .ns = vigil_now_ns(), .addr = e->addr, .block = e->have_obj ? e->obj.start : 0,
        .block_size = !e->have_obj ? 0 : e->obj.size > UINT32_MAX ? UINT32_MAX : (uint32_t)e->obj.size,
        .site = e->site, .thread = ev_self.thread, .size = e->size > UINT16_MAX ? UINT16_MAX : (uint16_t)e->size,
        .kind = (uint8_t)e->kind,
        .flags = (uint8_t)((e->is_store ? VIGIL_MCEV_STORE : 0) | use << VIGIL_MCEV_USE_SHIFT |
                           (e->have_obj ? VIGIL_MCEV_BLOCK : 0)),
    };
    __atomic_store_n(&chunk_used[ev_self.chunk], ++ev_self.pos, __ATOMIC_RELEASE);
}

uint64_t mc_events_dropped(void)
{
    return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

uint64_t mc_events_logged(void)
{
    uint32_t taken = __atomic_load_n(&next_chunk, __ATOMIC_ACQUIRE);
    uint64_t n = 0;
    for (uint32_t c = 0; c < taken && c < nchunks; c++)
        n += __atomic_load_n(&chunk_used[c], __ATOMIC_ACQUIRE);
    return n;
}

/* ---- writing: raw bytes in, a zstd frame out ---- */

#define STAGE (128u << 10)                 /* a raw block's largest size (zstd's block maximum) */

struct zstd_fns {
    ZSTD_CCtx *(*create)(void);
    size_t (*free)(ZSTD_CCtx *);
    size_t (*compress)(ZSTD_CCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *, ZSTD_EndDirective);
    unsigned (*is_error)(size_t);
    size_t (*set)(ZSTD_CCtx *, ZSTD_cParameter, int);
};

struct sink {
    FILE *f;
    uint8_t *stage, *out;                  /* STAGE bytes each, mapped by the writer */
    size_t staged, out_size;
    struct zstd_fns z;
    ZSTD_CCtx *cctx;                       /* NULL: raw blocks */
    int failed;
};

/* libzstd's functions, or 0 when it cannot be loaded (then the frame is stored raw). */
static int load_zstd(struct zstd_fns *z)
{
    static void *lib;                      /* by the first writer (the report is written by one thread at a time) */
    if (!lib && dlopen)
        lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!lib)
        return -1;
    z->create = (ZSTD_CCtx * (*)(void)) dlsym(lib, "ZSTD_createCCtx");
    z->free = (size_t(*)(ZSTD_CCtx *))dlsym(lib, "ZSTD_freeCCtx");
    z->compress = (size_t(*)(ZSTD_CCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *, ZSTD_EndDirective))dlsym(
        lib, "ZSTD_compressStream2");
    z->is_error = (unsigned (*)(size_t))dlsym(lib, "ZSTD_isError");
    z->set = (size_t(*)(ZSTD_CCtx *, ZSTD_cParameter, int))dlsym(lib, "ZSTD_CCtx_setParameter");
    return z->create && z->free && z->compress && z->is_error && z->set ? 0 : -1;
}

static void put(struct sink *s, const void *p, size_t n)
{
    if (!s->failed && fwrite(p, 1, n, s->f) != n)
        s->failed = 1;
}

/* The staged bytes out, as a compressed stretch or a raw block (last: the frame's end). */
static void drain(struct sink *s, int last)
{
    if (s->cctx) {
        ZSTD_inBuffer in = {s->stage, s->staged, 0};
        for (;;) {
            ZSTD_outBuffer out = {s->out, s->out_size, 0};
            size_t left = s->z.compress(s->cctx, &out, &in, last ? ZSTD_e_end : ZSTD_e_continue);
            if (s->z.is_error(left)) {
                s->failed = 1;
                break;
            }
            put(s, s->out, out.pos);
            if (last ? left == 0 : in.pos == in.size)
                break;
        }
    } else {
        /* block header: bit 0 last, bits 1-2 type (0: raw), bits 3-23 size */
        uint32_t h = (uint32_t)s->staged << 3 | (last ? 1u : 0u);
        uint8_t hb[3] = {(uint8_t)h, (uint8_t)(h >> 8), (uint8_t)(h >> 16)};
        put(s, hb, 3);
        put(s, s->stage, s->staged);
    }
    s->staged = 0;
}

static void emit(struct sink *s, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        size_t k = STAGE - s->staged < n ? STAGE - s->staged : n;
        memcpy(s->stage + s->staged, b, k);
        s->staged += k, b += k, n -= k;
        if (s->staged == STAGE)
            drain(s, 0);
    }
}

static void le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void mc_events_write(void)
{
    if (!pool)
        return;
    struct sink s = {0};
    s.out_size = STAGE;
    s.stage = mmap(NULL, 2 * STAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s.stage == MAP_FAILED) {
        vigil_tool_message(&mc_tool, "cannot map a buffer for %s", VIGIL_MCEV_FILE);
        return;
    }
    s.out = s.stage + STAGE;
    s.f = vigil_report_open(&mc_tool, VIGIL_MCEV_FILE);
    if (!s.f) {
        munmap(s.stage, 2 * STAGE);
        return;
    }
    if (load_zstd(&s.z) == 0 && (s.cctx = s.z.create()) != NULL)
        s.z.set(s.cctx, ZSTD_c_compressionLevel, 3);
    if (!s.cctx) {
        /* a frame header: magic, descriptor 0 (no content size, no checksum), window 128 KiB */
        static const uint8_t frame[6] = {0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38};
        put(&s, frame, sizeof frame);
    }
    /* n, the header's count, first: the chunks' counts only grow, so n records follow */
    uint32_t taken = __atomic_load_n(&next_chunk, __ATOMIC_ACQUIRE);
    uint64_t n = 0;
    for (uint32_t c = 0; c < taken && c < nchunks; c++)
        n += __atomic_load_n(&chunk_used[c], __ATOMIC_ACQUIRE);
    uint8_t h[VIGIL_MCEV_HEADER_SIZE];
    memcpy(h, VIGIL_MCEV_MAGIC, 8);
    le(h + 8, VIGIL_MCEV_VERSION, 4);
    le(h + 12, VIGIL_MCEV_RECORD_SIZE, 4);
    le(h + 16, mc_events_dropped(), 8);
    le(h + 24, n, 8);
    emit(&s, h, sizeof h);
    uint64_t written = 0;
    for (uint32_t c = 0; c < taken && c < nchunks && written < n; c++) {
        uint32_t used = __atomic_load_n(&chunk_used[c], __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < used && written < n; i++, written++) {
            const struct vigil_mcev *e = &pool[(size_t)c * CHUNK + i];
            uint8_t r[VIGIL_MCEV_RECORD_SIZE];
            le(r, e->ns, 8);
            le(r + 8, e->addr, 8);
            le(r + 16, e->block, 8);
            le(r + 24, e->block_size, 4);
            le(r + 28, e->site, 4);
            le(r + 32, e->thread, 4);
            le(r + 36, e->size, 2);
            r[38] = e->kind;
            r[39] = e->flags;
            emit(&s, r, sizeof r);
        }
    }
    drain(&s, 1);
    if (s.cctx)
        s.z.free(s.cctx);
    if (fclose(s.f) != 0 || s.failed)
        vigil_tool_message(&mc_tool, "could not write %s", VIGIL_MCEV_FILE);
    munmap(s.stage, 2 * STAGE);
}
