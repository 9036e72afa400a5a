/* vigil-cc internals shared by the driver (driver.c: settings, processes, temporary files, the
 * stage list) and the per-source pipeline (pipeline.c: front end, transform, optimize, back end,
 * link). */
#ifndef VIGIL_CC_PIPELINE_H
#define VIGIL_CC_PIPELINE_H
#include "args.h"

#include <limits.h>

struct vcc_settings {
#define VIGIL_CC_SETTING(field, name, category, def, meaning) const char *field;
#include "settings.inc"
#undef VIGIL_CC_SETTING
};

struct vcc_cache;

struct vcc_job {
    struct vcc_settings settings;  /* raw values, defaults filled in */
    int verbose, keep_temps, debug, verify;
    enum vcc_placement { VCC_PLACE_EARLY, VCC_PLACE_LATE, VCC_PLACE_POST } placement;
    int pred_counters;             /* enum vigil_pred_counters (transform.h) */
    int thread_counters;           /* enum vigil_thread_counters (transform.h) */
    enum { VCC_FRAME_POINTERS_OFF, VCC_FRAME_POINTERS_ALL, VCC_FRAME_POINTERS_NONLEAF } frame_pointers;
    int orig_argc;
    char **orig_argv;              /* argv as vigil-cc got it (argv[0] excluded) */
    struct vcc_args args;
    const char *clang;
    char libdir[PATH_MAX];         /* <dir of vigil-cc>/../lib */
    char **objects;                /* per input: the object compiled for it (link), or NULL */
    struct vcc_cache *cache;       /* the instrumentation cache (cache.c), NULL when it is off */
    struct vigil_ccconfig *config; /* VIGIL_CC_CONFIG, parsed (NULL when not set) */
    char *config_text;             /* its bytes (config_len of them), for the cache key */
    size_t config_len;
};

/* vigil-cc's version and build id, which `vigil-cc --version` prints. The build id is a hash
 * of vigil-cc's sources, computed by the Makefile (VIGIL_CC_BUILD_ID): it changes whenever
 * vigil-cc does, so anything that caches vigil-cc's output keys on it. */
extern const char vcc_version[], vcc_build_id[];

/* A growable argv. */
struct vcc_cmd {
    char **v;
    int n, cap;
};
void vcc_cmd_push(struct vcc_cmd *c, const char *arg);
void vcc_cmd_free(struct vcc_cmd *c);

/* "1", "yes", "on", "true" (case-insensitive) -> 1; anything else -> 0. */
int vcc_setting_on(const char *value);

/* Run a command (argv[0] looked up in PATH) and wait; prints it first under VIGIL_CC_VERBOSE.
 * Returns its exit status, or 128+signal, or 127 when it could not be started. */
int vcc_run(const struct vcc_job *job, char **argv);
/* The same with the command's stdout and/or stderr sent to these descriptors (-1: inherited). */
int vcc_run_redirected(const struct vcc_job *job, char **argv, int out_fd, int err_fd);

/* A new empty temporary file in $TMPDIR ending in suffix; removed at exit unless
 * VIGIL_CC_KEEP_TEMPS. Returns a malloc'd path, or NULL (message printed). */
char *vcc_temp_file(const struct vcc_job *job, const char *suffix);

/* vigil-cc's transforming part (pipeline.c and what it calls, the tools' compiler parts), a
 * shared object beside the runtime (lib/vigil-cc-transform.so) that the driver loads only when
 * it must: the first compile the cache does not answer, a tool's setting or config section to
 * check, --vigil-help. It finds the driver's services (vcc_run, vcc_temp_file, the cache's
 * callbacks, common/) in the driver, which exports them. */
struct vcc_cache_unit;
struct vigil_cc_tool;
struct vcc_transform_part {
    const char *build_id;   /* must be the driver's vcc_build_id */
    /* Compile one C source to output (an object, or assembly with -S); cache: this compile's
     * cache entry to fill (a miss), or NULL. Returns 0 or an exit status. */
    int (*compile_source)(struct vcc_job *job, const struct vcc_input *in, const char *output,
                          struct vcc_cache_unit *cache);
    /* cctool.h's registry of the tools' compiler parts */
    const struct vigil_cc_tool *const *(*all_tools)(size_t *n);
    int (*is_tool_setting)(const char *name, size_t len);
    int (*is_tool_section)(const char *section);
};
/* The part, loaded on the first call; NULL (a message printed) when it is missing or of
 * another build. */
const struct vcc_transform_part *vcc_transform(struct vcc_job *job);
/* Link: the user's arguments with the sources replaced by job->objects, plus the runtime. */
int vcc_link(struct vcc_job *job);

#endif
