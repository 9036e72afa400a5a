/* The instrumentation cache in vigil-cc (docs/cache.md; the format is common/cachefmt.h).
 * One compile of a C source is one entry, keyed by a SHA-256 of its preprocessed source, the
 * arguments that decide the object, vigil-cc's build id, the LLVM and clang versions and every
 * VIGIL_CC_* setting that can change the output. A hit copies the stored object to the output
 * and replays the stored warnings: no front end, -O pipeline, transform or back end. */
#ifndef VIGIL_CC_CACHE_H
#define VIGIL_CC_CACHE_H
#include "pipeline.h"
#include "transform.h"

struct vcc_cache_unit;

/* Once per command, after classification: reads the cache settings and decides whether the
 * cache takes part (job->cache stays NULL when not); rewrites the paths of the command line
 * under VIGIL_CC_CACHE_BASEDIR relative to the working directory. */
void vcc_cache_setup(struct vcc_job *job);

/* Per C source. NULL when the cache does not take this compile: compile as usual. Otherwise
 * the preprocessor has run (and written the dependency file -MD/-MMD asked for) and the key is
 * known; on a hit (*hit = 1) the output is written and the stored warnings printed, and the
 * caller only calls vcc_cache_end. */
struct vcc_cache_unit *vcc_cache_begin(struct vcc_job *job, const struct vcc_input *in, const char *output,
                                       int *hit);

/* The front end must not write the dependency file again (the preprocessor run did). */
int vcc_cache_deps_written(const struct vcc_cache_unit *u);
/* Extra arguments of the front end: -fdebug-prefix-map=CWD=. under the base directory, and
 * -fcolor-diagnostics when stderr is a terminal (the compilers' stderr goes to a file). NULL
 * entries end the list. */
const char *const *vcc_cache_front_end_args(const struct vcc_cache_unit *u);
const char *const *vcc_cache_back_end_args(const struct vcc_cache_unit *u);
/* Runs a front- or back-end command with its stderr captured (printed at once, and kept for
 * the entry). Returns what vcc_run returns. */
int vcc_cache_run(struct vcc_job *job, struct vcc_cache_unit *u, char **argv);

/* The transform's callback (vigil_transform_settings.on_function; ctx is the unit). */
void vcc_cache_on_function(void *ctx, const struct vigil_function_report *report);
/* The module's totals, or the reason it was compiled uninstrumented (then stats is NULL). */
void vcc_cache_module(struct vcc_cache_unit *u, const struct vigil_transform_stats *stats, const char *uninstrumented);

/* After the compile: stores the output as an entry when status is 0 (and it was a miss), updates
 * the counters, evicts past the size limit, frees the unit. */
void vcc_cache_end(struct vcc_job *job, struct vcc_cache_unit *u, int status, const char *output);

#endif
