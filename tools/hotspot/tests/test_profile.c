// unit-extra: tools/hotspot/cmd/profile.c
/* `vigil hot`'s pure parts (tools/hotspot/cmd/profile.c, common/jsontree.c): the JSON reader, hotspot.json
 * into a profile (and its errors, with the line), named stacks merged, self and inclusive
 * samples (recursion counted once), folded stacks, and the trace events: well formed, and
 * nested per thread (a caller's event spans its callees'), with gaps where the thread did not
 * run. */
#include "../../../tests/unit/check.h"
#include "jsontree.h"
#include "../cmd/profile.h"

#include <stdlib.h>
#include <string.h>

static const char *doc =
    "{\"format\":\"vigil-hotspot\",\"version\":1,\"method\":\"perf\",\"note\":\"\",\"signal\":37,\n"
    "\"period_us\":1000,\"depth\":32,\"max_stacks\":8192,\"delay_ms\":0,\"duration_us\":20000,\"samples\":10,\n"
    "\"stepped_back\":false,\"dropped\":{\"table_full\":0,\"busy\":0,\"untracked_thread\":0},\n"
    "\"threads\":{\"sampled\":1,\"blocked\":0,\"failed\":0,\"timer_fallback\":0,\"rearm_failed\":0},\n"
    "\"modules\":[{\"path\":\"/bin/prog\",\"bias\":\"0x5555\"}],\n"
    "\"stacks\":[{\"count\":6,\"frames\":[[0,\"0x30\"],[0,\"0x20\"],[0,\"0x10\"]]},\n"
    "            {\"count\":3,\"frames\":[[0,\"0x31\"],[0,\"0x20\"],[0,\"0x10\"]]},\n"
    "            {\"count\":1,\"frames\":[[0,\"0x40\"],[-1,\"0x7fff\"]]}],\n"
    "\"thread_list\":[{\"index\":0,\"tid\":42,\"samples\":10,\"timeline_dropped\":0,\"runs\":\n"
    "  [[1000,3000,0,3],[4000,4000,1,1],[5000,6000,0,2],[9000,10000,2,1],[11000,12000,1,2],[13000,13000,-1,1]]}]}\n";

/* Each stack of the document above named: 0x10 main, 0x20 work, 0x30 and 0x31 hot, 0x40 other. */
static void name_all(struct hs_view *v, const struct hs_profile *p)
{
    for (size_t s = 0; s < p->nstacks; s++) {
        uint32_t funcs[8];
        size_t n = 0;
        for (size_t k = p->stacks[s].nframes; k-- > 0;) {
            uint64_t a = p->stacks[s].frames[k].address;
            const char *name = a == 0x10 ? "main" : a == 0x20 ? "work" : a == 0x30 || a == 0x31 ? "hot" : "other";
            funcs[n++] = (uint32_t)hs_view_func(v, name, "prog.c", (int)a);
        }
        hs_view_add_stack(v, s, funcs, n, p->stacks[s].count);
    }
    hs_view_finish(v);
}

static char *capture(void (*fn)(void *), void *arg, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    (void)f;
    struct { FILE *f; } *a = arg;
    a->f = f;
    fn(arg);
    fclose(f);
    return buf;
}

struct trace_arg {
    FILE *f;
    struct hs_view *v;
    struct hs_profile *p;
};

static void write_trace(void *x)
{
    struct trace_arg *a = x;
    hs_view_write_trace(a->v, a->p, a->f, 7, "prog");
}

static void write_folded(void *x)
{
    struct trace_arg *a = x;
    hs_view_write_folded(a->v, a->f);
}

static size_t func_named(const struct hs_view *v, const char *name)
{
    for (size_t i = 0; i < v->nfuncs; i++)
        if (strcmp(v->funcs[i].name, name) == 0)
            return i;
    return SIZE_MAX;
}

int main(void)
{
    char err[256];
    struct vigil_jv j;

    /* the JSON reader */
    const char *good = " {\"a\": [1, -2.5e3, true, false, null, \"x\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}} ";
    CHECK(vigil_jv_parse(good, strlen(good), &j, err, sizeof err) == 0, "%s", err);
    const struct vigil_jv *a = vigil_jv_get(&j, "a");
    CHECK(a && a->type == VIGIL_JV_ARRAY && a->n == 6 && a->items[1].number == -2500 && a->items[2].number == 1,
          "array items");
    CHECK(a && strcmp(a->items[5].string, "x\xc3\xa9\xf0\x9f\x98\x80\n") == 0, "escapes to UTF-8");
    CHECK(vigil_jv_get(&j, "b") && vigil_jv_get(&j, "b")->type == VIGIL_JV_OBJECT && !vigil_jv_get(&j, "c"), "members");
    vigil_jv_free(&j);
    const char *bad[] = {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"abc", "\"\\x\"", "[1] 2", "tru", "\"\x01\"",
                         "{\"a\":1,}", "-", "\"\\u12\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = vigil_jv_parse(bad[i], strlen(bad[i]), &j, err, sizeof err);
        CHECK(r == -1 && strstr(err, "expected"), "'%s' rejected: %s", bad[i], err);
    }
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    CHECK(vigil_jv_parse(deep, 200, &j, err, sizeof err) == -1 && strstr(err, "nesting"), "nesting limit: %s", err);
    CHECK(vigil_jv_parse("[1]\n\n x", 8, &j, err, sizeof err) == -1 && strncmp(err, "3:2:", 4) == 0, "line:column %s", err);

    /* hotspot.json */
    struct hs_profile p;
    CHECK(hs_profile_parse(doc, strlen(doc), "h.json", &p, err, sizeof err) == 0, "%s", err);
    CHECK(p.nmodules == 1 && p.modules[0].bias == 0x5555 && strcmp(p.modules[0].path, "/bin/prog") == 0, "modules");
    CHECK(p.nstacks == 3 && p.stacks[0].nframes == 3 && p.stacks[0].frames[0].address == 0x30 &&
              p.stacks[2].frames[1].module == -1,
          "stacks");
    CHECK(p.nthreads == 1 && p.threads[0].nruns == 6 && p.threads[0].runs[5].stack == -1 && p.threads[0].tid == 42,
          "threads");
    CHECK(p.late_period_us == 1000 && p.signals == 10 && p.threads[0].runs[5].period_us == 1000,
          "an older report: one period (%llu, %llu)", (unsigned long long)p.late_period_us,
          (unsigned long long)p.signals);
    {   /* two periods: the late runs say theirs, their samples weighted */
        char text[4096];
        const char *at = strstr(doc, "[13000,13000,-1,1]");
        snprintf(text, sizeof text, "%.*s[13000,43000,-1,40,10000]]}],\"late_period_us\":10000,\"late_after\":5,"
                 "\"signals\":6}\n", (int)(at - doc), doc);
        struct hs_profile l;
        int r = hs_profile_parse(text, strlen(text), "h.json", &l, err, sizeof err);
        CHECK(r == 0 && l.late_period_us == 10000 && l.late_after == 5 && l.signals == 6 &&
                  l.threads[0].runs[5].period_us == 10000 && l.threads[0].runs[5].samples == 40 &&
                  l.threads[0].runs[4].period_us == 1000,
              "late runs: %s", r ? err : "values");
        hs_profile_free(&l);
    }
    struct {
        const char *from, *to, *why;
    } damage[] = {
        {"[4000,4000,1,1]", "[4000,4000,1,1,0]", "PERIOD_US"},
        {"[4000,4000,1,1]", "[4000,4000,1,1,5,5]", "PERIOD_US"},
        {"\"vigil-hotspot\"", "\"vigil-other\"", "format"},
        {"\"version\":1", "\"version\":2", "version 1"},
        {"[0,\"0x30\"]", "[1,\"0x30\"]", "MODULE"},
        {"[0,\"0x30\"]", "[0,\"30\"]", "0xADDRESS"},
        {"[5000,6000,0,2]", "[5000,6000,3,2]", "STACK"},
        {"[5000,6000,0,2]", "[500,600,0,2]", "time order"},
        {"\"samples\":10,\n", "\"samples\":-1,\n", "non-negative"},
        {"\"method\":\"perf\"", "\"method\":\"pmu\"", "method"},
        {"\"bias\":\"0x5555\"", "\"bias\":5", "bias"},
    };
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
        char text[4096];
        const char *at = strstr(doc, damage[i].from);
        size_t pre = (size_t)(at - doc);
        snprintf(text, sizeof text, "%.*s%s%s", (int)pre, doc, damage[i].to, at + strlen(damage[i].from));
        struct hs_profile q;
        int r = hs_profile_parse(text, strlen(text), "h.json", &q, err, sizeof err);
        CHECK(r == -1 && strncmp(err, "h.json:", 7) == 0 && strstr(err, damage[i].why), "%s: %s", damage[i].why, err);
        hs_profile_free(&q);
    }
    struct hs_profile q;
    CHECK(hs_profile_parse(doc, 100, "h.json", &q, err, sizeof err) == -1 && strstr(err, "h.json:2:"),
          "truncated: %s", err);

    /* named stacks: 0x30 and 0x31 are both "hot", so stacks 0 and 1 merge */
    struct hs_view v;
    hs_view_init(&v);
    name_all(&v, &p);
    CHECK(v.nstacks == 2 && v.samples == 10, "%zu stacks, %llu samples", v.nstacks, (unsigned long long)v.samples);
    CHECK(v.stacks[0].count == 9 && v.stacks[0].n == 3, "main;work;hot 9 first");
    CHECK(v.of_profile[0] == v.of_profile[1] && v.of_profile[0] == 0 && v.of_profile[2] == 1, "profile stacks map");
    size_t hot = func_named(&v, "hot"), main_ = func_named(&v, "main"), other = func_named(&v, "other");
    CHECK(hot != SIZE_MAX && v.funcs[hot].self == 9 && v.funcs[hot].total == 9, "hot: self 9");
    CHECK(main_ != SIZE_MAX && v.funcs[main_].self == 0 && v.funcs[main_].total == 9, "main: total 9");
    CHECK(other != SIZE_MAX && v.funcs[other].self == 1, "other: self 1");
    CHECK(v.funcs[main_].line == 0x10, "the first line given is kept");
    size_t *rank = hs_view_ranking(&v, 0);
    CHECK(rank && rank[0] == hot && rank[1] == other, "ranking by self");
    free(rank);
    rank = hs_view_ranking(&v, 1);
    CHECK(rank && v.funcs[rank[0]].total == 9 && rank[v.nfuncs - 1] == other, "ranking by total");
    free(rank);

    struct trace_arg ta = {NULL, &v, &p};
    size_t len;
    char *folded = capture(write_folded, &ta, &len);
    CHECK(folded && strcmp(folded, "main;work;hot 9\nother;other 1\n") == 0, "folded: '%s'", folded ? folded : "");
    free(folded);

    /* recursion counts once in total; names with ';' and spaces are made safe */
    struct hs_view r;
    hs_view_init(&r);
    uint32_t f = (uint32_t)hs_view_func(&r, "f", "", 0), g = (uint32_t)hs_view_func(&r, "g x;y", "", 0);
    uint32_t rec[] = {f, f, f, g};
    hs_view_add_stack(&r, SIZE_MAX, rec, 4, 5);
    uint32_t rec2[] = {f, f, f, g};
    hs_view_add_stack(&r, SIZE_MAX, rec2, 4, 2);
    hs_view_finish(&r);
    CHECK(r.nstacks == 1 && r.funcs[f].total == 7 && r.funcs[f].self == 0 && r.funcs[g].self == 7,
          "recursion: f total %llu", (unsigned long long)r.funcs[f].total);
    struct trace_arg tr = {NULL, &r, &p};
    folded = capture(write_folded, &tr, &len);
    CHECK(folded && strcmp(folded, "f;f;f;g_x_y 7\n") == 0, "folded: '%s'", folded ? folded : "");
    free(folded);
    hs_view_free(&r);

    /* trace events: nested per thread, a gap from 6000 to 8000 (9000 less a period) */
    char *trace = capture(write_trace, &ta, &len);
    CHECK(trace && vigil_jv_parse(trace, len, &j, err, sizeof err) == 0, "trace parses: %s", err);
    const struct vigil_jv *ev = vigil_jv_get(&j, "traceEvents");
    size_t nx = 0, nested = 1, gap = 1, names = 0;
    uint64_t main_dur = 0;
    for (size_t i = 0; ev && i < ev->n; i++) {
        const struct vigil_jv *e = &ev->items[i];
        const struct vigil_jv *ph = vigil_jv_get(e, "ph");
        if (!ph || strcmp(ph->string, "X") != 0)
            continue;
        nx++;
        double ts = vigil_jv_get(e, "ts")->number, end = ts + vigil_jv_get(e, "dur")->number;
        const char *name = vigil_jv_get(e, "name")->string;
        if (strcmp(name, "main") == 0)
            main_dur += (uint64_t)vigil_jv_get(e, "dur")->number;
        if (ts < 6000 && end > 8000)
            gap = 0;   /* nothing may span the time the thread did not run */
        names += strcmp(name, "[stack not kept]") == 0;
        /* every other event either nests in this one, contains it, or does not overlap */
        for (size_t k = 0; k < ev->n; k++) {
            const struct vigil_jv *o = &ev->items[k];
            if (k == i || !vigil_jv_get(o, "ph") || strcmp(vigil_jv_get(o, "ph")->string, "X") != 0)
                continue;
            double ots = vigil_jv_get(o, "ts")->number, oend = ots + vigil_jv_get(o, "dur")->number;
            int overlap = ots < end && ts < oend;
            int inside = ots >= ts && oend <= end, outside = ts >= ots && end <= oend;
            if (overlap && !inside && !outside)
                nested = 0;
        }
    }
    CHECK(nx > 0 && nested, "%zu events, nested", nx);
    CHECK(gap, "no event across the gap");
    CHECK(names == 1, "a run whose stack was not kept: one event");
    CHECK(main_dur == 6000 + 2000, "main spans 0..6000 and 10000..12000: %llu us", (unsigned long long)main_dur);
    vigil_jv_free(&j);
    free(trace);

    hs_view_free(&v);
    hs_profile_free(&p);
    return CHECK_DONE("test_profile");
}
