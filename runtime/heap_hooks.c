/* The malloc family, always on, in both copies. Every function forwards to glibc's own
 * allocator entry points (__libc_malloc, ...), which are plain link-time symbols: no dlsym,
 * hence no bootstrap problem when dlsym itself allocates. With no tool listening, each
 * function costs one predictable branch over glibc. Events raised while the thread is inside
 * the runtime or a tool (the re-entrancy guard) are not delivered: tools' and the runtime's
 * own allocations are invisible. Pointers are never interpreted here, so a free of a pointer
 * vigil never saw (allocated before start-up, or by code that bypasses these symbols) passes
 * straight to glibc, as it would without vigil. */
#include "internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

/* Slow paths, out of line so that the hooks stay small. frame: the hook's own frame, whose
 * return address is the allocation site. */
__attribute__((noinline)) static void alloc_event(void *p, size_t size, void *frame)
{
    struct vigil_thread *th = &__vigil_thread;
    if (!p || th->in_runtime)
        return;
    th->in_runtime = 1;
    __vigil_deliver_alloc(p, size, frame);
    __vigil_leave_runtime(th, 0);
}

/* 1 when a tool keeps the block (vigil_free_later): it releases it later, not the caller.
 * frame: the hook's own, where a tool's vigil_capture_stack starts (the free's site). */
__attribute__((noinline)) static int free_event(void *p, void *frame)
{
    struct vigil_thread *th = &__vigil_thread;
    if (!p || th->in_runtime)
        return 0;
    th->in_runtime = 1;
    th->free_kept = 0;
    th->hook_frame = frame;
    __vigil_deliver_free(p);
    th->hook_frame = NULL;
    int kept = th->free_kept;
    th->free_kept = 0;
    __vigil_leave_runtime(th, 0);
    return kept;
}

#define ALLOC_EVENT(p, size)                                                   \
    do {                                                                       \
        if (unlikely(__vigil_wants(VIGIL_EV_ALLOC)))                           \
            alloc_event((p), (size), __builtin_frame_address(0));              \
    } while (0)
/* The same for a block that holds something already (vigil_alloc_kind). */
#define ALLOC_EVENT_OF_KIND(p, size, kind)                                     \
    do {                                                                       \
        if (unlikely(__vigil_wants(VIGIL_EV_ALLOC))) {                         \
            __vigil_thread.alloc_kind = (kind);                                \
            alloc_event((p), (size), __builtin_frame_address(0));              \
            __vigil_thread.alloc_kind = VIGIL_ALLOC_UNINIT;                    \
        }                                                                      \
    } while (0)

INTERPOSE void *malloc(size_t size)
{
    void *p = __libc_malloc(size);
    ALLOC_EVENT(p, size);
    return p;
}

INTERPOSE void free(void *p)
{
    /* Before the block is released: once free, another thread may get the same address. */
    if (unlikely(__vigil_wants(VIGIL_EV_FREE)) && free_event(p, __builtin_frame_address(0)))
        return;   /* a tool keeps it (a quarantine) and releases it later: vigil_free_now */
    __libc_free(p);
}

int vigil_free_later(void)
{
    struct vigil_thread *th = &__vigil_thread;
    if (th->in_realloc || th->free_kept)
        return 0;
    th->free_kept = 1;
    return 1;
}

void vigil_free_now(void *p)
{
    __libc_free(p);
}

INTERPOSE void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    ALLOC_EVENT_OF_KIND(p, n * size, VIGIL_ALLOC_ZEROED);
    return p;
}

static inline void *realloc_hooked(void *old, size_t size, void *frame)
{
    if (likely(!__vigil_wants(VIGIL_EV_ALLOC | VIGIL_EV_FREE)))
        return __libc_realloc(old, size);
    if (!old) {
        void *p = __libc_malloc(size);
        if (__vigil_wants(VIGIL_EV_ALLOC))
            alloc_event(p, size, frame);
        return p;
    }
    /* The old block is reported released first (see free); if realloc then fails, it is
     * still live (its size unchanged) and reported allocated again. */
    struct vigil_thread *th = &__vigil_thread;
    th->in_realloc = 1;
    if (__vigil_wants(VIGIL_EV_FREE))
        free_event(old, frame);
    void *p = __libc_realloc(old, size);
    if (__vigil_wants(VIGIL_EV_ALLOC)) {
        if (p)
            alloc_event(p, size, frame);
        else if (size != 0)
            alloc_event(old, malloc_usable_size(old), frame);
    }
    th->in_realloc = 0;
    return p;
}

INTERPOSE void *realloc(void *old, size_t size)
{
    return realloc_hooked(old, size, __builtin_frame_address(0));
}

INTERPOSE void *reallocarray(void *old, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_hooked(old, bytes, __builtin_frame_address(0));
}

INTERPOSE int posix_memalign(void **out, size_t align, size_t size)
{
    /* glibc's own argument check, so that results do not change under vigil. */
    if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0 || align == 0)
        return EINVAL;
    int saved = errno;
    void *p = __libc_memalign(align, size);
    if (!p) {
        errno = saved;
        return ENOMEM;
    }
    *out = p;
    ALLOC_EVENT(p, size);
    return 0;
}

INTERPOSE void *aligned_alloc(size_t align, size_t size)
{
    void *p = __libc_memalign(align, size);
    ALLOC_EVENT(p, size);
    return p;
}

INTERPOSE void *memalign(size_t align, size_t size)
{
    void *p = __libc_memalign(align, size);
    ALLOC_EVENT(p, size);
    return p;
}

INTERPOSE void *valloc(size_t size)
{
    void *p = __libc_valloc(size);
    ALLOC_EVENT(p, size);
    return p;
}

INTERPOSE void *pvalloc(size_t size)
{
    void *p = __libc_pvalloc(size);
    ALLOC_EVENT(p, size);
    return p;
}

INTERPOSE char *strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *p = __libc_malloc(len);
    if (p)
        memcpy(p, s, len);
    ALLOC_EVENT_OF_KIND(p, len, VIGIL_ALLOC_COPY);
    return p;
}

INTERPOSE char *strndup(const char *s, size_t max)
{
    size_t len = strnlen(s, max);
    char *p = __libc_malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    ALLOC_EVENT_OF_KIND(p, len + 1, VIGIL_ALLOC_COPY);
    return p;
}
