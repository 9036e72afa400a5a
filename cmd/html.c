/* The findings page: one self-contained HTML file (no external resources) for any tool's
 * findings. A sortable table, one row per finding; clicking a row shows its locations, stacks,
 * fields and the source around its locations and stack frames, the lines highlighted (class
 * "line ROLE ...", the roles of the locations on that line, the finding's first location
 * first); each location and frame links to its line there (id "gN-HASH-LINE"). The sources are
 * read now, from the paths the findings name, and embedded; a missing file is said so.
 * Everything from the program, the report or the sources is HTML-escaped. The page opens the
 * row named by its URL fragment (page.html#g2), which is how the tests click; the ids (table
 * "groups", rows gN, sections detail-gN) are those of the leak page this one grew out of. */
#include "html.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "findings.h"
#include "savefile.h"

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

/* A role as a CSS class: [a-z0-9-], "location" when empty. */
static void role_class(FILE *o, const char *role)
{
    if (!role || !role[0]) {
        fputs("location", o);
        return;
    }
    for (; *role; role++) {
        char c = *role;
        fputc((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ? c
              : c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : '-', o);
    }
}

static void place(FILE *o, const char *function, const char *file, unsigned line)
{
    esc(o, function && function[0] ? function : "?");
    if (file && file[0]) {
        const char *base = strrchr(file, '/');
        fputs(" <span class=\"loc\" title=\"", o);
        esc(o, file);
        fputs("\">", o);
        esc(o, base ? base + 1 : file);
        if (line)
            fprintf(o, ":%u", line);
        fputs("</span>", o);
    }
}

/* The id of line n of file in finding id's excerpts: "g<id>-<FNV-1a of the path>-<n>". */
static void line_id(FILE *o, size_t id, const char *file, unsigned n)
{
    uint32_t h = 2166136261u;
    for (const char *c = file; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    fprintf(o, "g%zu-%08x-%u", id, h, n);
}

/* A place that links to its line in the finding's excerpts, when it has one (a file that
 * cannot be read here has no excerpt). */
static void linked_place(FILE *o, size_t id, const char *function, const char *file, unsigned line)
{
    if (!file || !file[0] || !line || access(file, R_OK) != 0) {
        place(o, function, file, line);
        return;
    }
    fputs("<a class=\"src-link\" href=\"#", o);
    line_id(o, id, file, line);
    fputs("\">", o);
    place(o, function, file, line);
    fputs("</a>", o);
}

/* Is line n of the file marked by a location of f in that file? The first such location. */
static long first_mark(const struct vigil_finding *f, const char *file, unsigned n)
{
    for (size_t k = 0; k < f->nlocations; k++)
        if (f->locations[k].line == n && strcmp(f->locations[k].file, file) == 0)
            return (long)k;
    return -1;
}

static int near_mark(const struct vigil_finding *f, const char *file, unsigned n)
{
    for (size_t s = 0; s < f->nstacks; s++)
        for (size_t k = 0; k < f->stacks[s].nframes; k++) {
            const struct vigil_frame *fr = &f->stacks[s].frames[k];
            if (fr->line && strcmp(fr->file, file) == 0 && n + CONTEXT_LINES / 4 >= fr->line &&
                n <= fr->line + CONTEXT_LINES / 4)
                return 1;
        }
    for (size_t k = 0; k < f->nlocations; k++) {
        unsigned m = f->locations[k].line;
        if (m && strcmp(f->locations[k].file, file) == 0 && n + CONTEXT_LINES >= m && n <= m + CONTEXT_LINES)
            return 1;
    }
    return 0;
}

/* The lines of file near the finding's locations there, the located lines highlighted. */
static void source_excerpt(FILE *o, const struct vigil_finding *f, size_t id, const char *path)
{
    fputs("<div class=\"file\"><div class=\"fname\">", o);
    esc(o, path);
    fputs("</div>", o);
    FILE *in = fopen(path, "r");
    if (!in) {
        fputs("<p class=\"missing\">source not available: ", o);
        esc(o, path);
        fputs(" (", o);
        esc(o, strerror(errno));
        fputs("); the debug info names this file: make the page where the sources are</p></div>", o);
        return;
    }
    fputs("<pre class=\"src\">", o);
    char buf[4096];
    unsigned n = 0;
    int at_line_start = 1, open = 0, shown_any = 0, gap = 0;
    while (fgets(buf, sizeof buf, in)) {
        if (at_line_start) {
            n++;
            int show = near_mark(f, path, n);
            if (show) {
                if (gap && shown_any)
                    fputs("<span class=\"gap\">   &#8942;</span>\n", o);
                gap = 0;
                shown_any = 1;
                fputs("<span class=\"line", o);
                long first = first_mark(f, path, n);
                if (first >= 0)
                    for (size_t k = (size_t)first; k < f->nlocations; k++)
                        if (f->locations[k].line == n && strcmp(f->locations[k].file, path) == 0) {
                            fputc(' ', o);
                            role_class(o, f->locations[k].role);
                        }
                fprintf(o, "\" data-line=\"%u\" id=\"", n);
                line_id(o, id, path, n);
                fputc('"', o);
                if (first >= 0)
                    fprintf(o, " data-mark=\"%s\"", first == 0 ? "first" : "related");
                fprintf(o, "><span class=\"no\">%5u</span> ", n);
                open = 1;
            } else {
                gap = 1;
                open = 0;
            }
        }
        size_t len = strlen(buf);
        int ends = len && buf[len - 1] == '\n';
        if (ends)
            buf[len - 1] = '\0';
        if (open) {
            esc(o, buf);
            if (ends)
                fputs("</span>", o);
        }
        at_line_start = ends;
    }
    if (open && !at_line_start)
        fputs("</span>", o);
    fclose(in);
    fputs("</pre></div>", o);
}

static void detail(FILE *o, const struct vigil_finding *f, size_t id)
{
    fprintf(o, "<section class=\"detail\" id=\"detail-g%zu\" hidden>\n<h2>%zu. ", id, id);
    esc(o, f->tool);
    fputc('/', o);
    esc(o, f->kind);
    fprintf(o, " <span class=\"sev-%s\">%s</span></h2>\n<p class=\"message\">", vigil_severity_name(f->severity),
            vigil_severity_name(f->severity));
    esc(o, f->message);
    fputs("</p>\n", o);
    if (f->nlocations) {
        fputs("<h3>Locations</h3><ul class=\"locations\">", o);
        for (size_t k = 0; k < f->nlocations; k++) {
            const struct vigil_location *v = &f->locations[k];
            fputs("<li>", o);
            if (v->message[0] || v->role[0]) {
                esc(o, v->message[0] ? v->message : v->role);
                fputs(": ", o);
            }
            linked_place(o, id, v->function, v->file, v->line);
            fputs("</li>", o);
        }
        fputs("</ul>\n", o);
    }
    for (size_t s = 0; s < f->nstacks; s++) {
        const struct vigil_stack *st = &f->stacks[s];
        fputs("<h3>", o);
        esc(o, st->label[0] ? st->label : "call");
        fputs(" stack</h3><ol class=\"stack\">", o);
        for (size_t k = 0; k < st->nframes; k++) {
            const struct vigil_frame *fr = &st->frames[k];
            fputs("<li>", o);
            linked_place(o, id, fr->function, fr->file, fr->line);
            if (!fr->file[0] && fr->pc)
                fprintf(o, " <span class=\"loc\">pc 0x%llx</span>", (unsigned long long)fr->pc);
            if (fr->inlined)
                fputs(" <span class=\"loc\">(inlined)</span>", o);
            fputs("</li>", o);
        }
        fputs("</ol>\n", o);
    }
    if (f->nfields) {
        fputs("<h3>Details</h3><table class=\"fields\">", o);
        for (size_t k = 0; k < f->nfields; k++) {
            const struct vigil_field *x = &f->fields[k];
            fputs("<tr><td>", o);
            esc(o, x->key);
            fputs("</td><td class=\"num\">", o);
            if (x->value.is_number) {
                char text[64];
                if (strcmp(x->unit, "bytes") == 0)
                    vigil_format_bytes(x->value.number, text, sizeof text);
                else
                    snprintf(text, sizeof text, "%.15g%s%s", x->value.number, x->unit[0] ? " " : "", x->unit);
                esc(o, text);
            } else {
                esc(o, x->value.string);
            }
            fputs("</td></tr>", o);
        }
        fputs("</table>\n", o);
    }
    /* One excerpt per file, in the order the locations name them, then the stacks' other files
     * (whose files are not all readable: a library's frames say "source not available"). */
    int any = 0;
    for (size_t k = 0; k < f->nlocations; k++) {
        const struct vigil_location *v = &f->locations[k];
        if (!v->file[0] || !v->line)
            continue;
        int seen = 0;
        for (size_t p = 0; p < k && !seen; p++)
            seen = f->locations[p].line && strcmp(f->locations[p].file, v->file) == 0;
        if (!seen)
            source_excerpt(o, f, id, v->file);
        any = 1;
    }
    for (size_t s = 0; s < f->nstacks; s++)
        for (size_t k = 0; k < f->stacks[s].nframes; k++) {
            const struct vigil_frame *fr = &f->stacks[s].frames[k];
            if (!fr->file[0] || !fr->line || access(fr->file, R_OK) != 0)
                continue;
            int seen = 0;
            for (size_t p = 0; p < f->nlocations && !seen; p++)
                seen = f->locations[p].line && strcmp(f->locations[p].file, fr->file) == 0;
            for (size_t t = 0; t <= s && !seen; t++)
                for (size_t p = 0; p < (t == s ? k : f->stacks[t].nframes) && !seen; p++)
                    seen = f->stacks[t].frames[p].line && strcmp(f->stacks[t].frames[p].file, fr->file) == 0;
            if (!seen)
                source_excerpt(o, f, id, fr->file);
            any = 1;
        }
    if (!any)
        fputs("<p class=\"missing\">no line information for this finding</p>", o);
    fputs("</section>\n", o);
}

static const char page_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
    "table{border-collapse:collapse}#groups{width:100%}th,td{border-bottom:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
    "#groups th{cursor:pointer;background:#f4f4f4;user-select:none}th.sorted-asc::after{content:' \\25B2'}"
    "th.sorted-desc::after{content:' \\25BC'}#groups tbody tr{cursor:pointer}#groups tbody tr:hover{background:#eef5ff}"
    "tr.selected{background:#dbe9ff}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".loc{color:#666}.sev-error{color:#b00020;font-weight:600}.sev-warning{color:#a15c00;font-weight:600}"
    ".sev-note{color:#2a5db0}.message{font-size:15px}"
    "pre.src{background:#fafafa;border:1px solid #ddd;padding:6px;overflow-x:auto}"
    ".line,.gap{display:block}.gap{color:#999}.line .no{color:#999;user-select:none}"
    ".line[data-mark=first]{background:#ffe0e0}.line[data-mark=related]{background:#e0f0ff}"
    "a.src-link{color:inherit;text-decoration:none}a.src-link:hover{text-decoration:underline}"
    ".line:target{outline:2px solid #2a5db0}"
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

static void text_cell(FILE *o, const char *sort_value, const char *cls, const char *text)
{
    fputs("<td data-v=\"", o);
    esc(o, sort_value);
    fputs("\"", o);
    if (cls)
        fprintf(o, " class=\"%s\"", cls);
    fputs(">", o);
    esc(o, text);
    fputs("</td>", o);
}

static void num_cell(FILE *o, double v, const char *text)
{
    fprintf(o, "<td class=\"num\" data-v=\"%.17g\">", v);
    esc(o, text);
    fputs("</td>", o);
}

/* The keys of the fields marked total, over all findings, in the order they first appear:
 * the table's extra columns (objects, bytes, ...). */
static size_t total_keys(const struct vigil_findings *l, const char **keys, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < l->nfindings; i++)
        for (size_t k = 0; k < l->findings[i].nfields; k++) {
            const struct vigil_field *x = &l->findings[i].fields[k];
            if (!x->total || !x->value.is_number)
                continue;
            size_t p = 0;
            while (p < n && strcmp(keys[p], x->key) != 0)
                p++;
            if (p == n && n < max)
                keys[n++] = x->key;
        }
    return n;
}

static void write_page(FILE *o, const struct vigil_findings *l, const char *title, const char *intro)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>", o);
    esc(o, title);
    fprintf(o, "</title><style>%s</style></head><body>\n<h1>", page_style);
    esc(o, title);
    fputs("</h1>\n", o);
    for (const char *p = intro ? intro : ""; *p;) {
        size_t n = strcspn(p, "\n");
        char *para = strndup(p, n);
        fputs("<p class=\"summary\">", o);
        esc(o, para);
        fputs("</p>\n", o);
        free(para);
        p += n + (p[n] == '\n');
    }
    fputs("<p class=\"legend\"><span class=\"line\" data-mark=\"first\">the finding's location</span>"
          "<span class=\"line\" data-mark=\"related\">related locations</span> Click a row for its "
          "source; click a column header to sort.</p>\n", o);
    const char *keys[16];
    size_t nkeys = total_keys(l, keys, sizeof keys / sizeof keys[0]);
    fputs("<table id=\"groups\"><thead><tr><th>#</th><th>tool</th><th>kind</th><th>severity</th><th>score</th>", o);
    for (size_t k = 0; k < nkeys; k++) {
        fputs("<th>", o);
        esc(o, keys[k]);
        fputs("</th>", o);
    }
    fputs("<th>where</th><th>related</th><th>message</th></tr></thead><tbody>\n", o);
    char text[64];
    for (size_t i = 0; i < l->nfindings; i++) {
        const struct vigil_finding *f = &l->findings[i];
        fprintf(o, "<tr id=\"g%zu\">", i + 1);
        snprintf(text, sizeof text, "%zu", i + 1);
        num_cell(o, (double)(i + 1), text);
        text_cell(o, f->tool, NULL, f->tool);
        text_cell(o, f->kind, NULL, f->kind);
        char sev[16], sev_class[24];
        snprintf(sev, sizeof sev, "%d", (int)f->severity);
        snprintf(sev_class, sizeof sev_class, "sev-%s", vigil_severity_name(f->severity));
        text_cell(o, sev, sev_class, vigil_severity_name(f->severity));
        snprintf(text, sizeof text, "%.6g", f->score);
        num_cell(o, f->score, text);
        for (size_t k = 0; k < nkeys; k++) {
            const struct vigil_field *x = vigil_finding_field(f, keys[k]);
            if (!x || !x->value.is_number) {
                num_cell(o, -1, "");
                continue;
            }
            if (strcmp(x->unit, "bytes") == 0)
                vigil_format_bytes(x->value.number, text, sizeof text);
            else
                snprintf(text, sizeof text, "%.15g", x->value.number);
            num_cell(o, x->value.number, text);
        }
        for (size_t k = 0; k < 2; k++) {
            const struct vigil_location *v = k < f->nlocations ? &f->locations[k] : NULL;
            fputs("<td data-v=\"", o);
            esc(o, v ? v->function : "");
            fputs("\">", o);
            if (v)
                place(o, v->function, v->file, v->line);
            fputs("</td>", o);
        }
        text_cell(o, f->message, "message-cell", f->message);
        fputs("</tr>\n", o);
    }
    fputs("</tbody></table>\n", o);
    if (!l->nfindings)
        fputs("<p id=\"no-findings\">No findings.</p>\n", o);
    for (size_t i = 0; i < l->nfindings; i++)
        detail(o, &l->findings[i], i + 1);
    fprintf(o, "<script>%s</script>\n</body></html>\n", page_script);
}

struct page { const struct vigil_findings *l; const char *title, *intro; };

static int write_page_file(FILE *o, void *arg)
{
    const struct page *pg = arg;
    write_page(o, pg->l, pg->title, pg->intro);
    return ferror(o) != 0;
}

int cmd_findings_page(const char *path, const struct vigil_findings *l, const char *title, const char *intro,
                      char *err, size_t errlen)
{
    struct page pg = {l, title, intro};
    return vigil_save_file(path, write_page_file, &pg, err, errlen);
}
