// The malloc family and string functions (vigil hooks them): growth, shrink, free, strdup.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; char *text; size_t length; };

int main(void) {
    struct node *list = NULL;
    for (int i = 0; i < 2000; i++) {
        struct node *n = malloc(sizeof *n);
        char buf[64];
        snprintf(buf, sizeof buf, "item-%d-%x", i, i * 2654435761u);
        n->text = strdup(buf);
        n->length = strlen(n->text);
        n->next = list;
        list = n;
    }
    size_t total = 0;
    int freed = 0;
    struct node **link = &list;
    while (*link) {
        struct node *n = *link;
        total += n->length;
        if (n->length % 3 == 0) { *link = n->next; free(n->text); free(n); freed++; }
        else link = &n->next;
    }
    char *grow = NULL;
    size_t len = 0;
    for (int i = 0; i < 500; i++) {
        grow = realloc(grow, len + 8);
        memcpy(grow + len, "abcdefg", 7);
        len += 7;
        grow[len] = 0;
    }
    grow = realloc(grow, 50);
    grow[49] = 0;
    int *zeros = calloc(1000, sizeof *zeros);
    long zsum = 0;
    for (int i = 0; i < 1000; i++) zsum += zeros[i];
    void *aligned = NULL;
    int rc = posix_memalign(&aligned, 64, 256);
    printf("total=%zu freed=%d grow=%s zsum=%ld aligned=%d\n", total, freed, grow, zsum, rc == 0 && ((unsigned long)aligned % 64) == 0);
    free(aligned);
    free(zeros);
    free(grow);
    while (list) { struct node *n = list; list = n->next; free(n->text); free(n); }
    return 0;
}
