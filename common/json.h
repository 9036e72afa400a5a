/* A tiny streaming JSON writer: the one place that knows JSON's escaping and comma rules.
 * Used by the `vigil` command (and usable by tools): it allocates nothing and writes to a
 * FILE as it goes. Strings are emitted as valid UTF-8: invalid bytes become U+FFFD. */
#ifndef VIGIL_JSON_H
#define VIGIL_JSON_H
#include <stdint.h>
#include <stdio.h>

#define VIGIL_JSON_MAX_DEPTH 32

struct vigil_json {
    FILE *out;
    int pretty;                                  /* newlines and two-space indentation */
    int depth;
    int after_key;                               /* a key was written, its value comes next */
    unsigned char has_items[VIGIL_JSON_MAX_DEPTH]; /* per open container: needs a comma */
};

void vigil_json_init(struct vigil_json *j, FILE *out, int pretty);
void vigil_json_object_begin(struct vigil_json *j);
void vigil_json_object_end(struct vigil_json *j);
void vigil_json_array_begin(struct vigil_json *j);
void vigil_json_array_end(struct vigil_json *j);
void vigil_json_key(struct vigil_json *j, const char *key);
void vigil_json_string(struct vigil_json *j, const char *s);   /* NULL writes null */
void vigil_json_uint(struct vigil_json *j, uint64_t v);
void vigil_json_int(struct vigil_json *j, int64_t v);
void vigil_json_double(struct vigil_json *j, double v);        /* NaN and infinities: null */
void vigil_json_bool(struct vigil_json *j, int v);
void vigil_json_null(struct vigil_json *j);
/* Ends the document with a newline (call after the outermost value). */
void vigil_json_finish(struct vigil_json *j);

#endif
