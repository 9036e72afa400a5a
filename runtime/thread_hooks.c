/* pthread hooks, always on: locks (mutex, rwlock, spinlock, condvar), thread create / join /
 * exit, and the synchronization that is not a lock (tool.h VIGIL_EV_SYNC: semaphores, barriers,
 * pthread_once, condition-variable signals). The real functions come from dlsym(RTLD_NEXT) and are resolved together, at start-up
 * or by the first hook called before it: each pointer starts at a stub that resolves them all
 * and then calls the real function, so a hook costs one indirect call and, with no tool
 * listening, one predictable branch. */
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

/* X(return type, name, parameter list, argument list) */
#define REAL_FUNCTIONS(X)                                                                        \
    X(int, pthread_mutex_lock, (pthread_mutex_t * m), (m))                                       \
    X(int, pthread_mutex_trylock, (pthread_mutex_t * m), (m))                                    \
    X(int, pthread_mutex_timedlock, (pthread_mutex_t * m, const struct timespec *t), (m, t))     \
    X(int, pthread_mutex_unlock, (pthread_mutex_t * m), (m))                                     \
    X(int, pthread_rwlock_rdlock, (pthread_rwlock_t * l), (l))                                   \
    X(int, pthread_rwlock_wrlock, (pthread_rwlock_t * l), (l))                                   \
    X(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t * l), (l))                                \
    X(int, pthread_rwlock_trywrlock, (pthread_rwlock_t * l), (l))                                \
    X(int, pthread_rwlock_unlock, (pthread_rwlock_t * l), (l))                                   \
    X(int, pthread_spin_lock, (pthread_spinlock_t * l), (l))                                     \
    X(int, pthread_spin_trylock, (pthread_spinlock_t * l), (l))                                  \
    X(int, pthread_spin_unlock, (pthread_spinlock_t * l), (l))                                   \
    X(int, pthread_cond_wait, (pthread_cond_t * c, pthread_mutex_t * m), (c, m))                 \
    X(int, pthread_cond_timedwait,                                                               \
      (pthread_cond_t * c, pthread_mutex_t * m, const struct timespec *t), (c, m, t))            \
    X(int, pthread_create,                                                                       \
      (pthread_t * t, const pthread_attr_t *a, void *(*fn)(void *), void *arg), (t, a, fn, arg)) \
    X(int, pthread_join, (pthread_t t, void **ret), (t, ret))                                    \
    X(int, pthread_cond_signal, (pthread_cond_t * c), (c))                                       \
    X(int, pthread_cond_broadcast, (pthread_cond_t * c), (c))                                    \
    X(int, pthread_barrier_wait, (pthread_barrier_t * b), (b))                                   \
    X(int, pthread_once, (pthread_once_t * o, void (*fn)(void)), (o, fn))                        \
    X(int, sem_post, (sem_t * s), (s))                                                           \
    X(int, sem_wait, (sem_t * s), (s))                                                           \
    X(int, sem_trywait, (sem_t * s), (s))                                                        \
    X(int, sem_timedwait, (sem_t * s, const struct timespec *t), (s, t))                         \
    X(int, dlclose, (void *h), (h))

/* real_<name>: the real function (or its resolving stub until start-up resolved it). Written
 * by __vigil_resolve_real_functions, read by the hooks. */
#define DECLARE_REAL(ret, name, params, args) \
    static ret stub_##name params;            \
    static ret(*real_##name) params = stub_##name;
REAL_FUNCTIONS(DECLARE_REAL)
/* pthread_exit is noreturn: kept apart. Written like the others. */
static void (*real_pthread_exit)(void *);

#define REAL(name) (RELAXED_LOAD(&real_##name))

/* Set on a thread while it resolves: a hook re-entered from dlsym cannot be served. */
static __thread int resolving;

/* NULL when the symbol cannot be found (a -static link: our hooks are not used there). */
static void *lookup(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

__attribute__((noreturn)) static void missing(const char *name)
{
    /* Happens in a -static link: there is no next object to forward to. */
    __vigil_message("cannot find the real %s (dlsym: %s); statically linked programs are not "
                    "supported by vigil's pthread hooks; aborting", name, dlerror());
    abort();
}

void __vigil_resolve_real_functions(void)
{
    if (resolving)
        return;   /* re-entered from dlsym: the stub below reports the missing function */
    resolving = 1;
    void *p;
#define RESOLVE(ret, name, params, args)                                              \
    if (RELAXED_LOAD(&real_##name) == stub_##name && (p = lookup(#name)) != NULL)     \
        RELAXED_STORE(&real_##name, (ret(*) params)p);
    REAL_FUNCTIONS(RESOLVE)
    if (!RELAXED_LOAD(&real_pthread_exit) && (p = lookup("pthread_exit")) != NULL)
        RELAXED_STORE(&real_pthread_exit, (void (*)(void *))p);
    resolving = 0;
}

#define DEFINE_STUB(ret, name, params, args)               \
    static ret stub_##name params                          \
    {                                                      \
        __vigil_resolve_real_functions();                  \
        if (RELAXED_LOAD(&real_##name) == stub_##name)     \
            missing(#name);                                \
        return REAL(name) args;                            \
    }
REAL_FUNCTIONS(DEFINE_STUB)

/* ---- lock events ---- */

__attribute__((noinline)) static void lock_event(const void *lock, enum vigil_lock_op op)
{
    struct vigil_thread *th = &__vigil_thread;
    if (th->in_runtime)
        return;
    th->in_runtime = 1;
    __vigil_deliver_lock(lock, op);
    __vigil_leave_runtime(th, 0);
}

#define ACQUIRED(r, lock, op)                                        \
    do {                                                             \
        if (unlikely(__vigil_wants(VIGIL_EV_LOCK)) && (r) == 0)      \
            lock_event((lock), (op));                                \
    } while (0)
/* Releases are reported before the real release: another thread cannot be seen acquiring
 * the lock before this thread is seen releasing it. */
#define RELEASING(lock)                                              \
    do {                                                             \
        if (unlikely(__vigil_wants(VIGIL_EV_LOCK)))                  \
            lock_event((lock), VIGIL_LOCK_RELEASE);                  \
    } while (0)

INTERPOSE int pthread_mutex_lock(pthread_mutex_t *m)
{
    int r = REAL(pthread_mutex_lock)(m);
    ACQUIRED(r, m, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_mutex_trylock(pthread_mutex_t *m)
{
    int r = REAL(pthread_mutex_trylock)(m);
    ACQUIRED(r, m, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
    int r = REAL(pthread_mutex_timedlock)(m, t);
    ACQUIRED(r, m, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_mutex_unlock(pthread_mutex_t *m)
{
    RELEASING(m);
    return REAL(pthread_mutex_unlock)(m);
}

INTERPOSE int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    int r = REAL(pthread_rwlock_rdlock)(l);
    ACQUIRED(r, l, VIGIL_LOCK_ACQUIRE_SHARED);
    return r;
}

INTERPOSE int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    int r = REAL(pthread_rwlock_wrlock)(l);
    ACQUIRED(r, l, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    int r = REAL(pthread_rwlock_tryrdlock)(l);
    ACQUIRED(r, l, VIGIL_LOCK_ACQUIRE_SHARED);
    return r;
}

INTERPOSE int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    int r = REAL(pthread_rwlock_trywrlock)(l);
    ACQUIRED(r, l, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    RELEASING(l);
    return REAL(pthread_rwlock_unlock)(l);
}

INTERPOSE int pthread_spin_lock(pthread_spinlock_t *l)
{
    int r = REAL(pthread_spin_lock)(l);
    ACQUIRED(r, (const void *)l, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_spin_trylock(pthread_spinlock_t *l)
{
    int r = REAL(pthread_spin_trylock)(l);
    ACQUIRED(r, (const void *)l, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_spin_unlock(pthread_spinlock_t *l)
{
    RELEASING((const void *)l);
    return REAL(pthread_spin_unlock)(l);
}

/* ---- synchronization events (tool.h VIGIL_EV_SYNC): a release before the real operation, an
 * acquire after it ---- */

void __vigil_sync_event(const void *object, enum vigil_sync_op op)
{
    struct vigil_thread *th = &__vigil_thread;
    if (th->in_runtime)
        return;
    th->in_runtime = 1;
    __vigil_deliver_sync(object, op);
    __vigil_leave_runtime(th, 0);
}

#define SYNC(object, op)                                             \
    do {                                                             \
        if (unlikely(__vigil_wants(VIGIL_EV_SYNC)))                  \
            __vigil_sync_event((object), (op));                      \
    } while (0)

/* A condition wait releases the mutex and holds it again when it returns (also on timeout);
 * one that returned 0 was woken: it acquires what the signals before it released. */
INTERPOSE int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    RELEASING(m);
    int r = REAL(pthread_cond_wait)(c, m);
    if (r == 0)
        SYNC(c, VIGIL_SYNC_COND_WAKE);
    ACQUIRED(r == 0 || r == ETIMEDOUT ? 0 : r, m, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
    RELEASING(m);
    int r = REAL(pthread_cond_timedwait)(c, m, t);
    if (r == 0)
        SYNC(c, VIGIL_SYNC_COND_WAKE);
    ACQUIRED(r == 0 || r == ETIMEDOUT ? 0 : r, m, VIGIL_LOCK_ACQUIRE);
    return r;
}

INTERPOSE int pthread_cond_signal(pthread_cond_t *c)
{
    SYNC(c, VIGIL_SYNC_COND_SIGNAL);
    return REAL(pthread_cond_signal)(c);
}

INTERPOSE int pthread_cond_broadcast(pthread_cond_t *c)
{
    SYNC(c, VIGIL_SYNC_COND_SIGNAL);
    return REAL(pthread_cond_broadcast)(c);
}

INTERPOSE int sem_post(sem_t *s)
{
    SYNC(s, VIGIL_SYNC_SEM_POST);
    return REAL(sem_post)(s);
}

INTERPOSE int sem_wait(sem_t *s)
{
    int r = REAL(sem_wait)(s);
    if (r == 0)
        SYNC(s, VIGIL_SYNC_SEM_WAIT);
    return r;
}

INTERPOSE int sem_trywait(sem_t *s)
{
    int r = REAL(sem_trywait)(s);
    if (r == 0)
        SYNC(s, VIGIL_SYNC_SEM_WAIT);
    return r;
}

INTERPOSE int sem_timedwait(sem_t *s, const struct timespec *t)
{
    int r = REAL(sem_timedwait)(s, t);
    if (r == 0)
        SYNC(s, VIGIL_SYNC_SEM_WAIT);
    return r;
}

/* Every arrival of a round happens before every departure from it: each thread releases into
 * the barrier on the way in and acquires from it on the way out. */
INTERPOSE int pthread_barrier_wait(pthread_barrier_t *b)
{
    SYNC(b, VIGIL_SYNC_BARRIER_ARRIVE);
    int r = REAL(pthread_barrier_wait)(b);
    if (r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD)
        SYNC(b, VIGIL_SYNC_BARRIER_DEPART);
    return r;
}

/* pthread_once runs the program's init routine through once_trampoline, which releases into
 * the once object when the routine returns; every caller acquires from it when pthread_once
 * returns. The routine and its object travel in TLS (pthread_once calls it on this thread),
 * saved around the call: an init routine may call pthread_once for another object. */
static __thread void (*once_routine)(void);
static __thread pthread_once_t *once_object;

static void once_trampoline(void)
{
    void (*fn)(void) = once_routine;
    pthread_once_t *o = once_object;
    if (fn)
        fn();
    SYNC(o, VIGIL_SYNC_ONCE_DONE);
}

INTERPOSE int pthread_once(pthread_once_t *o, void (*fn)(void))
{
    if (likely(!__vigil_wants(VIGIL_EV_SYNC)))
        return REAL(pthread_once)(o, fn);
    void (*saved_routine)(void) = once_routine;
    pthread_once_t *saved_object = once_object;
    once_routine = fn;
    once_object = o;
    int r = REAL(pthread_once)(o, once_trampoline);
    once_routine = saved_routine;
    once_object = saved_object;
    if (r == 0)
        SYNC(o, VIGIL_SYNC_ONCE_PASS);
    return r;
}

/* ---- threads ---- */

__attribute__((noinline)) static void thread_event(enum vigil_thread_op op, uint64_t id)
{
    struct vigil_thread *th = &__vigil_thread;
    if (th->in_runtime)
        return;
    th->in_runtime = 1;
    __vigil_deliver_thread(op, id);
    __vigil_leave_runtime(th, 0);
}

static void thread_exit_event(void)
{
    struct vigil_thread *th = &__vigil_thread;
    if (!th->in_runtime)
        __vigil_deliver_accesses();   /* the thread's last buffered accesses, whoever wants them */
    if (th->exit_reported || !__vigil_wants(VIGIL_EV_THREAD))
        return;
    th->exit_reported = 1;
    thread_event(VIGIL_THREAD_EXIT, (uint64_t)pthread_self());
}

struct start_args {
    void *(*fn)(void *);
    void *arg;
};

static void exit_cleanup(void *unused)
{
    (void)unused;
    thread_exit_event();
}

/* Runs the program's start routine between a START and an EXIT event; the cleanup handler
 * also reports threads that end by pthread_exit or cancellation. */
static void *thread_start(void *p)
{
    struct start_args a = *(struct start_args *)p;
    __libc_free(p);
    if (__vigil_wants(VIGIL_EV_THREAD))
        thread_event(VIGIL_THREAD_START, (uint64_t)pthread_self());
    void *ret;
    pthread_cleanup_push(exit_cleanup, NULL);
    ret = a.fn(a.arg);
    pthread_cleanup_pop(1);
    return ret;
}

INTERPOSE int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (likely(!__vigil_wants(VIGIL_EV_THREAD)))
        return REAL(pthread_create)(t, attr, fn, arg);
    struct start_args *a = __libc_malloc(sizeof *a);   /* the runtime's own memory */
    if (!a)
        return REAL(pthread_create)(t, attr, fn, arg);
    a->fn = fn;
    a->arg = arg;
    thread_event(VIGIL_THREAD_CREATE, 0);
    int r = REAL(pthread_create)(t, attr, thread_start, a);
    if (r != 0)
        __libc_free(a);
    return r;
}

INTERPOSE int pthread_join(pthread_t t, void **ret)
{
    int r = REAL(pthread_join)(t, ret);
    if (unlikely(__vigil_wants(VIGIL_EV_THREAD)) && r == 0)
        thread_event(VIGIL_THREAD_JOIN, (uint64_t)t);
    return r;
}

INTERPOSE void pthread_exit(void *ret)
{
    /* Threads not started through our wrapper (the main thread) are reported here. */
    thread_exit_event();
    if (!RELAXED_LOAD(&real_pthread_exit))
        __vigil_resolve_real_functions();
    if (!RELAXED_LOAD(&real_pthread_exit))
        missing("pthread_exit");
    RELAXED_LOAD(&real_pthread_exit)(ret);
    __builtin_unreachable();
}

/* dlclose: a module whose object goes away must no longer be read by the report. */
INTERPOSE int dlclose(void *h)
{
    __vigil_text_unload_begin();
    int r = REAL(dlclose)(h);
    __vigil_text_unload_end();
    if (r == 0 && __vigil_is_ready())
        __vigil_modules_check_unloaded();
    return r;
}
