// Function pointers, tables of them, qsort and bsearch callbacks.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct person { char name[16]; int age; };

static int by_age_then_name(const void *a, const void *b) {
    const struct person *x = a, *y = b;
    if (x->age != y->age) return x->age < y->age ? -1 : 1;
    return strcmp(x->name, y->name);
}
static int compare_ints(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int mul(int a, int b) { return a * b; }
static int apply(int (*f)(int, int), int a, int b) { return f(a, b); }

typedef int (*binop)(int, int);
static binop pick(int i) { static const binop ops[] = { add, sub, mul }; return ops[i % 3]; }

int main(void) {
    int numbers[500];
    unsigned seed = 12345;
    for (int i = 0; i < 500; i++) { seed = seed * 1103515245u + 12345u; numbers[i] = (int)(seed >> 16) % 1000; }
    qsort(numbers, 500, sizeof numbers[0], compare_ints);
    long checksum = 0;
    for (int i = 0; i < 500; i++) checksum = checksum * 7 + numbers[i];
    int key = numbers[250];
    int *hit = bsearch(&key, numbers, 500, sizeof numbers[0], compare_ints);
    printf("sorted checksum=%ld first=%d last=%d found=%d\n", checksum, numbers[0], numbers[499], hit ? *hit : -1);

    struct person people[] = { {"mia", 31}, {"ada", 36}, {"bob", 31}, {"eve", 22}, {"zed", 36}, {"cy", 5} };
    size_t n = sizeof people / sizeof people[0];
    qsort(people, n, sizeof people[0], by_age_then_name);
    for (size_t i = 0; i < n; i++) printf("%s:%d ", people[i].name, people[i].age);
    printf("\n");

    int acc = 1;
    for (int i = 0; i < 30; i++) acc = apply(pick(i), acc, i + 1) % 100003;
    printf("acc=%d\n", acc);
    return 0;
}
