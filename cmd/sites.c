/* vigil sites [--json] [--cfg] BINARY: the site tables compiled into a binary (--cfg: also the
 * control-flow facts of site table version 2: each site's block, per function its edges,
 * exits and calls). Process-wide ids are
 * assigned at run time in registration order, so tables are listed with local indices. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "elfsection.h"
#include "elfsites.h"
#include "json.h"

static void print_text(const char *path, const struct vigil_elf_sites *s)
{
    uint64_t total = 0;
    for (size_t t = 0; t < s->ntables; t++)
        total += s->tables[t].nsites;
    printf("%s: %zu site table%s, %llu sites (process-wide id = module base id + local index, "
           "assigned at run time)\n", path, s->ntables, s->ntables == 1 ? "" : "s",
           (unsigned long long)total);
    for (size_t t = 0; t < s->ntables; t++) {
        const struct vigil_sitefmt_table *table = &s->tables[t];
        printf("\ntable %zu tu %016llx source %s (%u sites)\n", t,
               (unsigned long long)vigil_sitefmt_tu_hash(table), vigil_sitefmt_source(table),
               table->nsites);
        printf("  %6s  %-8s  %-24s  %s\n", "local", "kind", "function", "location");
        for (uint32_t i = 0; i < table->nsites; i++) {
            struct vigil_site_view v;
            vigil_sitefmt_get(table, i, &v);
            const char *function = vigil_site_source_function(&v);
            printf("  %6u  %-8s  %-24s  %s", i, vigil_site_kind_name(v.kind),
                   function[0] ? function : "?", v.file[0] ? v.file : "?");
            if (v.line)
                printf(":%u", v.line);
            if (v.line && v.column)
                printf(":%u", v.column);
            if (v.inlined[0])
                printf("  (inlined in %s)", v.function);
            if (v.kind == VIGIL_SITE_BRANCH && v.aux)
                printf("  %s", v.aux == VIGIL_BRANCH_SELECT ? "select" : "value (no edge)");
            if (vigil_site_ordering_name(v.flags))
                printf("  atomic %s%s", vigil_site_ordering_name(v.flags), v.flags & VIGIL_SITE_RMW ? " rmw" : "");
            putchar('\n');
        }
    }
}

static const char *edge_label(uint32_t label, char *buf, size_t len)
{
    if (label == VIGIL_EDGE_ALWAYS) return "always";
    if (label == VIGIL_EDGE_TRUE) return "true";
    if (label == VIGIL_EDGE_FALSE) return "false";
    snprintf(buf, len, "case%u", label - VIGIL_EDGE_CASE0);
    return buf;
}

static void print_cfg(const struct vigil_elf_sites *s)
{
    for (size_t t = 0; t < s->ntables; t++) {
        struct vigil_cfg cfg;
        char err[200], label[16];
        int rc = vigil_sitefmt_cfg(&s->tables[t], &cfg, err, sizeof err);
        printf("\ntable %zu control flow: ", t);
        if (rc <= 0) {
            printf("%s\n", rc == 0 ? "none (site table version 1, built without them, or no \"" VIGIL_CFG_SECTION "\" section)" : err);
            continue;
        }
        printf("%u functions, %u edges, %u calls\n", cfg.nfunctions, cfg.nedges, cfg.ncalls);
        for (uint32_t f = 0; f < cfg.nfunctions; f++) {
            const struct vigil_cfg_function *fn = &cfg.functions[f];
            printf("  function %u %s: %u blocks%s\n", f, fn->name, fn->nblocks,
                   fn->flags & VIGIL_CFG_ADDRESS_TAKEN ? ", address taken" : "");
            for (uint32_t e = 0; e < fn->nedges; e++)
                printf("    edge %u -> %u %s\n", fn->edges[e].from, fn->edges[e].to,
                       edge_label(fn->edges[e].label, label, sizeof label));
            for (uint32_t e = 0; e < fn->nexits; e++)
                printf("    exit %u\n", fn->exits[e]);
            for (uint32_t c = 0; c < cfg.ncalls; c++)
                if (cfg.calls[c].function == f)
                    printf("    call in %u -> %s\n", cfg.calls[c].block,
                           cfg.calls[c].callee[0] ? cfg.calls[c].callee : "(indirect)");
            for (uint32_t i = 0; i < cfg.nsites; i++)
                if (cfg.site_function[i] == f && cfg.site_block[i] != VIGIL_CFG_NONE)
                    printf("    site %u in %u\n", i, cfg.site_block[i]);
        }
        printf("  %u branch predicates left out (count = total of the source site)\n", cfg.nremoved);
        for (uint32_t i = 0; i < cfg.nremoved; i++)
            printf("    removed site %u %s <- site %u\n", cfg.removed[i].site,
                   cfg.removed[i].predicate ? "true" : "false", cfg.removed[i].source);
        vigil_cfg_free(&cfg);
    }
}

static void print_json(const char *path, const struct vigil_elf_sites *s)
{
    struct vigil_json j;
    vigil_json_init(&j, stdout, 1);
    vigil_json_object_begin(&j);
    vigil_json_key(&j, "binary");
    vigil_json_string(&j, path);
    vigil_json_key(&j, "tables");
    vigil_json_array_begin(&j);
    for (size_t t = 0; t < s->ntables; t++) {
        const struct vigil_sitefmt_table *table = &s->tables[t];
        char hash[17];
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)vigil_sitefmt_tu_hash(table));
        vigil_json_object_begin(&j);
        vigil_json_key(&j, "table");
        vigil_json_uint(&j, t);
        vigil_json_key(&j, "tu_hash");
        vigil_json_string(&j, hash);
        vigil_json_key(&j, "source");
        vigil_json_string(&j, vigil_sitefmt_source(table));
        vigil_json_key(&j, "sites");
        vigil_json_array_begin(&j);
        for (uint32_t i = 0; i < table->nsites; i++) {
            struct vigil_site_view v;
            vigil_sitefmt_get(table, i, &v);
            vigil_json_object_begin(&j);
            vigil_json_key(&j, "local");
            vigil_json_uint(&j, i);
            vigil_json_key(&j, "kind");
            vigil_json_string(&j, vigil_site_kind_name(v.kind));
            vigil_json_key(&j, "function");
            vigil_json_string(&j, vigil_site_source_function(&v));
            if (v.inlined[0]) {   /* the compiled function the optimizer inlined it into */
                vigil_json_key(&j, "inlined_in");
                vigil_json_string(&j, v.function);
            }
            vigil_json_key(&j, "file");
            vigil_json_string(&j, v.file);
            vigil_json_key(&j, "line");
            vigil_json_uint(&j, v.line);
            vigil_json_key(&j, "column");
            vigil_json_uint(&j, v.column);
            if (v.kind == VIGIL_SITE_LOAD || v.kind == VIGIL_SITE_STORE) {
                vigil_json_key(&j, "size");
                vigil_json_uint(&j, v.aux);
            }
            if (v.kind == VIGIL_SITE_BRANCH && v.aux) {   /* a condition with no edge */
                vigil_json_key(&j, "edgeless");
                vigil_json_string(&j, v.aux == VIGIL_BRANCH_SELECT ? "select" : "value");
            }
            if (vigil_site_ordering_name(v.flags)) {   /* an atomic instruction's access */
                vigil_json_key(&j, "atomic");
                vigil_json_string(&j, vigil_site_ordering_name(v.flags));
                vigil_json_key(&j, "rmw");
                vigil_json_bool(&j, (v.flags & VIGIL_SITE_RMW) != 0);
            }
            vigil_json_object_end(&j);
        }
        vigil_json_array_end(&j);
        vigil_json_object_end(&j);
    }
    vigil_json_array_end(&j);
    vigil_json_object_end(&j);
    vigil_json_finish(&j);
}

/* Whether the binary at path carries the runtime's tool registry (it was linked by vigil-cc). */
static int has_vigil_runtime(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    uint64_t offset, size;
    char err[200];
    int found = fstat(fd, &st) == 0 &&
                vigil_elf_find_section(vigil_read_fd, &fd, (uint64_t)st.st_size, "vigil_tools", &offset, &size,
                                       err, sizeof err) == 0;
    close(fd);
    return found;
}

int cmd_sites(int argc, char **argv)
{
    int json = 0, cfg = 0;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--cfg") == 0)
            cfg = 1;
        else if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cmd_usage_error(argv[0], "unknown option \"%s\"", argv[i]);
        else if (path)
            return cmd_usage_error(argv[0], "expected one BINARY, got \"%s\" and \"%s\"", path,
                                   argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return cmd_usage_error(argv[0], "expected a BINARY");
    struct vigil_elf_sites s;
    char err[512];
    if (vigil_elf_sites_load(path, &s, err, sizeof err) != 0)
        return cmd_error(argv[0], "%s", err);
    if (!s.has_section) {
        vigil_elf_sites_free(&s);
        if (has_vigil_runtime(path))
            return cmd_error(argv[0], "%s: linked with vigil's runtime but no function of it is "
                             "instrumented (all left plain by VIGIL_CC_CONFIG's [skip], or compiled "
                             "uninstrumented): no dispatch checks to list", path);
        return cmd_error(argv[0], "%s: no \"%s\" section; expected a binary built with vigil-cc",
                         path, VIGIL_SITES_SECTION);
    }
    if (json)
        print_json(path, &s);
    else
        print_text(path, &s);
    if (cfg && !json)
        print_cfg(&s);
    vigil_elf_sites_free(&s);
    return 0;
}
