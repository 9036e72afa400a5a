/* libFuzzer harness: the findings JSON reader and the suppression parser (common/findings.c)
 * must accept or reject any bytes without crashing, leaking or reading out of bounds. A
 * rejection names the file and a line ("NAME:LINE:..."), and leaves the list empty; an accepted
 * document writes back to JSON that reads again and writes identically (the reader and the
 * writer come from one field list), and renders as SARIF and text. An accepted suppression
 * file's patterns are non-empty and its lines increase; it applies to what was read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"

#define NAME "fuzz.json"
#define SUPP "fuzz.supp"

static int names_a_line(const char *err, const char *name)
{
    size_t n = strlen(name);
    return strncmp(err, name, n) == 0 && err[n] == ':' && err[n + 1] >= '1' && err[n + 1] <= '9';
}

static char *render_json(const struct vigil_findings *l, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        abort();
    vigil_findings_write_json(f, l, 0);
    fclose(f);
    return buf;
}

static void drain(void (*fn)(FILE *, const struct vigil_findings *), const struct vigil_findings *l)
{
    FILE *f = fopen("/dev/null", "w");
    if (f) {
        fn(f, l);
        fclose(f);
    }
}

static void sarif(FILE *f, const struct vigil_findings *l) { vigil_findings_write_sarif(f, l, "fuzz"); }

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *text = (const char *)data;
    char err[512];

    struct vigil_findings l;
    err[0] = '\0';
    if (vigil_findings_parse_json(text, size, NAME, &l, err, sizeof err) != 0) {
        if (!names_a_line(err, NAME) || l.nfindings || l.findings || l.run || l.program)
            abort();
    } else {
        size_t len1, len2;
        char *once = render_json(&l, &len1);
        struct vigil_findings back;
        if (vigil_findings_parse_json(once, len1, "again", &back, err, sizeof err) != 0)
            abort();   /* the writer wrote what the reader rejects */
        char *twice = render_json(&back, &len2);
        if (len1 != len2 || memcmp(once, twice, len1) != 0)
            abort();
        drain(sarif, &back);
        drain(vigil_findings_write_text, &back);
        char summary[256];
        vigil_findings_summary(&back, 0, summary, sizeof summary);
        vigil_findings_sort(&back);
        free(once);
        free(twice);
        vigil_findings_free(&back);
    }

    struct vigil_suppressions s;
    if (vigil_suppressions_parse(text, size, SUPP, &s, err, sizeof err) != 0) {
        if (!names_a_line(err, SUPP) || s.n || s.items)
            abort();
    } else {
        for (size_t i = 0; i < s.n; i++)
            if (!s.items[i].pattern[0] || !s.items[i].tool[0] || (i && s.items[i].line <= s.items[i - 1].line))
                abort();
        size_t before = l.nfindings;
        size_t removed = vigil_findings_suppress(&l, &s);
        if (removed > before || l.nfindings != before - removed)
            abort();
        vigil_suppressions_free(&s);
    }
    vigil_findings_free(&l);
    return 0;
}
