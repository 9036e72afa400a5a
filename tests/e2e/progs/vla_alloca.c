// Variable-length arrays and alloca inside loops and recursion.
#include <alloca.h>
#include <stdio.h>
#include <string.h>

static long vla_sum(int n) {
    long matrix[n][n + 1];
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= n; j++) matrix[i][j] = (long)i * j + n;
    long s = 0;
    for (int i = 0; i < n; i++) s += matrix[i][n - i];
    return s;
}

static int alloca_recursive(int n) {
    if (n == 0) return 0;
    char *buf = alloca((size_t)n * 8 + 1);
    memset(buf, 'a' + n % 26, (size_t)n * 8);
    buf[n * 8] = 0;
    return (int)strlen(buf) + alloca_recursive(n - 1);
}

int main(void) {
    long total = 0;
    for (int n = 1; n < 120; n++) total += vla_sum(n);
    printf("vla total=%ld\n", total);
    printf("alloca total=%d\n", alloca_recursive(200));
    for (int round = 0; round < 3; round++) {
        int len = 10 + round * 5;
        char text[len + 1];
        for (int i = 0; i < len; i++) text[i] = (char)('A' + (i * 7 + round) % 26);
        text[len] = 0;
        printf("%s\n", text);
    }
    return 0;
}
