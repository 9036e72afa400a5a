// Nested loops with break, continue and goto; the checksum depends on every iteration.
#include <stdio.h>

static unsigned long mix(unsigned long h, unsigned long v) { return (h ^ v) * 1099511628211UL; }

int main(void) {
    unsigned long h = 1469598103934665603UL;
    int count = 0;
    for (int i = 0; i < 60; i++) {
        if (i % 7 == 3) continue;
        for (int j = 0; j < 50; j++) {
            if (j > i) break;
            int k = 0;
            while (k < j) {
                if ((i + j + k) % 11 == 0) { k += 2; continue; }
                h = mix(h, (unsigned long)(i * 10000 + j * 100 + k));
                k++;
            }
            do { count++; } while (count % 3 != 0);
        }
        if (i == 57) goto done;
    }
    printf("not reached\n");
done:;
    /* A loop built from goto only. */
    int n = 0, total = 0;
again:
    total += n * n;
    if (++n < 1000) goto again;
    /* Search with early exit from a doubly nested loop through goto. */
    int found_i = -1, found_j = -1;
    for (int i = 1; i < 100; i++)
        for (int j = 1; j < 100; j++)
            if (i * i + j * j == 97 * 97 && i < j) { found_i = i; found_j = j; goto found; }
found:
    printf("hash=%lx count=%d total=%d found=%d,%d\n", h, count, total, found_i, found_j);
    return 0;
}
