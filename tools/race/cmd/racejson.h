/* A small JSON reader for race.json (the race tool's report): the whole document as a tree,
 * each value with the line it starts on, for messages that name the place of a problem. */
#ifndef RACE_JSON_H
#define RACE_JSON_H
#include <stddef.h>

enum rj_type { RJ_NULL, RJ_BOOL, RJ_NUMBER, RJ_STRING, RJ_ARRAY, RJ_OBJECT };

struct rj_value {
    enum rj_type type;
    int line;
    double number;               /* RJ_NUMBER; RJ_BOOL: 0 or 1 */
    char *string;                /* RJ_STRING (NUL-terminated; NULs inside are cut) */
    size_t n;                    /* RJ_ARRAY, RJ_OBJECT: members */
    struct rj_value *items;
    char **keys;                 /* RJ_OBJECT */
};

/* Parses text; 0, or -1 with "LINE:COLUMN: what was expected" in err. */
int rj_parse(const char *text, size_t len, struct rj_value *out, char *err, size_t errlen);
void rj_free(struct rj_value *v);
/* The member key of an object, or NULL (also when v is not an object). */
const struct rj_value *rj_get(const struct rj_value *v, const char *key);

#endif
