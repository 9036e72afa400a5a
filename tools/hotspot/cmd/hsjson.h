/* A small JSON reader for hotspot.json (the hot-spot profiler's report): the whole document as
 * a tree. Recursive descent, depth-limited, strict (RFC 8259: no trailing commas, no comments,
 * no leading zeros); every value keeps the line it starts on, for messages that name the place
 * of a problem. No dependency on the rest of the command (tests/test_profile.c, fuzz). */
#ifndef HS_JSON_H
#define HS_JSON_H
#include <stddef.h>

enum hj_type { HJ_NULL, HJ_BOOL, HJ_NUMBER, HJ_STRING, HJ_ARRAY, HJ_OBJECT };

struct hj_value {
    enum hj_type type;
    int line;
    double number;               /* HJ_NUMBER; HJ_BOOL: 0 or 1 */
    char *string;                /* HJ_STRING, NUL-terminated (a \u0000 inside ends it) */
    size_t n;                    /* HJ_ARRAY, HJ_OBJECT: members */
    struct hj_value *items;
    char **keys;                 /* HJ_OBJECT */
};

#define HJ_MAX_DEPTH 64

/* Parses text[0..len) (NULs included: not a C string); 0, or -1 with "LINE:COLUMN: expected
 * WHAT" in err (out is then empty). */
int hj_parse(const char *text, size_t len, struct hj_value *out, char *err, size_t errlen);
void hj_free(struct hj_value *v);
/* The member key of an object (the last one, if repeated), or NULL (also when v is not one). */
const struct hj_value *hj_get(const struct hj_value *v, const char *key);

#endif
