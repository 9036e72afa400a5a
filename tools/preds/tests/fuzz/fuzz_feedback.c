// fuzz-extra: tools/preds/cmd/feedback.c
/* libFuzzer harness for the feedback report parser (tools/preds/cmd/feedback.c): any input either is
 * rejected with a "name:line:" message or parses; a parsed report written back out must parse
 * again to the same values (the writer and the parser agree on the grammar). */
#include "../../cmd/feedback.h"

#include <stdlib.h>
#include <string.h>

static void same(const struct vigil_feedback *a, const struct vigil_feedback *b)
{
    if (a->pid != b->pid || a->collect != b->collect || a->binary != b->binary ||
        a->nsites != b->nsites || a->label != b->label || a->stack_depth != b->stack_depth ||
        memcmp(a->stack, b->stack, sizeof a->stack) != 0 ||
        (a->nsites && memcmp(a->sites, b->sites, a->nsites * sizeof *a->sites) != 0))
        abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vigil_feedback fb, again;
    char err[256];
    if (vigil_feedback_parse((const char *)data, size, "fuzz", &fb, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz:", 5) != 0)
            abort();
        return 0;
    }
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        abort();
    if (vigil_feedback_write(f, &fb) != 0)
        abort();
    fclose(f);
    if (vigil_feedback_parse(out, len, "rewritten", &again, err, sizeof err) != 0)
        abort();
    same(&fb, &again);
    vigil_feedback_free(&again);
    vigil_feedback_free(&fb);
    free(out);
    return 0;
}
