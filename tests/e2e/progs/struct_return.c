// Structs passed and returned by value (small in registers, large in memory), unions, bitfields.
#include <stdio.h>

struct pair { int a, b; };
struct mixed { double x; float y; char tag; };
struct big { long values[12]; char name[20]; };
struct bits { unsigned low : 3, mid : 9, high : 20; };
union number { double d; unsigned long u; };

static struct pair make_pair(int a, int b) { return (struct pair){ a + b, a - b }; }
static struct mixed scale(struct mixed m, double f) { m.x *= f; m.y *= (float)f; m.tag++; return m; }
static struct big fill(int seed) {
    struct big b;
    for (int i = 0; i < 12; i++) b.values[i] = (long)seed * (i + 1);
    snprintf(b.name, sizeof b.name, "big-%d", seed);
    return b;
}
static long sum_big(struct big b) { long s = 0; for (int i = 0; i < 12; i++) s += b.values[i]; return s; }
static struct bits bump(struct bits x) { x.low++; x.mid += 3; x.high ^= 0x5a5a5; return x; }

int main(void) {
    struct pair p = make_pair(17, 5);
    printf("pair %d %d\n", p.a, p.b);
    struct mixed m = { 1.5, 2.25f, 'a' };
    for (int i = 0; i < 4; i++) m = scale(m, 1.5);
    printf("mixed %.4f %.4f %c\n", m.x, (double)m.y, m.tag);
    long s = 0;
    for (int i = 0; i < 50; i++) { struct big b = fill(i); s += sum_big(b) + b.name[4]; }
    printf("big %ld %s\n", s, fill(99).name);
    struct bits bt = { 1, 2, 3 };
    for (int i = 0; i < 10; i++) bt = bump(bt);
    printf("bits %u %u %u\n", bt.low, bt.mid, bt.high);
    union number n = { .d = 1.0 };
    printf("union %lx\n", n.u);
    return 0;
}
