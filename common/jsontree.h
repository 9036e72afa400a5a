/* A small JSON reader for the tools' report files (race.json, hotspot.json): the whole
 * document as a tree. Recursive descent, depth-limited, strict (RFC 8259: no trailing commas,
 * no comments, no leading zeros); every value keeps the line it starts on, for messages that
 * name the place of a problem (common/json.h is the writer; findings.c reads its own schema). */
#ifndef VIGIL_JSONTREE_H
#define VIGIL_JSONTREE_H
#include <stddef.h>

enum vigil_jv_type { VIGIL_JV_NULL, VIGIL_JV_BOOL, VIGIL_JV_NUMBER, VIGIL_JV_STRING, VIGIL_JV_ARRAY, VIGIL_JV_OBJECT };

struct vigil_jv {
    enum vigil_jv_type type;
    int line;
    double number;               /* VIGIL_JV_NUMBER; VIGIL_JV_BOOL: 0 or 1 */
    char *string;                /* VIGIL_JV_STRING, NUL-terminated (a \u0000 inside ends it) */
    size_t n;                    /* VIGIL_JV_ARRAY, VIGIL_JV_OBJECT: members */
    struct vigil_jv *items;
    char **keys;                 /* VIGIL_JV_OBJECT */
};

#define VIGIL_JV_MAX_DEPTH 64

/* Parses text[0..len) (NULs included: not a C string); 0, or -1 with "LINE:COLUMN: expected
 * WHAT" in err (out is then empty). */
int vigil_jv_parse(const char *text, size_t len, struct vigil_jv *out, char *err, size_t errlen);
void vigil_jv_free(struct vigil_jv *v);
/* The member key of an object (the last one, if repeated), or NULL (also when v is not one). */
const struct vigil_jv *vigil_jv_get(const struct vigil_jv *v, const char *key);

#endif
