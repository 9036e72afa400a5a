/* An allocation-heavy key-value store with many live objects, for bench/leak-alloc.sh: N
 * requests (SET, GET, DEL, APPEND on keys drawn from a skewed pseudo-random sequence) against a
 * chained hash table whose keys and values are heap strings. Each request is parsed from a
 * heap-allocated line, as a server would; about 60% of the keys stay live at exit. Prints a
 * checksum of the answers. usage: kvstore [REQUESTS] (default 200000) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct entry *next;
    char *key;
    char *value;
    size_t len;
};

static struct entry **table;
static size_t buckets = 1024, live;

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static void grow(void)
{
    size_t nb = buckets * 2;
    struct entry **fresh = calloc(nb, sizeof *fresh);
    for (size_t i = 0; i < buckets; i++)
        for (struct entry *e = table[i], *next; e; e = next) {
            next = e->next;
            size_t b = hash(e->key) & (nb - 1);
            e->next = fresh[b];
            fresh[b] = e;
        }
    free(table);
    table = fresh;
    buckets = nb;
}

static struct entry **find(const char *key)
{
    struct entry **link = &table[hash(key) & (buckets - 1)];
    while (*link && strcmp((*link)->key, key) != 0)
        link = &(*link)->next;
    return link;
}

static uint64_t request(const char *line)
{
    char op[8], key[64], value[128];
    if (sscanf(line, "%7s %63s %127s", op, key, value) < 2)
        return 0;
    struct entry **link = find(key);
    if (strcmp(op, "SET") == 0) {
        if (!*link) {
            struct entry *e = malloc(sizeof *e);
            e->next = NULL;
            e->key = strdup(key);
            e->value = NULL;
            *link = e;
            if (++live > 2 * buckets)
                grow();
            link = find(key);
        }
        free((*link)->value);
        (*link)->value = strdup(value);
        (*link)->len = strlen(value);
        return 1;
    }
    if (!*link)
        return 2;
    struct entry *e = *link;
    if (strcmp(op, "GET") == 0)
        return e->len + (unsigned char)e->value[0];
    if (strcmp(op, "APPEND") == 0) {
        size_t add = strlen(value);
        e->value = realloc(e->value, e->len + add + 1);
        memcpy(e->value + e->len, value, add + 1);
        e->len += add;
        return 3;
    }
    *link = e->next;   /* DEL */
    free(e->key);
    free(e->value);
    free(e);
    live--;
    return 4;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    table = calloc(buckets, sizeof *table);
    uint64_t x = 88172645463325252ull, sum = 0;
    static const char *ops[] = {"SET", "SET", "SET", "GET", "GET", "GET", "APPEND", "DEL"};
    for (long i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned k = (unsigned)(x % (uint64_t)(n / 2 + 1));
        char *line = malloc(256);
        snprintf(line, 256, "%s key:%u value-%llu-%.*s", ops[(x >> 40) % 8], k,
                 (unsigned long long)(x >> 20), (int)((x >> 33) % 40), "abcdefghijklmnopqrstuvwxyz0123456789ABCD");
        sum += request(line);
        free(line);
    }
    printf("%ld requests, %zu live keys, checksum %llu\n", n, live, (unsigned long long)sum);
    return 0;
}
