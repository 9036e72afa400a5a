/* See maps.h. */
#include "maps.h"

#include <string.h>

/* Hex digits at *p up to a character not one: their value; NULL *p when there are none or
 * more than 16. */
static uintptr_t hex(const char **p)
{
    uintptr_t v = 0;
    int n = 0;
    for (;; n++) {
        char c = (*p)[n];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            break;
        if (n == 16) {
            *p = NULL;
            return 0;
        }
        v = v << 4 | (uintptr_t)d;
    }
    *p = n ? *p + n : NULL;
    return v;
}

int leak_maps_line(const char *line, uintptr_t *lo, uintptr_t *hi)
{
    const char *p = line;
    uintptr_t a = hex(&p);
    if (!p || *p != '-')
        return 0;
    p++;
    uintptr_t b = hex(&p);
    if (!p || *p != ' ' || p[1] != 'r' || a >= b)
        return 0;
    if (strstr(p, "[vvar]") || strstr(p, "[vsyscall]"))
        return 0;
    *lo = a;
    *hi = b;
    return 1;
}
