/* vigil rank [--db TARGET] [--top N] [--all] [--json] [--by HEURISTIC]: the predicates most
 * predictive of failure, from the report store. Rows whose score is not positive (no evidence
 * for failure) are left out unless --all; when none is left, "no predictor found". Equal
 * scores are ordered by Increase, then more F(p), fewer S(p), then source position, and
 * marked "=" (text) or "tied" (JSON). Heuristics (scores in common/scores.c):
 *   failcount   F(p)
 *   increase    Increase(p) = F(p)/(S(p)+F(p)) - F(p obs)/(S(p obs)+F(p obs))
 *   importance  harmonic mean of Increase(p) and log F(p) / log NumF (default)
 *   ttest       signed significance, -log10 p-value, of Student's t-test on p's truth rate,
 *               failures vs successes
 *   eliminate   Liblit's iterative ranking and elimination: take the predicate of highest
 *               Importance (Increase > 0), drop every run in which it was true, re-score the
 *               remaining runs, repeat until no failing run or no candidate is left; each
 *               pick explains a different set of failures (one line per likely bug). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "scores.h"
#include "sitefmt.h"
#include "store.h"

enum heuristic { BY_FAILCOUNT, BY_INCREASE, BY_IMPORTANCE, BY_TTEST, BY_ELIMINATE };
static const char *const heuristic_names[] = {"failcount", "increase", "importance", "ttest", "eliminate"};

struct ranked {
    struct vigil_store_pred p;
    double score;
    uint64_t num_f;          /* p's NumF when it was scored (eliminate: of the remaining runs) */
};

static double score_of(enum heuristic by, const struct vigil_store_pred *p, uint64_t num_f)
{
    switch (by) {
    case BY_FAILCOUNT: return vigil_score_failcount(&p->counts);
    case BY_INCREASE: return vigil_score_increase(&p->counts);
    case BY_TTEST: return vigil_score_ttest(&p->counts);
    case BY_IMPORTANCE:
    case BY_ELIMINATE: return vigil_score_importance(&p->counts, num_f);
    }
    return NAN;
}

/* Whether two scores are equal for ranking (NaN ties with NaN). */
static int same_score(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= 1e-12 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Higher score first, NaN last; equal scores: higher Increase, more F(p), fewer S(p), then
 * source position (file, line, column) and site: the same order on every run. */
static int compare_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    int xn = isnan(x->score), yn = isnan(y->score);
    if (xn != yn)
        return xn - yn;
    if (!same_score(x->score, y->score))
        return x->score > y->score ? -1 : 1;
    double xi = vigil_score_increase(&x->p.counts), yi = vigil_score_increase(&y->p.counts);
    if (!same_score(xi, yi))
        return isnan(xi) ? 1 : isnan(yi) ? -1 : xi > yi ? -1 : 1;
    if (x->p.counts.f != y->p.counts.f)
        return x->p.counts.f > y->p.counts.f ? -1 : 1;
    if (x->p.counts.s != y->p.counts.s)
        return x->p.counts.s < y->p.counts.s ? -1 : 1;
    int c = strcmp(x->p.file, y->p.file);
    if (c)
        return c;
    if (x->p.line != y->p.line)
        return x->p.line < y->p.line ? -1 : 1;
    if (x->p.column != y->p.column)
        return x->p.column < y->p.column ? -1 : 1;
    c = strcmp(x->p.tu_hash, y->p.tu_hash);
    if (c)
        return c;
    if (x->p.site_index != y->p.site_index)
        return x->p.site_index < y->p.site_index ? -1 : 1;
    return (int)x->p.pred - (int)y->p.pred;
}

/* Plain ranking: every predicate that was true at least once, scored once. */
static int rank_all(struct vigil_store *s, enum heuristic by, struct ranked **out, size_t *nout,
                    struct vigil_store_totals *totals, size_t *npreds_total, char *err, size_t errlen)
{
    struct vigil_store_pred *preds;
    size_t n;
    if (vigil_store_aggregate(s, &preds, &n, totals, err, errlen) != 0)
        return -1;
    *npreds_total = n;
    struct ranked *r = calloc(n ? n : 1, sizeof *r);
    if (!r) {
        free(preds);
        return snprintf(err, errlen, "out of memory"), -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (preds[i].counts.f + preds[i].counts.s == 0)
            continue;   /* never true: no score means anything */
        r[k].p = preds[i];
        r[k].num_f = preds[i].num_f;
        r[k].score = score_of(by, &preds[i], preds[i].num_f);
        k++;
    }
    free(preds);
    qsort(r, k, sizeof *r, compare_ranked);
    *out = r;
    *nout = k;
    return 0;
}

/* Iterative ranking and elimination (at most `top` picks). */
static int rank_eliminate(struct vigil_store *s, size_t top, struct ranked **out, size_t *nout,
                          struct vigil_store_totals *totals, size_t *npreds_total, char *err, size_t errlen)
{
    struct ranked *picks = calloc(top ? top : 1, sizeof *picks);
    if (!picks)
        return snprintf(err, errlen, "out of memory"), -1;
    size_t npicks = 0;
    for (int round = 0; npicks < top; round++) {
        struct vigil_store_pred *preds;
        size_t n;
        struct vigil_store_totals now;
        if (vigil_store_aggregate(s, &preds, &n, &now, err, errlen) != 0) {
            free(picks);
            return -1;
        }
        if (round == 0) {
            *totals = now;
            *npreds_total = n;
        }
        struct ranked best = {.score = NAN};
        for (size_t i = 0; i < n; i++) {
            if (!(vigil_score_increase(&preds[i].counts) > 0))
                continue;
            struct ranked c = {.p = preds[i], .num_f = preds[i].num_f,
                               .score = vigil_score_importance(&preds[i].counts, preds[i].num_f)};
            if (!(c.score > 0))
                continue;
            if (isnan(best.score) || compare_ranked(&c, &best) < 0)
                best = c;
        }
        free(preds);
        if (now.num_f == 0 || isnan(best.score))
            break;
        picks[npicks++] = best;
        if (vigil_store_exclude_true(s, &best.p, err, errlen) != 0) {
            free(picks);
            return -1;
        }
    }
    *out = picks;
    *nout = npicks;
    return 0;
}

/* Rows shown: those with a positive score, or all of them with --all; the others are counted. */
static size_t shown_rows(const struct ranked *r, size_t n, int all)
{
    size_t k = 0;
    while (k < n && (all || r[k].score > 0))
        k++;
    return all ? n : k;   /* sorted: positive scores come first */
}

/* Row i has the same score as a neighbour among the rows shown. */
static int is_tied(const struct ranked *r, size_t n, size_t i)
{
    return (i > 0 && same_score(r[i - 1].score, r[i].score)) || (i + 1 < n && same_score(r[i + 1].score, r[i].score));
}

static void location(const struct vigil_store_pred *p, char *buf, size_t len)
{
    if (p->file[0] && p->column)
        snprintf(buf, len, "%s  %s:%u:%u", p->function[0] ? p->function : "?", p->file, p->line, p->column);
    else if (p->file[0])
        snprintf(buf, len, "%s  %s:%u", p->function[0] ? p->function : "?", p->file, p->line);
    else if (p->function[0])
        snprintf(buf, len, "%s", p->function);
    else   /* the binary was not readable at ingest */
        snprintf(buf, len, "(module %s, site %u)", p->tu_hash, p->site_index);
}

static void print_text(enum heuristic by, const struct ranked *r, size_t n, size_t shown, size_t top,
                       const struct vigil_store_totals *t, size_t npreds)
{
    printf("%llu runs (%llu failing, %llu successful), %zu predicates observed; ranked by %s\n",
           (unsigned long long)(t->num_f + t->num_s), (unsigned long long)t->num_f,
           (unsigned long long)t->num_s, npreds, heuristic_names[by]);
    if (shown == 0) {
        if (!t->num_f)
            printf("no predictor found: no failing run in the store\n");
        else
            printf("no predictor found: no predicate has a positive %s score%s\n", heuristic_names[by],
                   n ? " (--all shows the others)" : "");
        return;
    }
    printf("%5s  %9s  %6s  %6s  %6s  %6s  %9s  %-18s  %s\n", "rank", "score", "F(p)", "S(p)",
           "F(obs)", "S(obs)", "increase", "predicate", "function  file:line:column  source");
    int ties = 0;
    for (size_t i = 0; i < shown && i < top; i++) {
        const struct vigil_store_pred *p = &r[i].p;
        char pred[32], where[768], rank[24];
        snprintf(pred, sizeof pred, "%s %s", vigil_site_kind_name((enum vigil_site_kind)p->kind),
                 vigil_pred_name(p->kind, p->pred));
        location(p, where, sizeof where);
        int tied = is_tied(r, shown, i);
        ties |= tied;
        snprintf(rank, sizeof rank, "%zu%s", i + 1, tied ? "=" : "");
        printf("%5s  %9.4f  %6llu  %6llu  %6llu  %6llu  %9.4f  %-18s  %s%s%s%s\n", rank, r[i].score,
               (unsigned long long)p->counts.f, (unsigned long long)p->counts.s,
               (unsigned long long)p->counts.f_obs, (unsigned long long)p->counts.s_obs,
               vigil_score_increase(&p->counts), pred, where, p->source[0] ? "  `" : "", p->source,
               p->source[0] ? "`" : "");
    }
    if (ties)
        printf("=: same score as the row next to it; such rows are ordered by increase, then more F(p), "
               "fewer S(p), then source position\n");
    if (shown < n && shown < top)
        printf("%zu predicates with a score <= 0 not shown (--all shows them)\n", n - shown);
}

/* n: the rows shown (the JSON document has no hidden rows to mention). */
static void print_json(enum heuristic by, const struct ranked *r, size_t n, size_t top,
                       const struct vigil_store_totals *t, size_t npreds, const char *backend)
{
    struct vigil_json j;
    vigil_json_init(&j, stdout, 1);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "store");
    vigil_json_string(&j, backend);
    vigil_json_key(&j, "by");
    vigil_json_string(&j, heuristic_names[by]);
    vigil_json_key(&j, "runs");
    vigil_json_uint(&j, t->num_f + t->num_s);
    vigil_json_key(&j, "failing_runs");
    vigil_json_uint(&j, t->num_f);
    vigil_json_key(&j, "predicates_observed");
    vigil_json_uint(&j, npreds);
    vigil_json_key(&j, "predicates");
    vigil_json_array_begin(&j);
    for (size_t i = 0; i < n && i < top; i++) {
        const struct vigil_store_pred *p = &r[i].p;
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "rank");
        vigil_json_uint(&j, i + 1);
        vigil_json_key(&j, "score");
        vigil_json_double(&j, r[i].score);
        vigil_json_key(&j, "kind");
        vigil_json_string(&j, vigil_site_kind_name((enum vigil_site_kind)p->kind));
        vigil_json_key(&j, "predicate");
        vigil_json_string(&j, vigil_pred_name(p->kind, p->pred));
        vigil_json_key(&j, "function");
        vigil_json_string(&j, p->function);
        vigil_json_key(&j, "file");
        vigil_json_string(&j, p->file);
        vigil_json_key(&j, "line");
        vigil_json_uint(&j, p->line);
        vigil_json_key(&j, "column");
        vigil_json_uint(&j, p->column);
        vigil_json_key(&j, "source");
        vigil_json_string(&j, p->source);
        vigil_json_key(&j, "tied");
        vigil_json_bool(&j, is_tied(r, n, i));
        vigil_json_key(&j, "tu_hash");
        vigil_json_string(&j, p->tu_hash);
        vigil_json_key(&j, "site_index");
        vigil_json_uint(&j, p->site_index);
        vigil_json_key(&j, "F");
        vigil_json_uint(&j, p->counts.f);
        vigil_json_key(&j, "S");
        vigil_json_uint(&j, p->counts.s);
        vigil_json_key(&j, "F_observed");
        vigil_json_uint(&j, p->counts.f_obs);
        vigil_json_key(&j, "S_observed");
        vigil_json_uint(&j, p->counts.s_obs);
        vigil_json_key(&j, "NumF");
        vigil_json_uint(&j, r[i].num_f);
        vigil_json_key(&j, "failure");
        vigil_json_double(&j, vigil_score_failure(&p->counts));
        vigil_json_key(&j, "context");
        vigil_json_double(&j, vigil_score_context(&p->counts));
        vigil_json_key(&j, "increase");
        vigil_json_double(&j, vigil_score_increase(&p->counts));
        vigil_json_key(&j, "importance");
        vigil_json_double(&j, vigil_score_importance(&p->counts, r[i].num_f));
        vigil_json_key(&j, "ttest");
        vigil_json_double(&j, vigil_score_ttest(&p->counts));
        vigil_json_key(&j, "ttest_confidence");
        vigil_json_double(&j, vigil_ttest_confidence(&p->counts));
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
}

int cmd_rank(int argc, char **argv)
{
    const char *db = VIGIL_STORE_DEFAULT;
    size_t top = 10;
    int json = 0, all = 0;
    enum heuristic by = BY_IMPORTANCE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else if (strcmp(a, "--top") == 0 && i + 1 < argc) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || v == 0 || argv[i][0] == '-')
                return cmd_usage_error("rank", "--top expects a positive number, got \"%s\"", argv[i]);
            top = v;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if (strcmp(a, "--by") == 0 && i + 1 < argc) {
            const char *name = argv[++i];
            size_t k = 0;
            while (k < sizeof heuristic_names / sizeof *heuristic_names && strcmp(heuristic_names[k], name))
                k++;
            if (k == sizeof heuristic_names / sizeof *heuristic_names)
                return cmd_usage_error("rank", "--by expects failcount, increase, importance, ttest "
                                               "or eliminate, got \"%s\"", name);
            by = (enum heuristic)k;
        } else {
            return cmd_usage_error("rank", "unexpected argument \"%s\"", a);
        }
    }
    char err[1024];
    struct vigil_store *s = vigil_store_open(db, err, sizeof err);
    if (!s)
        return cmd_error("rank", "%s", err);
    struct ranked *r = NULL;
    size_t n = 0, npreds = 0;
    struct vigil_store_totals totals = {0};
    int rc = vigil_store_read_begin(s, err, sizeof err);
    if (rc == 0) {
        rc = by == BY_ELIMINATE ? rank_eliminate(s, top, &r, &n, &totals, &npreds, err, sizeof err)
                                : rank_all(s, by, &r, &n, &totals, &npreds, err, sizeof err);
        vigil_store_read_end(s);
    }
    if (rc == 0) {
        size_t shown = shown_rows(r, n, all);
        if (json)
            print_json(by, r, shown, top, &totals, npreds, vigil_store_backend_name(s));
        else
            print_text(by, r, n, shown, top, &totals, npreds);
    }
    free(r);
    vigil_store_close(s);
    return rc == 0 ? 0 : cmd_error("rank", "%s", err);
}
