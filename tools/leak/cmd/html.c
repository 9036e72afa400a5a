/* vigil html RUNDIR -o page.html: one self-contained page for a leak report (seed 000, Figure 4
 * blocks 412-414): the leak groups in a sortable table; clicking a row shows the allocation
 * stack and the source around the allocation line and the last-access line, highlighted. The
 * sources are read now, from the paths in the debug info, and embedded; a missing file is said
 * so. Everything taken from the program, the report or the sources is HTML-escaped. The page
 * opens the group named by its URL fragment (page.html#g2), which is how the tests click. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "leakreport.h"

#define CONTEXT_LINES 12

static void esc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", o); break;
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default:
            if ((unsigned char)*s < 0x20 && *s != '\t')
                fputc(' ', o);
            else
                fputc(*s, o);
        }
    }
}

static const char *site_frame_file(const struct leak_group_view *g, size_t *k)
{
    for (*k = 0; *k < g->nframes; ++*k)
        if (g->frames[*k].file[0])
            return g->frames[*k].file;
    return NULL;
}

/* The source lines [lo, hi] of path, with the marked lines highlighted. */
static void source_excerpt(FILE *o, const char *path, int alloc_line, int access_line)
{
    int lo = 0, hi = 0;
    int lines[2] = { alloc_line, access_line };
    for (int i = 0; i < 2; i++) {
        if (lines[i] <= 0)
            continue;
        if (!lo || lines[i] - CONTEXT_LINES < lo) lo = lines[i] - CONTEXT_LINES;
        if (lines[i] + CONTEXT_LINES > hi) hi = lines[i] + CONTEXT_LINES;
    }
    if (lo < 1)
        lo = 1;
    fputs("<div class=\"file\"><div class=\"fname\">", o);
    esc(o, path);
    fputs("</div>", o);
    FILE *f = fopen(path, "r");
    if (!f) {
        fputs("<p class=\"missing\">source not available: ", o);
        esc(o, path);
        fputs(" (", o);
        esc(o, strerror(errno));
        fputs("); the debug info names this file, run <code>vigil html</code> where the sources are</p></div>", o);
        return;
    }
    fputs("<pre class=\"src\">", o);
    char buf[4096];
    int n = 0, at_line_start = 1;
    while (fgets(buf, sizeof buf, f)) {
        if (at_line_start)
            n++;
        size_t len = strlen(buf);
        int ends = len && buf[len - 1] == '\n';
        if (ends)
            buf[len - 1] = 0;
        if (n >= lo && n <= hi) {
            if (at_line_start) {
                const char *cls = n == alloc_line && n == access_line ? "alloc access"
                                  : n == alloc_line ? "alloc" : n == access_line ? "access" : "";
                fprintf(o, "<span class=\"line %s\" data-line=\"%d\"><span class=\"no\">%5d</span> ", cls, n, n);
            }
            esc(o, buf);
            if (ends)
                fputs("</span>", o);
        }
        at_line_start = ends;
        if (n > hi)
            break;
    }
    if (!at_line_start && n >= lo && n <= hi)
        fputs("</span>", o);
    fclose(f);
    fputs("</pre></div>", o);
}

static void location_cell(FILE *o, const char *function, const char *file, long line)
{
    esc(o, function && function[0] ? function : "?");
    if (file && file[0]) {
        const char *base = strrchr(file, '/');
        fputs(" <span class=\"loc\">", o);
        esc(o, base ? base + 1 : file);
        fprintf(o, ":%ld</span>", line);
    }
}

static void detail(FILE *o, const struct leak_report_view *r, const struct leak_group_view *g, size_t id)
{
    fprintf(o, "<section class=\"detail\" id=\"detail-g%zu\" hidden>\n<h2>Group %zu: ", id, id);
    esc(o, g->kind);
    fprintf(o, ", %llu bytes in %llu objects</h2>\n<h3>Allocated at</h3><ol class=\"stack\">",
            (unsigned long long)g->bytes, (unsigned long long)g->objects);
    for (size_t k = 0; k < g->nframes; k++) {
        fputs("<li>", o);
        location_cell(o, g->frames[k].function, g->frames[k].file, g->frames[k].line);
        fputs("</li>", o);
    }
    fputs("</ol>\n<h3>Last access</h3><p class=\"access\">", o);
    if (g->recent.present) {
        fputs("most recent: ", o);
        location_cell(o, g->recent.function, g->recent.file, g->recent.line);
        fprintf(o, " (%s)", g->recent.kind && strcmp(g->recent.kind, "store") == 0 ? "store" : "load");
    } else {
        fputs("no sampled access to these objects", o);
    }
    if (g->common.present && g->common.site != g->recent.site) {
        fputs("; most common: ", o);
        location_cell(o, g->common.function, g->common.file, g->common.line);
    }
    fprintf(o, "</p>\n<p>This site: %llu allocations, %llu frees; %llu sampled accesses; %llu of "
               "these objects never seen accessed; %llu unreachable (%llu of them indirect: held only by "
               "other leaked objects), %llu stale.</p>\n",
            (unsigned long long)g->site_allocs, (unsigned long long)g->site_frees,
            (unsigned long long)g->site_accesses_sampled, (unsigned long long)g->never_accessed,
            (unsigned long long)g->unreachable_objects, (unsigned long long)g->indirect_objects,
            (unsigned long long)g->stale_objects);
    size_t k;
    const char *alloc_file = site_frame_file(g, &k);
    int alloc_line = alloc_file ? g->frames[k].line : 0;
    const char *access_file = g->recent.present && g->recent.file[0] ? g->recent.file : NULL;
    int access_line = access_file ? (int)g->recent.line : 0;
    if (alloc_file && access_file && strcmp(alloc_file, access_file) == 0) {
        source_excerpt(o, alloc_file, alloc_line, access_line);
    } else {
        if (alloc_file)
            source_excerpt(o, alloc_file, alloc_line, 0);
        else
            fputs("<p class=\"missing\">no line information for the allocation site</p>", o);
        if (access_file)
            source_excerpt(o, access_file, 0, access_line);
    }
    (void)r;
    fputs("</section>\n", o);
}

static const char page_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left}"
    "th{cursor:pointer;background:#f4f4f4;user-select:none}th.sorted-asc::after{content:' \\25B2'}"
    "th.sorted-desc::after{content:' \\25BC'}tbody tr{cursor:pointer}tbody tr:hover{background:#eef5ff}"
    "tr.selected{background:#dbe9ff}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".loc{color:#666}.kind-unreachable,.kind-both{color:#b00020;font-weight:600}.kind-stale{color:#a15c00;font-weight:600}"
    "pre.src{background:#fafafa;border:1px solid #ddd;padding:6px;overflow-x:auto}"
    ".line{display:block}.line .no{color:#999;user-select:none}"
    ".line.alloc{background:#ffe0e0}.line.access{background:#e0f0ff}.line.alloc.access{background:#f0e0ff}"
    ".fname{font-family:monospace;margin-top:1em}.missing{color:#a15c00}.legend span{padding:0 6px;margin-right:8px}";

static const char page_script[] =
    "(function(){\n"
    "var table=document.getElementById('groups');\n"
    "function select(row){\n"
    "  document.querySelectorAll('tr.selected').forEach(function(r){r.classList.remove('selected');});\n"
    "  document.querySelectorAll('section.detail').forEach(function(s){s.hidden=true;});\n"
    "  row.classList.add('selected');\n"
    "  var d=document.getElementById('detail-'+row.id);\n"
    "  if(d){d.hidden=false;}\n"
    "  document.body.setAttribute('data-selected',row.id);\n"
    "}\n"
    "table.querySelectorAll('tbody tr').forEach(function(row){row.addEventListener('click',function(){select(row);});});\n"
    "table.querySelectorAll('th').forEach(function(th,col){th.addEventListener('click',function(){\n"
    "  var asc=!th.classList.contains('sorted-asc');\n"
    "  table.querySelectorAll('th').forEach(function(h){h.classList.remove('sorted-asc','sorted-desc');});\n"
    "  th.classList.add(asc?'sorted-asc':'sorted-desc');\n"
    "  var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);\n"
    "  rows.sort(function(a,b){var x=a.cells[col].getAttribute('data-v'),y=b.cells[col].getAttribute('data-v');\n"
    "    var nx=parseFloat(x),ny=parseFloat(y),c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:String(x).localeCompare(String(y));\n"
    "    return asc?c:-c;});\n"
    "  rows.forEach(function(r){body.appendChild(r);});\n"
    "});});\n"
    "var want=location.hash.slice(1),first=table.tBodies[0].rows[0];\n"
    "var row=want?document.getElementById(want):null;\n"
    "if(row){row.click();}else if(first){first.click();}\n"
    "})();\n";

static void num_cell(FILE *o, double v, const char *text)
{
    fprintf(o, "<td class=\"num\" data-v=\"%.17g\">%s</td>", v, text);
}

static void write_page(FILE *o, const struct leak_report_view *r, int all)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>vigil leaks: ", o);
    esc(o, r->have_run ? r->run.program : r->dir);
    fprintf(o, "</title><style>%s</style></head><body>\n<h1>Leaks of ", page_style);
    esc(o, r->have_run ? r->run.program : r->dir);
    fputs("</h1>\n<p class=\"summary\">Report ", o);
    esc(o, r->dir);
    fprintf(o, ". Stale: idle for more than %.3g s%s (and %.3g&times; the object's longest gap); "
               "reachability at exit: %s. %llu allocations, %llu frees, %llu frees of unknown "
               "pointers; %llu accesses sampled, %llu in heap objects.</p>\n",
            r->stale_after_s, r->active_clock ? " of active time" : "", r->gap_factor,
            r->reach_done ? "done" : "not done",
            (unsigned long long)r->allocs, (unsigned long long)r->frees,
            (unsigned long long)r->unknown_frees, (unsigned long long)r->accesses_sampled,
            (unsigned long long)r->accesses_heap);
    fputs("<p class=\"legend\"><span class=\"line alloc\">allocation line</span>"
          "<span class=\"line access\">last-access line</span> Click a row for its source; click a "
          "column header to sort.</p>\n", o);
    fputs("<table id=\"groups\"><thead><tr><th>#</th><th>kind</th><th>bytes</th><th>objects</th>"
          "<th>unreachable</th><th>stale</th><th>age (s)</th><th>idle (s)</th><th>allocated at</th>"
          "<th>last access</th><th>frees from site</th><th>sampled accesses</th></tr></thead><tbody>\n", o);
    size_t id = 0;
    char text[64];
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct leak_group_view *g = &r->groups[i];
        if (!all && (g->suppressed_by || g->unsampled))
            continue;
        id++;
        fprintf(o, "<tr id=\"g%zu\">", id);
        snprintf(text, sizeof text, "%zu", id);
        num_cell(o, (double)id, text);
        fputs("<td data-v=\"", o);
        esc(o, g->kind);
        fputs("\" class=\"kind-", o);
        esc(o, g->kind);
        fputs("\">", o);
        esc(o, g->kind);
        fputs("</td>", o);
#define NUM(v) snprintf(text, sizeof text, "%llu", (unsigned long long)(v)), num_cell(o, (double)(v), text)
        NUM(g->bytes);
        NUM(g->objects);
        NUM(g->unreachable_objects);
        NUM(g->stale_objects);
        snprintf(text, sizeof text, "%.2f", g->age_max_ms / 1000.0);
        num_cell(o, g->age_max_ms / 1000.0, text);
        snprintf(text, sizeof text, "%.2f", g->idle_min_ms / 1000.0);
        num_cell(o, g->idle_min_ms / 1000.0, text);
        size_t k;
        const char *f = site_frame_file(g, &k);
        fputs("<td data-v=\"", o);
        esc(o, g->nframes ? g->frames[0].function : "");
        fputs("\">", o);
        if (f)
            location_cell(o, g->frames[k].function, f, g->frames[k].line);
        else
            location_cell(o, g->nframes ? g->frames[0].function : "?", "", 0);
        fputs("</td><td data-v=\"", o);
        esc(o, g->recent.present ? g->recent.function : "");
        fputs("\">", o);
        if (g->recent.present)
            location_cell(o, g->recent.function, g->recent.file, g->recent.line);
        else
            fputs("none sampled", o);
        fputs("</td>", o);
        NUM(g->site_frees);
        NUM(g->site_accesses_sampled);
#undef NUM
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
    if (!id)
        fputs("<p id=\"no-leaks\">No leak groups.</p>\n", o);
    id = 0;
    for (size_t i = 0; i < r->ngroups; i++) {
        const struct leak_group_view *g = &r->groups[i];
        if (!all && (g->suppressed_by || g->unsampled))
            continue;
        detail(o, r, g, ++id);
    }
    fprintf(o, "<script>%s</script>\n</body></html>\n", page_script);
}

int cmd_html(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL, *suppress = NULL;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--suppress") == 0 && i + 1 < argc)
            suppress = argv[++i];
        else if (strcmp(argv[i], "--all") == 0)
            all = 1;
        else if (argv[i][0] == '-')
            return cmd_usage_error("html", "unknown option \"%s\"", argv[i]);
        else if (dir)
            return cmd_usage_error("html", "one run directory expected, got \"%s\" too", argv[i]);
        else
            dir = argv[i];
    }
    if (!dir || !out)
        return cmd_usage_error("html", "%s", !dir ? "missing RUNDIR" : "missing -o FILE");
    struct leak_report_view r;
    char err[1024];
    if (leak_report_load(dir, &r, err, sizeof err) != 0 || leak_report_prepare(&r, suppress, err, sizeof err) != 0) {
        leak_report_free(&r);
        return cmd_error("html", "%s", err);
    }
    FILE *o = fopen(out, "w");
    if (!o) {
        leak_report_free(&r);
        return cmd_error("html", "%s: %s", out, strerror(errno));
    }
    write_page(o, &r, all);
    int bad = ferror(o) | (fclose(o) != 0);
    leak_report_free(&r);
    return bad ? cmd_error("html", "%s: write failed", out) : 0;
}
