/* The findings page (cmd/html.c): `vigil report --html` and the leak tool's `vigil html`. */
#ifndef VIGIL_CMD_HTML_H
#define VIGIL_CMD_HTML_H
#include <stddef.h>

struct vigil_findings;

/* Write one self-contained page of the findings (in their order) to path, atomically: a
 * temporary file beside it, renamed into place. title and intro are plain text (intro: one
 * paragraph per line). 0, or -1 with a message in err. */
int cmd_findings_page(const char *path, const struct vigil_findings *l, const char *title, const char *intro,
                      char *err, size_t errlen);

#endif
