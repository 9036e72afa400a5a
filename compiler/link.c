/* The link of a vigil-cc command: the user's arguments with the sources replaced by their
 * objects, plus the runtime. Part of the driver (no LLVM): a link loads no transforming part. */
#include "pipeline.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

int vcc_link(struct vcc_job *job)
{
    const struct vcc_args *a = &job->args;
    int runtime = vcc_links_runtime(a);
    char archive[PATH_MAX + 32], formats[PATH_MAX + 32], dynlist[PATH_MAX + 64];
    snprintf(archive, sizeof archive, "%s/libvigil.a", job->libdir);
    snprintf(formats, sizeof formats, "%s/libvigil_common.a", job->libdir);
    snprintf(dynlist, sizeof dynlist, "-Wl,--dynamic-list=%s/vigil.dynlist", job->libdir);
    for (const char *lib = archive; runtime && lib; lib = lib == archive ? formats : NULL)
        if (access(lib, R_OK) != 0) {
            fprintf(stderr, "vigil-cc: the vigil runtime is missing: %s\n", lib);
            return 1;
        }
    struct vcc_cmd cmd = {0};
    vcc_cmd_push(&cmd, job->clang);
    int k = 0;
    for (int i = 0; i < a->argc; i++) {
        unsigned r = a->roles[i];
        if (r & VCC_IS_INPUT) {
            const struct vcc_input *in = &a->inputs[k];
            const char *object = job->objects ? job->objects[k] : NULL;
            k++;
            if (!object) {
                vcc_cmd_push(&cmd, in->path);
            } else if (in->xlang) { /* an object, whatever -x says for the inputs around it */
                vcc_cmd_push(&cmd, "-x");
                vcc_cmd_push(&cmd, "none");
                vcc_cmd_push(&cmd, object);
                vcc_cmd_push(&cmd, "-x");
                vcc_cmd_push(&cmd, in->xlang);
            } else {
                vcc_cmd_push(&cmd, object);
            }
        } else if (r & (VCC_TO_LINK | VCC_IS_OUTPUT | VCC_IS_LANG)) {
            vcc_cmd_push(&cmd, a->argv[i]);
        }
    }
    if (runtime) {
        vcc_cmd_push(&cmd, "-Wl,--whole-archive");
        vcc_cmd_push(&cmd, archive);
        vcc_cmd_push(&cmd, "-Wl,--no-whole-archive");
        vcc_cmd_push(&cmd, formats);   /* on demand: only what the runtime calls */
        if (!a->static_link) vcc_cmd_push(&cmd, dynlist);
        vcc_cmd_push(&cmd, "-lpthread");
        vcc_cmd_push(&cmd, "-ldl");
        /* Only the report formats' scorers use libm, and the runtime links none of them: as
         * needed, so that a program that does not use libm does not map it (~300 KB resident). */
        vcc_cmd_push(&cmd, "-Wl,--push-state,--as-needed");
        vcc_cmd_push(&cmd, "-lm");
        vcc_cmd_push(&cmd, "-Wl,--pop-state");
    }
    int status = vcc_run(job, cmd.v);
    vcc_cmd_free(&cmd);
    return status;
}
