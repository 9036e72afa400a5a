/* A small open-addressing map from pointers to pointers (LLVM values to their clones, blocks
 * to indices). Keys are never NULL; lookups of absent keys return NULL. */
#ifndef VIGIL_PTRMAP_H
#define VIGIL_PTRMAP_H
#include <stddef.h>

struct ptrmap {
    void **keys, **values;
    size_t cap, count;      /* cap is a power of two (or 0) */
};

void ptrmap_init(struct ptrmap *m);
void ptrmap_free(struct ptrmap *m);
void ptrmap_clear(struct ptrmap *m);
/* Aborts when memory runs out (the compiler cannot go on without it). */
void ptrmap_put(struct ptrmap *m, const void *key, void *value);
void *ptrmap_get(const struct ptrmap *m, const void *key);

#endif
