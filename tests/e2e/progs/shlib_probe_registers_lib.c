// The shared library of shlib_probe_registers.c (not a program on its own). Each function keeps
// more values live than there are argument registers, across the branch, return and load probes
// of its instrumented copy; those probes are preserve_most calls, so values may sit in r10 and
// r11 around them.
#include <stdarg.h>

long keep_many(const long *p, const long *q, long t, void (*callback)(long))
{
    long a = p[0], b = p[1], c = p[2], d = p[3], e = p[4], f = p[5], g = p[6], h = p[7];
    long i = q[0] * a, j = q[1] * b, k = q[2] * c, l = q[3] * d, m = q[4] * e, n = q[5] * f;
    if (t > q[2])
        callback(t);
    return (a ^ i) + (b ^ j) * 3 + (c ^ k) * 5 + (d ^ l) * 7 + (e ^ m) * 11 + (f ^ n) * 13 + g * 17 + h * 19;
}

long keep_many_variadic(const long *p, const long *q, ...)
{
    va_list ap;
    va_start(ap, q);
    long extra = va_arg(ap, long);
    va_end(ap);
    long a = p[0], b = p[1], c = p[2], d = p[3], e = p[4], f = p[5], g = p[6], h = p[7];
    long i = q[0] * a, j = q[1] * b, k = q[2] * c, l = q[3] * d, m = q[4] * e, n = q[5] * f;
    return extra + (a ^ i) + (b ^ j) * 3 + (c ^ k) * 5 + (d ^ l) * 7 + (e ^ m) * 11 + (f ^ n) * 13 + g * 17 +
           h * 19;
}
