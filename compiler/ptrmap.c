/* Pointer map: linear probing, grown at half load. */
#include "ptrmap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(const void *key, size_t cap)
{
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= (uintptr_t)0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

void ptrmap_init(struct ptrmap *m)
{
    memset(m, 0, sizeof *m);
}

void ptrmap_free(struct ptrmap *m)
{
    free(m->keys);
    free(m->values);
    ptrmap_init(m);
}

void ptrmap_clear(struct ptrmap *m)
{
    if (m->cap) {
        memset(m->keys, 0, m->cap * sizeof *m->keys);
        memset(m->values, 0, m->cap * sizeof *m->values);
    }
    m->count = 0;
}

static void grow(struct ptrmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    void **keys = calloc(cap, sizeof *keys), **values = calloc(cap, sizeof *values);
    if (!keys || !values) {
        fputs("vigil-cc: out of memory\n", stderr);
        abort();
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = slot_of(m->keys[i], cap);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        values[j] = m->values[i];
    }
    free(m->keys);
    free(m->values);
    m->keys = keys;
    m->values = values;
    m->cap = cap;
}

void ptrmap_put(struct ptrmap *m, const void *key, void *value)
{
    if ((m->count + 1) * 2 > m->cap)
        grow(m);
    size_t j = slot_of(key, m->cap);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    if (!m->keys[j])
        m->count++;
    m->keys[j] = (void *)key;
    m->values[j] = value;
}

void *ptrmap_get(const struct ptrmap *m, const void *key)
{
    if (!m->cap)
        return NULL;
    size_t j = slot_of(key, m->cap);
    for (; m->keys[j]; j = (j + 1) & (m->cap - 1))
        if (m->keys[j] == key)
            return m->values[j];
    return NULL;
}
