/* A small program with one seeded bug, for the statistical debugging test (run.sh).
 * It reads words from stdin and prints statistics and an abbreviated copy of the text.
 * The bug: a word longer than 12 characters makes the abbreviation buffer pointer NULL, and
 * the next character written through it crashes the program. Every other branch only
 * correlates loosely with long words, so the one predicate that predicts the crash exactly is
 * "branch true" on the line marked SEEDED-BUG. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

static char abbrev_buf[4096];
static char *abbrev_at = abbrev_buf;

static int classify(const char *w, size_t len)
{
    if (isdigit((unsigned char)w[0]))
        return 0;
    if (len > 8)
        return 2;
    if (isupper((unsigned char)w[0]))
        return 1;
    return 3;
}

static int vowels(const char *w)
{
    int n = 0;
    for (; *w; w++)
        if (strchr("aeiou", *w))
            n++;
    return n;
}

static void abbreviate(const char *w, size_t len)
{
    size_t keep = len > 4 ? 4 : len;
    if (len > 12)                 /* SEEDED-BUG: long words lose the buffer */
        abbrev_at = NULL;
    for (size_t i = 0; i < keep; i++)
        *abbrev_at++ = w[i];
    *abbrev_at++ = ' ';
}

int main(void)
{
    char w[256];
    int counts[4] = {0}, total_vowels = 0, words = 0;
    size_t longest = 0;
    while (scanf("%255s", w) == 1) {
        size_t len = strlen(w);
        counts[classify(w, len)]++;
        total_vowels += vowels(w);
        if (len > longest)
            longest = len;
        if (abbrev_at && abbrev_at - abbrev_buf < (long)sizeof abbrev_buf - 8)
            abbreviate(w, len);
        words++;
    }
    printf("%d words, longest %zu, %d vowels, digits %d upper %d long %d other %d\n", words,
           longest, total_vowels, counts[0], counts[1], counts[2], counts[3]);
    printf("%s\n", abbrev_buf);
    return 0;
}
