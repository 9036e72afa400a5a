/* The command's view of binaries: site tables read from an ELF file's "vigil_sites" section
 * (two hand-made tables with zero padding between them, as the linker leaves them), a binary
 * without tables, bad files; and PC -> function, file:line through libdw.
 * Builds its test programs with clang at run time. */
// unit-extra: cmd/elfsites.c cmd/symbolize.c
// unit-libs: -Icmd -ldw -lelf
#include "check.h"
#include "elfsites.h"
#include "symbolize.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/vigil-test-elfsites-XXXXXX";

/* Write the bytes of a table as a C array in the "vigil_sites" section. */
static void emit_table(FILE *f, const char *name, const unsigned char *bytes, size_t len)
{
    fprintf(f, "__attribute__((used, section(\"vigil_sites\"), aligned(8)))\n"
               "static const unsigned char %s[%zu] = {", name, len);
    for (size_t i = 0; i < len; i++)
        fprintf(f, "%s%u", i ? "," : "", bytes[i]);
    fprintf(f, "};\n");
}

/* The bytes of a control-flow blob in a "vigil_cfg" section that is not loaded, as vigil-cc
 * writes it (module asm: a C global always gets an allocated section). */
static void emit_unloaded(FILE *f, const unsigned char *bytes, size_t len)
{
    fprintf(f, "__asm__(\".pushsection vigil_cfg,\\\"\\\",@progbits\\n.p2align 3\\n.byte ");
    for (size_t i = 0; i < len; i++)
        fprintf(f, "%s%u", i ? "," : "", bytes[i]);
    fprintf(f, "\\n.popsection\\n\");\n");
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    CHECK(rc == 0, "command failed (%d): %s", rc, cmd);
    return rc;
}

/* Load a copy of bin whose byte at `offset` after the first `magic` is `value`. */
static int load_patched(const char *bin, const char *magic, int offset, int value, struct vigil_elf_sites *s,
                        char *err, size_t errlen)
{
    char cmd[1024], bad[300];
    snprintf(bad, sizeof bad, "%s.%s", bin, magic);
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import sys; d=bytearray(open(sys.argv[1],'rb').read()); "
             "i=d.find(b'%s'); d[i+%d]=%d; open(sys.argv[2],'wb').write(d)\" %s %s", magic, offset, value, bin, bad);
    if (run(cmd) != 0)
        return 0;
    return vigil_elf_sites_load(bad, s, err, errlen);
}

static void test_two_tables(void)
{
    struct vigil_sitefmt_builder *a = vigil_sitefmt_builder_new("src/a.c");
    vigil_sitefmt_add(a, VIGIL_SITE_ENTRY, "main", "src/a.c", 3, 1, 0);
    vigil_sitefmt_add(a, VIGIL_SITE_BACKEDGE, "main", "src/a.c", 5, 9, 0);
    vigil_sitefmt_add(a, VIGIL_SITE_LOAD, "main", "", 0, 0, 8);
    uint32_t fn = vigil_sitefmt_add_function(a, "main", 2, 0);
    vigil_sitefmt_add_edge(a, 0, 1, VIGIL_EDGE_ALWAYS);
    vigil_sitefmt_add_exit(a, 1);
    vigil_sitefmt_set_block(a, 1, fn, 1);
    size_t alen, blen, cfg_len = 0;
    unsigned char *cfg = NULL;
    unsigned char *ta = vigil_sitefmt_finish(a, 0x1122334455667788ull, &alen, &cfg, &cfg_len);
    struct vigil_sitefmt_builder *b = vigil_sitefmt_builder_new("lib/b c.c");
    vigil_sitefmt_add(b, VIGIL_SITE_ENTRY, "helper", "lib/b c.c", 10, 2, 0);
    unsigned char *tb = vigil_sitefmt_finish(b, 0xfedcba9876543210ull, &blen, NULL, NULL);
    CHECK(ta && tb && cfg, "encoder failed");
    if (!ta || !tb || !cfg)
        return;

    char src[256], bin[256], cmd[1024];
    snprintf(src, sizeof src, "%s/tables.c", dir);
    snprintf(bin, sizeof bin, "%s/tables", dir);
    FILE *f = fopen(src, "w");
    emit_table(f, "table_a", ta, alen);
    static const unsigned char zeros[16];
    emit_table(f, "padding", zeros, sizeof zeros);   /* zero padding between tables */
    emit_table(f, "table_b", tb, blen);
    emit_unloaded(f, cfg, cfg_len);
    fprintf(f, "int helper(int x) { return x + 1; }\n"
               "int main(void) { return helper(-1); }\n");
    fclose(f);
    free(ta);
    free(tb);
    free(cfg);
    snprintf(cmd, sizeof cmd, "clang -g -O0 %s -o %s", src, bin);
    if (run(cmd))
        return;
    /* The facts are not loaded: the section has no A flag. */
    snprintf(cmd, sizeof cmd, "readelf -SW %s | grep -E ' vigil_cfg +PROGBITS' | grep -qvE ' [WXMSILOGTE]*A[WXMSILOGTE]* '", bin);
    run(cmd);

    struct vigil_elf_sites s;
    char err[512] = "";
    int rc = vigil_elf_sites_load(bin, &s, err, sizeof err);
    CHECK(rc == 0, "load %s: %s", bin, err);
    if (rc)
        return;
    CHECK(s.has_section, "has_section");
    CHECK(!s.has_runtime_symbol, "a program without the runtime has no runtime symbol");
    CHECK(s.ntables == 2, "ntables %zu (section order: a, then b, padding skipped)", s.ntables);
    if (s.ntables == 2) {
        const struct vigil_sitefmt_table *t = vigil_elf_sites_find(&s, 0x1122334455667788ull, 3);
        CHECK(t == &s.tables[0], "find table a");
        CHECK(vigil_elf_sites_find(&s, 0x1122334455667788ull, 4) == NULL,
              "same hash, other site count: not the same table");
        CHECK(vigil_sitefmt_tu_hash(&s.tables[1]) == 0xfedcba9876543210ull, "tu hash of b");
        CHECK(strcmp(vigil_sitefmt_source(&s.tables[1]), "lib/b c.c") == 0, "source of b: %s",
              vigil_sitefmt_source(&s.tables[1]));
        struct vigil_site_view v;
        vigil_sitefmt_get(&s.tables[0], 1, &v);
        CHECK(v.kind == VIGIL_SITE_BACKEDGE && strcmp(v.function, "main") == 0 &&
              strcmp(v.file, "src/a.c") == 0 && v.line == 5 && v.column == 9,
              "site a/1: %d %s %s:%u:%u", v.kind, v.function, v.file, v.line, v.column);
        vigil_sitefmt_get(&s.tables[0], 2, &v);
        CHECK(v.kind == VIGIL_SITE_LOAD && v.aux == 8 && v.file[0] == '\0', "site a/2");
        struct vigil_cfg c;
        CHECK(vigil_sitefmt_cfg(&s.tables[0], &c, err, sizeof err) == 1 && c.nfunctions == 1 &&
              c.functions[0].nedges == 1 && c.site_function[1] == 0 && c.site_block[1] == 1 &&
              c.site_function[0] == VIGIL_CFG_NONE, "facts of table a from vigil_cfg: %s", err);
        vigil_cfg_free(&c);
        CHECK(vigil_sitefmt_cfg(&s.tables[1], &c, err, sizeof err) == 0, "table b has no facts");
    }
    vigil_elf_sites_free(&s);

    /* A corrupted table is an error naming the file and the section; so are malformed facts. */
    rc = load_patched(bin, "VGLSITES", 8, 9, &s, err, sizeof err);
    CHECK(rc == -1 && strstr(err, bin) == err && strstr(err, "vigil_sites"), "corrupt table: rc %d \"%s\"", rc, err);
    CHECK(s.tables == NULL && s.section == NULL, "failed load leaves nothing allocated");
    rc = load_patched(bin, "VGLCFLOW", 28, 3, &s, err, sizeof err);
    CHECK(rc == -1 && strstr(err, bin) == err && strstr(err, "vigil_cfg") && strstr(err, "multiple of 4"),
          "corrupt facts: rc %d \"%s\"", rc, err);
}

static void test_plain_and_bad_files(void)
{
    struct vigil_elf_sites s;
    char err[512] = "", path[300];
    snprintf(path, sizeof path, "%s/not-elf", dir);
    FILE *f = fopen(path, "w");
    fputs("#!/bin/sh\necho hi\n", f);
    fclose(f);
    CHECK(vigil_elf_sites_load(path, &s, err, sizeof err) == -1 && strstr(err, path) == err &&
          strstr(err, "not an ELF"), "text file: \"%s\"", err);
    snprintf(path, sizeof path, "%s/missing", dir);
    CHECK(vigil_elf_sites_load(path, &s, err, sizeof err) == -1 && strstr(err, path) == err,
          "missing file: \"%s\"", err);
    /* /proc/self/exe: this test, an ordinary binary without site tables */
    CHECK(vigil_elf_sites_load("/proc/self/exe", &s, err, sizeof err) == 0 && !s.has_section &&
          s.ntables == 0, "plain binary: %s", err);
    vigil_elf_sites_free(&s);
}

/* Build <dir>/NAME.c (SOURCE) with clang -g OPT -no-pie (the address it prints at run time is
 * then its link-time address), run it and read the address it prints into *address. Returns its
 * symbolizer, or NULL when a step failed (a failed check says which). */
static struct vigil_symbolizer *build_and_open(const char *name, const char *opt, const char *source,
                                               unsigned long *address)
{
    char src[256], bin[256], cmd[1024], out[300];
    snprintf(src, sizeof src, "%s/%s.c", dir, name);
    snprintf(bin, sizeof bin, "%s/%s", dir, name);
    snprintf(out, sizeof out, "%s/%s.out", dir, name);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL, "create %s", src);
    if (!f)
        return NULL;
    fputs(source, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "clang -g %s -no-pie %s -o %s && %s > %s", opt, src, bin, bin, out);
    if (run(cmd))
        return NULL;
    f = fopen(out, "r");
    *address = 0;
    CHECK(f && fscanf(f, "%lx", address) == 1, "read the address %s printed", name);
    if (f)
        fclose(f);
    char err[512] = "";
    struct vigil_symbolizer *s = vigil_symbolizer_open(bin, err, sizeof err);
    CHECK(s != NULL, "open symbolizer: %s", err);
    return s;
}

static void test_symbolize(void)
{
    unsigned long address;
    struct vigil_symbolizer *s = build_and_open("sym", "-O0",
        "#include <stdio.h>\n"
        "#include <stdint.h>\n"
        "int target(int x)\n"
        "{\n"
        "    return x * 2;\n"
        "}\n"
        "int main(void) { printf(\"%lx\\n\", (unsigned long)(uintptr_t)&target); return target(0); }\n",
        &address);
    if (!s)
        return;
    struct vigil_source_location loc;
    int rc = vigil_symbolize(s, address, &loc);
    CHECK(rc == 0 && strcmp(loc.function, "target") == 0, "function at %lx: \"%s\"", address,
          loc.function);
    CHECK(strstr(loc.file, "sym.c") != NULL && loc.line >= 3 && loc.line <= 5,
          "location at %lx: %s:%d", address, loc.file, loc.line);
    CHECK(vigil_symbolize(s, 0, &loc) == -1, "address 0 is unknown");
    vigil_symbolizer_close(s);
    char err[512] = "";
    CHECK(vigil_symbolizer_open("/nonexistent/binary", err, sizeof err) == NULL &&
          strstr(err, "/nonexistent/binary") == err, "missing binary: \"%s\"", err);
}

/* A return address in code inlined twice: the chain of inlined calls, innermost first, each
 * with its function and the line of its call. */
static void test_symbolize_inlined(void)
{
    unsigned long address;
    struct vigil_symbolizer *s = build_and_open("inl", "-O2",
               "#include <stdio.h>\nvolatile int after;\n"                                     /* 1, 2 */
               "__attribute__((noinline)) void probe(void)\n"                                 /* 3 */
               "{ printf(\"%lx\\n\", (unsigned long)__builtin_return_address(0)); }\n"          /* 4 */
               "static inline __attribute__((always_inline)) void inner(int x)\n"             /* 5 */
               "{\n"                                                                          /* 6 */
               "    if (x) { probe(); after++; }\n"                                            /* 7 */
               "}\n"                                                                          /* 8 */
               "static inline __attribute__((always_inline)) void mid(int x)\n"               /* 9 */
               "{\n"                                                                          /* 10 */
               "    inner(x + 1);\n"                                                           /* 11 */
               "}\n"                                                                          /* 12 */
               "__attribute__((noinline)) void outer(int x)\n"                                /* 13 */
               "{\n"                                                                          /* 14 */
               "    mid(x);\n"                                                                 /* 15 */
               "}\n"                                                                          /* 16 */
               "int main(void) { outer(1); return 0; }\n",
        &address);
    if (!s)
        return;
    struct vigil_source_location locs[VIGIL_MAX_INLINED];
    int n = vigil_symbolize_inlined(s, address - 1, locs, VIGIL_MAX_INLINED);
    CHECK(n == 3, "%d frames at %lx, expected 3 (inner, mid, outer)", n, address - 1);
    static const char *const names[] = {"inner", "mid", "outer"};
    static const int lines[] = {7, 11, 15};
    for (int i = 0; i < n && i < 3; i++)
        CHECK(!strcmp(locs[i].function, names[i]) && locs[i].line == lines[i] && strstr(locs[i].file, "inl.c") &&
              !strcmp(locs[i].container, "outer"),
              "frame %d: %s %s:%d in %s, expected %s line %d in outer", i, locs[i].function, locs[i].file,
              locs[i].line, locs[i].container, names[i], lines[i]);
    CHECK(vigil_symbolize_inlined(s, address - 1, locs, 2) == 2, "max 2 frames");
    CHECK(vigil_symbolize_inlined(s, 0, locs, VIGIL_MAX_INLINED) == 0, "address 0: no frames");
    vigil_symbolizer_close(s);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return CHECK_DONE("test_elfsites");
    }
    test_two_tables();
    test_plain_and_bad_files();
    test_symbolize();
    test_symbolize_inlined();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("note: could not remove %s\n", dir);
    return CHECK_DONE("test_elfsites");
}
