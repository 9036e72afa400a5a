/* wordfreq: counts the words of stdin (letters, digits and apostrophes; case folded) in a hash
 * table and prints the ten most frequent, ties in alphabetical order, and the number of
 * distinct words. A seeded-fault program of bench/preds-faults (FAULT=k selects fault k; 0 is
 * the reference). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAULT
#define FAULT 0
#endif
#define MAX_WORD 32

struct entry {
    char word[MAX_WORD + 1];
    int count;
};

static struct entry *table;
static size_t capacity = 16, used;

static inline unsigned hash(const char *w)
{
    unsigned h = 2166136261u;
    for (; *w; w++)
        h = (h ^ (unsigned char)*w) * 16777619u;
    return h;
}

static inline int fold(int c)
{
    switch (c) {
    case 'A' ... 'Z':
        return c - 'A' + 'a';
    case 'a' ... 'z':
    case '0' ... '9':
        return c;
    case '\'':
#if FAULT == 1
        return 0;                                      /* FAULT-1: an apostrophe ends the word */
#else
        return c;                                      /* FAULT-1 */
#endif
    default:
        return 0;
    }
}

static void grow(void);

static void add(const char *w)
{
#if FAULT == 2
    if (used >= capacity + 1)                          /* FAULT-2: the table is not grown when full */
#else
    if (used * 4 >= capacity * 3)                      /* FAULT-2 */
#endif
        grow();
    size_t i = hash(w) & (capacity - 1);
    for (size_t probes = 0; table[i].count; i = (i + 1) & (capacity - 1)) {
        if (strcmp(table[i].word, w) == 0) {
            table[i].count++;
            return;
        }
        assert(++probes < capacity);                   /* FAULT-2 */
    }
    snprintf(table[i].word, sizeof table[i].word, "%s", w);
    table[i].count = 1;
    used++;
}

static void grow(void)
{
    struct entry *old = table;
    size_t old_capacity = capacity;
    capacity *= 2;
    table = calloc(capacity, sizeof *table);
    used = 0;
    for (size_t i = 0; i < old_capacity; i++)
        for (int k = 0; k < old[i].count; k++)
            add(old[i].word);
    free(old);
}

static int by_count(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
#if FAULT == 3
    return strncmp(x->word, y->word, 3);               /* FAULT-3: ties ordered by 3 letters only */
#else
    return strcmp(x->word, y->word);                   /* FAULT-3 */
#endif
}

int main(void)
{
    char word[MAX_WORD + 1];
    int len = 0, c;
    table = calloc(capacity, sizeof *table);
    while ((c = getchar()) != EOF) {
        int f = fold(c);
        if (f) {
#if FAULT == 4
            if (len <= MAX_WORD - 8)                   /* FAULT-4: words cut at 24 letters */
#else
            if (len < MAX_WORD)                        /* FAULT-4 */
#endif
                word[len++] = (char)f;
            continue;
        }
        if (len) {
            word[len] = '\0';
            add(word);
            len = 0;
        }
    }
    if (len) {
        word[len] = '\0';
        add(word);
    }
    size_t n = 0;
    for (size_t i = 0; i < capacity; i++)
        if (table[i].count)
            table[n++] = table[i];
#if FAULT == 5
    if (n > 100)                                       /* FAULT-5: a bounded sort aborts on big inputs */
        abort();
#endif
    qsort(table, n, sizeof *table, by_count);
    for (size_t i = 0; i < n && i < 10; i++)
        printf("%6d %s\n", table[i].count, table[i].word);
    printf("%zu distinct words\n", n);
    return 0;
}
