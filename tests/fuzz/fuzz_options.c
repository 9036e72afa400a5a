/* libFuzzer harness for the VIGIL_OPTIONS parser (common/options.c): any text either parses
 * or yields messages naming the source; every field stays a valid value (strings terminated,
 * enums one of their choices); formatting every option and parsing the result back gives the
 * same options. */
#include "options.h"

#include <stdlib.h>
#include <string.h>

static int errors_well_formed;

static void on_error(void *arg, const char *msg)
{
    (void)arg;
    if (strstr(msg, "VIGIL_OPTIONS") == NULL)
        errors_well_formed = 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct vigil_options o, again;
    vigil_options_defaults(&o);
    errors_well_formed = 1;
    vigil_options_parse(&o, text, "VIGIL_OPTIONS", on_error, NULL);
    if (!errors_well_formed)
        abort();   /* a message that does not name its source */
    /* Round trip: the formatted values, set again one by one, must be accepted as they are. */
    vigil_options_defaults(&again);
    for (size_t i = 0; i < vigil_option_count; i++) {
        char value[VIGIL_OPT_STRING_MAX], back[VIGIL_OPT_STRING_MAX], why[256];
        vigil_options_format(&o, i, value, sizeof value);
        if (memchr(value, '\0', sizeof value) == NULL)
            abort();
        if (vigil_options_set(&again, vigil_option_table[i].name, value, why, sizeof why) != 0)
            abort();   /* the parser refused a value it produced itself */
        vigil_options_format(&again, i, back, sizeof back);
        if (strcmp(value, back) != 0)
            abort();
    }
    free(text);
    return 0;
}
