// fuzz-extra: tools/memcheck/runtime/pattern.c
/* libFuzzer harness for the memory checker's pattern option (memcheck.pattern=) and its read
 * rule: any text is parsed or rejected; an accepted pattern fills a buffer that every load
 * inside it then reads as uninitialized, and no load reads outside its block. */
#include "../../runtime/pattern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[64];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = 0;
    uint8_t p[8];
    if (mc_pattern_parse(text, size, p) != 0)
        return 0;
    uint8_t buf[64];
    mc_pattern_fill(p, (uintptr_t)buf, (uintptr_t)buf + sizeof buf);
    struct mc_block b = {(uintptr_t)buf + 8, 40};
    size_t at;
    for (size_t off = 8; off + 8 <= 48; off++)
        if (!mc_pattern_read(p, &b, (uintptr_t)buf + off, 8, 0, &at))
            abort();   /* every byte filled: must be uninitialized */
    return 0;
}
