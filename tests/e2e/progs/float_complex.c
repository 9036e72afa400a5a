// long double and _Complex arithmetic.
// e2e-link: -lm
#include <complex.h>
#include <math.h>
#include <stdio.h>

static long double series_e(int terms) {
    long double e = 0, term = 1;
    for (int i = 0; i < terms; i++) { e += term; term /= (long double)(i + 1); }
    return e;
}

static double complex mandel_step(double complex z, double complex c) { return z * z + c; }

static int escape_time(double complex c) {
    double complex z = 0;
    for (int i = 0; i < 200; i++) { z = mandel_step(z, c); if (cabs(z) > 2.0) return i; }
    return 200;
}

int main(void) {
    printf("e=%.18Lf\n", series_e(30));
    long double x = 1.0L / 3.0L;
    printf("third=%.20Lf sqrtl2=%.18Lf\n", x, sqrtl(2.0L));
    long total = 0;
    for (int y = -10; y <= 10; y++)
        for (int xx = -20; xx <= 10; xx++) total += escape_time(xx / 10.0 + y / 10.0 * I);
    printf("mandel=%ld\n", total);
    long double complex w = 1.0L + 2.0L * I;
    for (int i = 0; i < 5; i++) w = w * w / (1.0L + cabsl(w));
    printf("w=%.12Lf%+.12Lfi\n", creall(w), cimagl(w));
    float complex f = cexpf(I * 3.14159265f);
    printf("f=%.5f%+.5fi\n", (double)crealf(f), (double)cimagf(f));
    return 0;
}
