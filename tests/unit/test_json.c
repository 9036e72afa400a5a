/* JSON writer: commas, nesting, escaping, invalid UTF-8, numbers. */
#include "check.h"
#include "json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *render(void (*build)(struct vigil_json *j), int pretty)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    struct vigil_json j;
    vigil_json_init(&j, f, pretty);
    build(&j);
    vigil_json_finish(&j);
    fclose(f);
    return text;
}

static void build_document(struct vigil_json *j)
{
    vigil_json_object_begin(j);
    vigil_json_key(j, "name");
    vigil_json_string(j, "a \"quoted\"\\path\n\t\x01\x7f");
    vigil_json_key(j, "utf8");
    vigil_json_string(j, "caf\xc3\xa9 \xff \xc0\xaf \xed\xa0\x80 \xe2\x82");
    vigil_json_key(j, "list");
    vigil_json_array_begin(j);
    vigil_json_uint(j, UINT64_MAX);
    vigil_json_int(j, -5);
    vigil_json_double(j, 0.1);
    vigil_json_double(j, NAN);
    vigil_json_bool(j, 1);
    vigil_json_null(j);
    vigil_json_string(j, NULL);
    vigil_json_array_end(j);
    vigil_json_key(j, "empty");
    vigil_json_object_begin(j);
    vigil_json_object_end(j);
    vigil_json_key(j, "none");
    vigil_json_array_begin(j);
    vigil_json_array_end(j);
    vigil_json_object_end(j);
}

static void build_nested(struct vigil_json *j)
{
    vigil_json_array_begin(j);
    vigil_json_object_begin(j);
    vigil_json_key(j, "k");
    vigil_json_uint(j, 1);
    vigil_json_object_end(j);
    vigil_json_object_begin(j);
    vigil_json_object_end(j);
    vigil_json_array_end(j);
}

int main(void)
{
    char *compact = render(build_document, 0);
    const char *want =
        "{\"name\":\"a \\\"quoted\\\"\\\\path\\n\\t\\u0001\\u007f\","
        "\"utf8\":\"caf\xc3\xa9 \\ufffd \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd \\ufffd\\ufffd\","
        "\"list\":[18446744073709551615,-5,0.1,null,true,null,null],"
        "\"empty\":{},\"none\":[]}\n";
    CHECK(strcmp(compact, want) == 0, "compact document:\n%s\nwant:\n%s", compact, want);
    free(compact);

    char *pretty = render(build_nested, 1);
    const char *want_pretty = "[\n  {\n    \"k\": 1\n  },\n  {}\n]\n";
    CHECK(strcmp(pretty, want_pretty) == 0, "pretty document:\n%s\nwant:\n%s", pretty, want_pretty);
    free(pretty);
    return CHECK_DONE("test_json");
}
