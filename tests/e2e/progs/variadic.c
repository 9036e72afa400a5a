// Variadic functions: va_arg of several types, va_copy, vsnprintf, forwarding.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static double sum_mixed(const char *types, ...) {
    va_list ap, again;
    va_start(ap, types);
    va_copy(again, ap);
    double total = 0;
    for (const char *t = types; *t; t++) {
        switch (*t) {
        case 'i': total += va_arg(ap, int); break;
        case 'l': total += (double)va_arg(ap, long); break;
        case 'd': total += va_arg(ap, double); break;
        case 's': total += (double)strlen(va_arg(ap, const char *)); break;
        }
    }
    /* Walk the copy a second time: only the first argument, doubled. */
    if (types[0] == 'i') total += 2 * va_arg(again, int);
    va_end(again);
    va_end(ap);
    return total;
}

static int format_into(char *buf, size_t size, const char *fmt, ...) {
    va_list ap, copy;
    va_start(ap, fmt);
    va_copy(copy, ap);
    int needed = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    int written = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return needed == written ? written : -1;
}

static long max_of(int count, ...) {
    va_list ap;
    va_start(ap, count);
    long best = va_arg(ap, long);
    for (int i = 1; i < count; i++) { long v = va_arg(ap, long); if (v > best) best = v; }
    va_end(ap);
    return best;
}

int main(void) {
    printf("sum=%.3f\n", sum_mixed("idlsi", 4, 2.5, 100000L, "hello", -3));
    printf("sum=%.3f\n", sum_mixed("ddddddddddi", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11));
    char buf[128];
    int n = format_into(buf, sizeof buf, "[%5d|%-6s|%08.3f|%c|%lx]", 42, "ab", 3.14159, 'z', 0xbeefUL);
    printf("%d %s\n", n, buf);
    printf("max=%ld\n", max_of(7, 3L, -9L, 77L, 12L, 76L, 0L, 5L));
    return 0;
}
