// fuzz-extra: tools/leak/runtime/maps.c
/* libFuzzer harness for the leak tool's /proc/self/maps line parser: any text, line by line,
 * is kept or rejected; a kept line has lo < hi, a readable permission field right after its
 * bounds, and is neither [vvar] nor [vsyscall]. */
#include "../../runtime/maps.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    for (char *line = text, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        uintptr_t lo = 0, hi = 0;
        if (leak_maps_line(line, &lo, &hi)) {
            const char *dash = strchr(line, '-'), *space = dash ? strchr(dash, ' ') : NULL;
            if (lo >= hi || !space || space[1] != 'r' || strstr(line, "[vvar]") || strstr(line, "[vsyscall]"))
                abort();
        }
    }
    free(text);
    return 0;
}
