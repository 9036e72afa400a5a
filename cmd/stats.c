/* vigil stats [--json] RUNDIR: per dispatch check, executions, bursts and current rate, with
 * function and file:line from the binaries named in the report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "sitemap.h"

static void print_location(const struct vigil_site_view *v)
{
    const char *function = vigil_site_source_function(v);
    printf("%s  %s", function[0] ? function : "?", v->file[0] ? v->file : "?");
    if (v->line)
        printf(":%u", v->line);
    if (v->inlined[0])
        printf("  (inlined in %s)", v->function);
}

static void print_text(const char *path, const struct vigil_run_report *r,
                       const struct vigil_sitemap *m, const size_t *order)
{
    printf("%s: %s (pid %lld), ", path, r->program, (long long)r->pid);
    if (r->running)
        printf("still running (a report written while it ran)");
    else if (r->exited)
        printf("exit status %d", r->exit_status);
    else
        printf("killed by signal %d", r->signal);
    printf(", %zu dispatch checks executed, %llu bursts\n", r->nsites,
           (unsigned long long)r->bursts_total);
    for (size_t i = 0; i < m->nmodules; i++)
        if (m->modules[i].problem[0])
            printf("note: module %zu: %s; its sites are shown by id only\n", i,
                   m->modules[i].problem);
    printf("%10s  %-8s  %14s  %10s  %8s  %s\n", "id", "kind", "executions", "bursts", "rate",
           "function  location");
    for (size_t k = 0; k < r->nsites; k++) {
        const struct vigil_run_site *s = &r->sites[order[k]];
        char rate[32];
        vigil_format_rate(s->rate, rate, sizeof rate);
        printf("%10llu  %-8s  %14llu  %10llu  %8s  ",
               (unsigned long long)r->modules[s->module].base_id + s->index,
               vigil_site_kind_name((enum vigil_site_kind)s->kind),
               (unsigned long long)s->execs, (unsigned long long)s->bursts, rate);
        struct vigil_site_view v;
        if (vigil_sitemap_lookup(m, s->module, s->index, &v) == 0)
            print_location(&v);
        else
            printf("(module %u, local %u)", s->module, s->index);
        putchar('\n');
    }
}

static void print_json(const char *path, const struct vigil_run_report *r,
                       const struct vigil_sitemap *m, const size_t *order)
{
    struct vigil_json j;
    vigil_json_init(&j, stdout, 1);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "report");
    vigil_json_string(&j, path);
    vigil_json_key(&j, "program");
    vigil_json_string(&j, r->program);
    vigil_json_key(&j, "pid");
    vigil_json_int(&j, r->pid);
    if (r->running) {
        vigil_json_key(&j, "running");
        vigil_json_bool(&j, 1);
    } else {
        vigil_json_key(&j, r->exited ? "exit_status" : "signal");
        vigil_json_int(&j, r->exited ? r->exit_status : r->signal);
    }
    vigil_json_key(&j, "duration_ns");
    vigil_json_uint(&j, r->duration_ns);
    vigil_json_key(&j, "bursts");
    vigil_json_uint(&j, r->bursts_total);
    vigil_json_key(&j, "modules");
    vigil_json_array_begin(&j);
    for (size_t i = 0; i < r->nmodules; i++) {
        char hash[17];
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)r->modules[i].tu_hash);
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "module");
        vigil_json_uint(&j, i);
        vigil_json_key(&j, "path");
        vigil_json_string(&j, r->modules[i].path);
        vigil_json_key(&j, "tu_hash");
        vigil_json_string(&j, hash);
        vigil_json_key(&j, "nsites");
        vigil_json_uint(&j, r->modules[i].nsites);
        vigil_json_key(&j, "base_id");
        vigil_json_uint(&j, r->modules[i].base_id);
        vigil_json_key(&j, "problem");
        vigil_json_string(&j, m->modules[i].problem[0] ? m->modules[i].problem : NULL);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_key(&j, "sites");
    vigil_json_array_begin(&j);
    for (size_t k = 0; k < r->nsites; k++) {
        const struct vigil_run_site *s = &r->sites[order[k]];
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "id");
        vigil_json_uint(&j, (uint64_t)r->modules[s->module].base_id + s->index);
        vigil_json_key(&j, "module");
        vigil_json_uint(&j, s->module);
        vigil_json_key(&j, "local");
        vigil_json_uint(&j, s->index);
        vigil_json_key(&j, "kind");
        vigil_json_string(&j, vigil_site_kind_name((enum vigil_site_kind)s->kind));
        vigil_json_key(&j, "executions");
        vigil_json_uint(&j, s->execs);
        vigil_json_key(&j, "bursts");
        vigil_json_uint(&j, s->bursts);
        vigil_json_key(&j, "rate");
        vigil_json_double(&j, s->rate);
        struct vigil_site_view v;
        int known = vigil_sitemap_lookup(m, s->module, s->index, &v) == 0;
        vigil_json_key(&j, "function");
        vigil_json_string(&j, known ? vigil_site_source_function(&v) : NULL);
        if (known && v.inlined[0]) {   /* the compiled function the optimizer inlined it into */
            vigil_json_key(&j, "inlined_in");
            vigil_json_string(&j, v.function);
        }
        vigil_json_key(&j, "file");
        vigil_json_string(&j, known ? v.file : NULL);
        vigil_json_key(&j, "line");
        if (known)
            vigil_json_uint(&j, v.line);
        else
            vigil_json_null(&j);
        vigil_json_key(&j, "column");
        if (known)
            vigil_json_uint(&j, v.column);
        else
            vigil_json_null(&j);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
}

int cmd_stats(int argc, char **argv)
{
    int json = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cmd_usage_error(argv[0], "unknown option \"%s\"", argv[i]);
        else if (path)
            return cmd_usage_error(argv[0], "expected one RUNDIR, got \"%s\" and \"%s\"", path,
                                   argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return cmd_usage_error(argv[0], "expected a RUNDIR (a run report directory)");
    struct vigil_run_report r;
    char err[1024];
    if (vigil_run_report_load(path, &r, err, sizeof err) != 0)
        return cmd_error(argv[0], "%s", err);
    struct vigil_sitemap m;
    size_t *order = vigil_sites_by_execs(&r);
    if (!order || vigil_sitemap_build(&r, &m) != 0) {
        free(order);
        vigil_run_report_free(&r);
        return cmd_error(argv[0], "out of memory");
    }
    if (json)
        print_json(path, &r, &m, order);
    else
        print_text(path, &r, &m, order);
    free(order);
    vigil_sitemap_free(&m);
    vigil_run_report_free(&r);
    return 0;
}
