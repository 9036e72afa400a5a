/* OpenMP through OMPT (OpenMP 5.0, chapter 4 "Tool Support"; <omp-tools.h> of LLVM's libomp,
 * Debian package libomp-14-dev). The OpenMP runtime synchronizes its threads with its own
 * barriers, spin and futex locks and atomics, none of which vigil sees: without these callbacks
 * every value a barrier, a critical section or a task dependence hands over looks racy.
 *
 * libomp looks for a tool at its initialization by calling ompt_start_tool (5.0 section 4.2.1):
 * the executable's definition (this one; vigil-cc links it with --dynamic-list, libvigil.so
 * exports it) comes first in the lookup scope. It is weak, so that a program which is itself an
 * OMPT tool keeps its own. When the race tool is not enabled (or race.ompt=0) it passes the
 * question on to the next definition (a tool preloaded or named by OMP_TOOL_LIBRARIES), so
 * that it changes nothing for other programs and tools.
 *
 * The model, in the race tool's terms (race_sync_exact: release/acquire of an object's clock;
 * race_lock_exact: a lock). Object keys are addresses of the runtime's ompt_data_t records,
 * which live as long as their task, plus a small offset (they are 8-byte aligned). A region is
 * named by its encountering task: libomp hands parallel_begin a parallel_data of the
 * encountering thread's stack and copies its value into the team's, which the team's callbacks
 * get (and the end of a barrier or of an implicit task gets none), so parallel_begin stores
 * the key P = encountering task_data in parallel_data->value and the team's threads read it:
 *   parallel_begin            encountering thread releases R = P + 3
 *   implicit task begin       each thread of the team acquires R
 *   barrier begin / end       release / acquire B = P + 2 (every barrier kind,
 *                             implicit ones and the join at the region's end); at its end also
 *                             acquire T, the completions of all explicit tasks (tasks run by a
 *                             thread inside the barrier, after its arrival)
 *   implicit task end         release B (the join barrier, in case its callback is missing)
 *   parallel_end              encountering thread acquires B and T
 * (A region whose encountering task has no data, or a parallel_data with no value, is named by
 * the parallel_data pointer instead.)
 *   task_create (explicit)    encountering thread releases the task's own key (new_task_data)
 *   task starts (schedule)    acquire the task's key, and D(x) for each dependence on x
 *   task completes            release D(x) for each dependence, C = parent task_data + 1, and T
 *   taskwait end              acquire C of the waiting task (its children's completions)
 *   taskgroup end             acquire T
 *   mutex_acquired/_released  lock acquire/release of wait_id: critical sections, omp locks
 *                             (simple and nested), ordered, atomics made of a lock
 * Objects' clocks accumulate (the tool's sync objects): a barrier's rounds share one clock, a
 * recycled ompt_data_t keeps its old one, T orders a barrier's exit after every task completed
 * anywhere before, D(x) orders tasks that only read x one after the other. All of this can only
 * add ordering: it may hide a race, never invent one. */
#include "raceint.h"

#if defined(__has_include)
#if __has_include(<omp-tools.h>)
#define RACE_HAVE_OMPT 1
#endif
#endif

#include <dlfcn.h>
#include <link.h>
#include <string.h>

static int libomp_loaded;                  /* by race_ompt_check (init) */
static int ompt_started;                   /* by ompt_init, when libomp took the callbacks */

/* GCC's libgomp has no OMPT: say so once when the program runs on it. */
static int find_openmp(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    name = name ? name + 1 : info->dlpi_name;
    if (name && strncmp(name, "libgomp.so", 10) == 0)
        *(int *)arg = 1;
    if (name && strncmp(name, "libomp.so", 9) == 0)
        libomp_loaded = 1;
    return 0;
}

void race_ompt_check(void)
{
    int gomp = 0;
    dl_iterate_phdr(find_openmp, &gomp);
    if (gomp)
        vigil_tool_message(&race_tool, "this program uses GCC's OpenMP runtime (libgomp), which has no OMPT "
                           "interface: its barriers, tasks, critical sections and locks are not seen, and "
                           "what they order may be reported as races (build with clang -fopenmp, LLVM's libomp)");
}

/* At exit: LLVM's libomp was loaded, threads ran, and it never started the OMPT part (the
 * environment said OMP_TOOL=disabled, or another tool came first): say so. */
void race_ompt_fini_check(void)
{
    if (libomp_loaded && race_cfg.ompt && !__atomic_load_n(&ompt_started, __ATOMIC_RELAXED) &&
        __atomic_load_n(&race_multi, __ATOMIC_RELAXED))
        vigil_tool_message(&race_tool, "the OpenMP runtime (libomp) did not start the tool's OMPT part "
                           "(OMP_TOOL=disabled?): its barriers, tasks and critical sections were not seen, and "
                           "what they order may be reported as races");
}

#ifdef RACE_HAVE_OMPT
#include <omp-tools.h>

/* ---- explicit tasks: parent and dependences, in records mapped once (no malloc in the
 * callbacks), on a free list ---- */
#define TASK_DEPS 16
#define TASKS (1u << 16)
struct task_rec {
    const void *children;                  /* C of the parent task */
    uint32_t ndeps, next_free;             /* next_free: index + 1, 0 = end */
    uintptr_t dep[TASK_DEPS];
};
static struct task_rec *tasks;             /* TASKS records, mapped by initialize */
static uint32_t task_lock;                 /* spin lock of free_head and fresh */
static uint32_t free_head;                 /* index + 1 of the first free record, 0: none */
static uint32_t fresh;                     /* records never used yet: fresh .. TASKS - 1 */
static int tasks_said, deps_said;          /* the messages about exhausted records were printed */
static char all_tasks;                     /* T's key */
static __thread uintptr_t thread_team;     /* P of the thread's implicit task's region */

static struct task_rec *task_new(void)
{
    struct task_rec *t = NULL;
    race_spin_lock(&task_lock);
    if (free_head) {
        t = &tasks[free_head - 1];
        free_head = t->next_free;
    } else if (fresh < TASKS) {
        t = &tasks[fresh++];
    }
    race_spin_unlock(&task_lock);
    if (!t && !__atomic_exchange_n(&tasks_said, 1, __ATOMIC_RELAXED))
        vigil_tool_message(&race_tool, "more than %u OpenMP tasks at once: the later ones' completions are not "
                           "followed (taskwait and dependences may be reported as races)", TASKS);
    if (t)
        t->ndeps = 0;
    return t;
}

static void task_free(struct task_rec *t)
{
    race_spin_lock(&task_lock);
    t->next_free = free_head;
    free_head = (uint32_t)(t - tasks) + 1;
    race_spin_unlock(&task_lock);
}

static inline const void *key_plus(const void *p, uintptr_t k)
{
    return (const void *)((uintptr_t)p + k);
}

/* P of a region, from its parallel_data (0: none). */
static inline uintptr_t region_key(const ompt_data_t *parallel)
{
    if (!parallel)
        return 0;
    return parallel->value ? (uintptr_t)parallel->value : (uintptr_t)parallel;
}
#define KEY_BARRIER 2
#define KEY_REGION 3

/* ---- callbacks ---- */

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *parallel,
                              unsigned int requested, int flags, const void *codeptr)
{
    (void)frame, (void)requested, (void)flags, (void)codeptr;
    if (!parallel)
        return;
    parallel->value = task ? (uint64_t)(uintptr_t)task : 0;
    race_sync_exact(key_plus((const void *)region_key(parallel), KEY_REGION), 1);
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags, const void *codeptr)
{
    (void)flags, (void)codeptr;
    uintptr_t p = parallel && parallel->value ? region_key(parallel) : (uintptr_t)task;
    if (p)
        race_sync_exact(key_plus((const void *)p, KEY_BARRIER), 0);
    race_sync_exact(&all_tasks, 0);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *parallel, ompt_data_t *task,
                             unsigned int actual, unsigned int index, int flags)
{
    (void)actual, (void)index;
    if (flags & ompt_task_initial)
        return;
    if (endpoint == ompt_scope_begin) {
        if (task)
            task->ptr = NULL;
        thread_team = region_key(parallel);
        if (thread_team)
            race_sync_exact(key_plus((const void *)thread_team, KEY_REGION), 0);
    } else if (endpoint == ompt_scope_end) {
        uintptr_t p = parallel ? region_key(parallel) : thread_team;
        if (p)
            race_sync_exact(key_plus((const void *)p, KEY_BARRIER), 1);
    }
}

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *parallel,
                           ompt_data_t *task, const void *codeptr)
{
    (void)codeptr;
    if (endpoint != ompt_scope_begin && endpoint != ompt_scope_end)
        return;
    int begin = endpoint == ompt_scope_begin;
    switch ((int)kind) {
    case ompt_sync_region_taskwait:
        if (!begin && task)
            race_sync_exact(key_plus(task, 1), 0);
        break;
    case ompt_sync_region_taskgroup:
        if (!begin)
            race_sync_exact(&all_tasks, 0);
        break;
    default: {   /* the barriers (explicit, implicit, of the implementation, teams) and reductions */
        uintptr_t p = parallel ? region_key(parallel) : thread_team;
        if (p)
            race_sync_exact(key_plus((const void *)p, KEY_BARRIER), begin);
        if (!begin)
            race_sync_exact(&all_tasks, 0);
        break;
    }
    }
}

static void on_task_create(ompt_data_t *parent, const ompt_frame_t *frame, ompt_data_t *task, int flags,
                           int has_deps, const void *codeptr)
{
    (void)frame, (void)has_deps, (void)codeptr;
    if (!task)
        return;
    task->ptr = NULL;
    if (!(flags & ompt_task_explicit))
        return;
    struct task_rec *t = task_new();
    if (t) {
        t->children = parent ? key_plus(parent, 1) : NULL;
        task->ptr = t;
    }
    race_sync_exact(task, 1);
}

static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int ndeps)
{
    struct task_rec *t = task ? task->ptr : NULL;
    if (!t)
        return;
    for (int i = 0; i < ndeps; i++) {
        if (deps[i].dependence_type == ompt_dependence_type_source || deps[i].dependence_type == ompt_dependence_type_sink)
            continue;   /* doacross loops (ordered depend): not followed */
        if (t->ndeps == TASK_DEPS) {
            if (!__atomic_exchange_n(&deps_said, 1, __ATOMIC_RELAXED))
                vigil_tool_message(&race_tool, "an OpenMP task with more than %d dependences: the others are not "
                                   "followed", TASK_DEPS);
            break;
        }
        t->dep[t->ndeps++] = (uintptr_t)deps[i].variable.ptr;
    }
}

static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next)
{
    if (prior && (status == ompt_task_complete || status == ompt_task_late_fulfill || status == ompt_task_cancel)) {
        struct task_rec *t = prior->ptr;
        if (t) {
            for (uint32_t i = 0; i < t->ndeps; i++)
                race_sync_exact((const void *)t->dep[i], 1);
            if (t->children)
                race_sync_exact(t->children, 1);
            prior->ptr = NULL;
            task_free(t);
        }
        race_sync_exact(&all_tasks, 1);
    }
    struct task_rec *n = next ? next->ptr : NULL;
    if (n) {   /* an explicit task starts (or resumes): after its creation and its dependences */
        race_sync_exact(next, 0);
        for (uint32_t i = 0; i < n->ndeps; i++)
            race_sync_exact((const void *)n->dep[i], 0);
    }
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
    (void)kind, (void)codeptr;
    race_lock_exact((const void *)(uintptr_t)wait_id, VIGIL_LOCK_ACQUIRE);
}

static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void *codeptr)
{
    (void)kind, (void)codeptr;
    race_lock_exact((const void *)(uintptr_t)wait_id, VIGIL_LOCK_RELEASE);
}

static int ompt_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    tasks = race_map(sizeof *tasks * TASKS);
    if (!set || !tasks) {
        vigil_tool_message(&race_tool, "OMPT: %s; OpenMP synchronization is not followed",
                           set ? "cannot map the task records" : "the OpenMP runtime has no ompt_set_callback");
        return 0;
    }
    static const struct {
        ompt_callbacks_t which;
        ompt_callback_t fn;
        const char *name;
    } cbs[] = {
        {ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin, "parallel_begin"},
        {ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end, "parallel_end"},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task, "implicit_task"},
        {ompt_callback_sync_region, (ompt_callback_t)on_sync_region, "sync_region"},
        {ompt_callback_task_create, (ompt_callback_t)on_task_create, "task_create"},
        {ompt_callback_dependences, (ompt_callback_t)on_dependences, "dependences"},
        {ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule, "task_schedule"},
        {ompt_callback_mutex_acquired, (ompt_callback_t)on_mutex_acquired, "mutex_acquired"},
        {ompt_callback_mutex_released, (ompt_callback_t)on_mutex_released, "mutex_released"},
    };
    for (size_t i = 0; i < sizeof cbs / sizeof cbs[0]; i++) {
        ompt_set_result_t r = set(cbs[i].which, cbs[i].fn);
        if (r != ompt_set_always)
            vigil_tool_message(&race_tool, "OMPT: the OpenMP runtime does not always report %s (ompt_set_callback: %d): "
                               "what it orders may be reported as races", cbs[i].name, (int)r);
    }
    __atomic_store_n(&ompt_started, 1, __ATOMIC_RELAXED);
    return 1;   /* non-zero: the tool stays active */
}

static void ompt_fini(ompt_data_t *data)
{
    (void)data;
}

/* 5.0 section 4.2.1: the OpenMP runtime's question at its start. The reserved prefix of the
 * runtime's symbols cannot apply: the name is the interface. */
__attribute__((weak, visibility("default"))) ompt_start_tool_result_t *ompt_start_tool(unsigned int omp_version,
                                                                                       const char *runtime_version)
{
    static ompt_start_tool_result_t result = {.initialize = ompt_init, .finalize = ompt_fini};
    if (race_is_enabled() && race_cfg.ompt)
        return &result;
    ompt_start_tool_result_t *(*next)(unsigned int, const char *) =
        (ompt_start_tool_result_t * (*)(unsigned int, const char *)) dlsym(RTLD_NEXT, "ompt_start_tool");
    return next && next != ompt_start_tool ? next(omp_version, runtime_version) : NULL;
}
#endif
