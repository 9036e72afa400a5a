/* csvstat: per column of a comma-separated table on stdin, the count of numeric cells, their
 * sum, minimum and maximum, and the longest text cell. Quoted cells may hold commas, tabs and
 * doubled quotes; a backslash escapes the next character. A seeded-fault program of
 * bench/preds-faults (FAULT=k selects fault k; 0 is the reference). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAULT
#define FAULT 0
#endif
#define MAX_COLS 16
#define MAX_CELL 48

struct column {
    long count, sum, min, max;
    int longest;
};

static struct column cols[MAX_COLS];
static int ncols;

static inline int is_number(const char *s, int len)
{
    int i = 0;
    if (len == 0)
        return 0;
#if FAULT == 3
    if (s[0] == '-')                                   /* FAULT-3: '+' is not accepted */
        i = 1;
#else
    if (s[0] == '-' || s[0] == '+')                    /* FAULT-3 */
        i = 1;
#endif
    if (i == len)
        return 0;
    for (; i < len; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

static void add_cell(int col, const char *cell, int len)
{
#if FAULT == 4
    assert(col <= MAX_COLS - 2);                       /* FAULT-4: one column too few allowed */
#else
    assert(col <= MAX_COLS - 1);                       /* FAULT-4 */
#endif
    struct column *c = &cols[col];
    if (col >= ncols)
        ncols = col + 1;
    if (is_number(cell, len)) {
        long v = strtol(cell, NULL, 10);
        if (c->count == 0 || v < c->min)
            c->min = v;
#if FAULT == 5
        if (c->count == 0 || v > c->max + 1)           /* FAULT-5: a maximum one above the last is missed */
#else
        if (c->count == 0 || v > c->max)               /* FAULT-5 */
#endif
            c->max = v;
        c->sum += v;
        c->count++;
    } else if (len > c->longest) {
        c->longest = len;
    }
}

int main(void)
{
    char cell[MAX_CELL + 1];
    int len = 0, col = 0, quoted = 0, ch, rows = 0;
    while ((ch = getchar()) != EOF) {
        switch (ch) {
        case '"':
            if (quoted) {
                int next = getchar();
                if (next == '"') {
                    if (len < MAX_CELL)
                        cell[len++] = '"';
                    break;
                }
                quoted = 0;
                if (next != EOF)
                    ungetc(next, stdin);
            } else {
                quoted = 1;
            }
            break;
        case '\t':
#if FAULT == 1
            if (quoted)                                /* FAULT-1: a tab ends a quoted cell */
                quoted = 0;
#endif
            if (len < MAX_CELL)
                cell[len++] = ' ';
            break;
        case '\\':
            ch = getchar();
            if (ch == EOF)
                break;
#if FAULT == 2
            if (len < MAX_CELL - 1 && ch != 'n')       /* FAULT-2: an escaped n is dropped */
#else
            if (len < MAX_CELL)                        /* FAULT-2 */
#endif
                cell[len++] = (char)ch;
            break;
        case ',':
            if (quoted) {
                if (len < MAX_CELL)
                    cell[len++] = ',';
                break;
            }
            cell[len] = '\0';
            add_cell(col++, cell, len);
            len = 0;
            break;
        case '\n':
            cell[len] = '\0';
            add_cell(col, cell, len);
            rows++;
            col = 0, len = 0, quoted = 0;
            break;
        default:
            if (len < MAX_CELL)
                cell[len++] = (char)ch;
            break;
        }
    }
    printf("%d rows, %d columns\n", rows, ncols);
    for (int i = 0; i < ncols; i++)
        printf("col %d: %ld numbers, sum %ld, min %ld, max %ld, longest text %d\n", i + 1, cols[i].count,
               cols[i].sum, cols[i].count ? cols[i].min : 0, cols[i].count ? cols[i].max : 0, cols[i].longest);
    return 0;
}
