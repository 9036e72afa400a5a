/* vigil-cc's command-line classifier (compiler/args.c): actions, inputs, where each argument
 * goes, output and dependency-file names as clang derives them, @file expansion. */
#include "check.h"
#include "../../compiler/args.c" /* the runner links only common/ sources */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct vcc_args args;

/* Classify a space-separated command line (no quoting needed in these tests). */
static int classify(const char *line)
{
    static char buf[1024];
    static char *argv[64];
    int argc = 0;
    vcc_args_free(&args);
    snprintf(buf, sizeof buf, "%s", line);
    for (char *t = strtok(buf, " "); t; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    char err[128] = "";
    return vcc_classify(argc, argv, &args, err, sizeof err);
}

static int index_of(const char *arg)
{
    for (int i = 0; i < args.argc; i++)
        if (!strcmp(args.argv[i], arg)) return i;
    return -1;
}

static unsigned roles_of(const char *arg)
{
    int i = index_of(arg);
    return i < 0 ? 0xdead : args.roles[i];
}

static void test_actions(void)
{
    CHECK(classify("-c a.c") == 0 && args.action == VCC_COMPILE, "action %d", args.action);
    CHECK(classify("-S a.c") == 0 && args.action == VCC_ASSEMBLY, "action %d", args.action);
    CHECK(classify("-c -S a.c") == 0 && args.action == VCC_ASSEMBLY, "-S beats -c");
    CHECK(classify("a.c b.o -o prog") == 0 && args.action == VCC_LINK, "action %d", args.action);
    CHECK(args.ninputs == 2 && args.nsources == 1, "%d inputs, %d sources", args.ninputs, args.nsources);
    CHECK(args.output && !strcmp(args.output, "prog"), "output %s", args.output);

    static const char *const passes[] = {
        "-E a.c", "-M a.c", "-MM a.c", "-c a.c -fsyntax-only", "-c -flto a.c", "-c -flto=thin a.c",
        "-save-temps -c a.c", "--version", "-dumpversion", "-dumpmachine", "-print-prog-name=ld",
        "-print-search-dirs", "-v", "-c -x c -", "-c a.s", "-c a.cpp", "-c -emit-llvm a.c",
        "-fsanitize=address a.c", "--coverage -c a.c", "-c a.c b.c -o x.o", "-shared a.o -o l.so",
        "-c -x assembler a.c", "-###", "-c", "-pg a.c",
    };
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
        classify(passes[i]);
        CHECK(args.action == VCC_PASS_THROUGH, "'%s' is not a pass-through (action %d)", passes[i],
              args.action);
    }
    classify("-c -fno-lto a.c");
    CHECK(args.action == VCC_COMPILE, "-fno-lto is not -flto");
    classify("-MD -MF x.d -c a.c");
    CHECK(args.action == VCC_COMPILE, "-MD is not -M");
    classify("a.o b.o -o prog");
    CHECK(args.action == VCC_LINK, "linking objects still adds the runtime (action %d)", args.action);
    CHECK(classify("-c a.c -o") == -1, "-o without a value is an error");
}

static void test_inputs(void)
{
    classify("-c a.c b.i c.s d.S e.cpp f.h");
    CHECK(args.ninputs == 6 && args.nsources == 2, "%d inputs %d sources", args.ninputs, args.nsources);
    CHECK(args.inputs[0].lang == VCC_LANG_C, "a.c");
    CHECK(args.inputs[1].lang == VCC_LANG_C_PREPROCESSED, "b.i");
    for (int k = 2; k < 6; k++)
        CHECK(args.inputs[k].lang == VCC_LANG_OTHER, "%s is not C", args.inputs[k].path);

    classify("-x c foo.txt -x none bar.c -xcpp-output baz -x assembler q.c");
    CHECK(args.inputs[0].lang == VCC_LANG_C && !strcmp(args.inputs[0].xlang, "c"), "-x c");
    CHECK(args.inputs[1].lang == VCC_LANG_C, "-x none: by extension");
    CHECK(args.inputs[2].lang == VCC_LANG_C_PREPROCESSED && !strcmp(args.inputs[2].xlang, "cpp-output"),
          "-xcpp-output joined");
    CHECK(args.inputs[3].lang == VCC_LANG_OTHER, "-x assembler q.c is not C");
    CHECK(roles_of("assembler") == VCC_IS_LANG, "-x value role %x", roles_of("assembler"));

    /* Option values are not inputs. */
    classify("-c -I inc -D X=1 -include pre.h -isystem sys -o out.o -MF dep.d -MT t -Xlinker -z "
             "-mllvm -x86-asm-syntax=intel a.c");
    CHECK(args.ninputs == 1 && !strcmp(args.inputs[0].path, "a.c"), "%d inputs, first %s",
          args.ninputs, args.ninputs ? args.inputs[0].path : "-");
    CHECK(args.dep_file == 0 && args.dep_file_named && args.dep_target_named, "dep flags");
}

static void test_roles(void)
{
    classify("-O2 -g -fPIC -Wall -Wl,-z,now -lm -L/lib -DX -Iinc -std=c99 -Wa,--noexecstack "
             "-Xclang -foo -MD -pthread --unknown-flag a.c b.o -o prog");
    const unsigned all = VCC_TO_FE | VCC_TO_BE | VCC_TO_LINK;
    CHECK(roles_of("-O2") == all, "-O2 %x", roles_of("-O2"));
    CHECK(roles_of("-g") == all, "-g %x", roles_of("-g"));
    CHECK(roles_of("-fPIC") == all, "-fPIC %x", roles_of("-fPIC"));
    CHECK(roles_of("-Wall") == all, "-Wall %x", roles_of("-Wall"));
    CHECK(roles_of("-pthread") == all, "-pthread %x", roles_of("-pthread"));
    CHECK(roles_of("-Wl,-z,now") == VCC_TO_LINK, "-Wl %x", roles_of("-Wl,-z,now"));
    CHECK(roles_of("-lm") == VCC_TO_LINK, "-lm %x", roles_of("-lm"));
    CHECK(roles_of("-DX") == VCC_TO_FE, "-D at link without other sources %x", roles_of("-DX"));
    CHECK(roles_of("-std=c99") == VCC_TO_FE, "-std %x", roles_of("-std=c99"));
    CHECK(roles_of("-Wa,--noexecstack") == (VCC_TO_BE | VCC_TO_LINK), "-Wa %x", roles_of("-Wa,--noexecstack"));
    CHECK(roles_of("-Xclang") == VCC_TO_FE && roles_of("-foo") == VCC_TO_FE, "-Xclang pair");
    CHECK(roles_of("-MD") == VCC_TO_FE, "-MD %x", roles_of("-MD"));
    CHECK(roles_of("--unknown-flag") == (VCC_TO_FE | VCC_TO_LINK), "unknown %x", roles_of("--unknown-flag"));
    CHECK(roles_of("a.c") == VCC_IS_INPUT && roles_of("b.o") == VCC_IS_INPUT, "inputs");
    CHECK(roles_of("-o") == VCC_IS_OUTPUT && roles_of("prog") == VCC_IS_OUTPUT, "-o pair");
    CHECK(args.opt_level == '2' && args.has_debug_flag, "level %c debug %d", args.opt_level,
          args.has_debug_flag);

    /* Under -c the front end sees linker flags, as plain clang does (and warns alike). */
    classify("-c -lm a.c");
    CHECK(roles_of("-lm") == (VCC_TO_LINK | VCC_TO_FE), "-lm under -c %x", roles_of("-lm"));
    /* The link compiles an assembler source itself: it needs the preprocessor flags. */
    classify("-DX a.c b.S -o prog");
    CHECK(roles_of("-DX") == (VCC_TO_FE | VCC_TO_LINK), "-D with b.S %x", roles_of("-DX"));
    CHECK(roles_of("-c") == 0xdead, "no -c here");
    classify("-c a.c");
    CHECK(roles_of("-c") == VCC_IS_ACTION, "-c %x", roles_of("-c"));
}

static void test_levels_and_flags(void)
{
    static const struct { const char *line; char level; } levels[] = {
        {"-c a.c", '0'}, {"-O -c a.c", '1'}, {"-O0 -c a.c", '0'}, {"-O1 -c a.c", '1'},
        {"-O3 -c a.c", '3'}, {"-O9 -c a.c", '3'}, {"-Os -c a.c", 's'}, {"-Oz -c a.c", 'z'},
        {"-Og -c a.c", '1'}, {"-Ofast -c a.c", '3'}, {"-O3 -O1 -c a.c", '1'},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        classify(levels[i].line);
        CHECK(args.opt_level == levels[i].level, "'%s': level %c, want %c", levels[i].line,
              args.opt_level, levels[i].level);
    }
    classify("-gz -gcolumn-info -c a.c");
    CHECK(!args.has_debug_flag, "-gz and -gcolumn-info choose no debug level");
    classify("-g0 -c a.c");
    CHECK(args.has_debug_flag, "-g0 is a choice");
    classify("-gdwarf-4 -c a.c");
    CHECK(args.has_debug_flag, "-gdwarf-4 enables debug info");
    classify("-fno-vectorize -fslp-vectorize -funroll-loops -c a.c");
    CHECK(args.loop_vectorize == 0 && args.slp_vectorize == 1 && args.unroll_loops == 1,
          "vectorize %d slp %d unroll %d", args.loop_vectorize, args.slp_vectorize, args.unroll_loops);
    classify("-c a.c");
    CHECK(args.loop_vectorize == -1 && args.slp_vectorize == -1 && args.unroll_loops == -1, "unset");
    classify("-shared -nostdlib -r -static a.c -o x");
    CHECK(args.shared && args.nostdlib && args.relocatable && args.static_link, "link kinds");
}

static void test_names(void)
{
    char *s;
    CHECK(!strcmp(s = vcc_stem_with("dir/a.b.c", ".o"), "a.b.o"), "%s", s); free(s);
    CHECK(!strcmp(s = vcc_stem_with("noext", ".o"), "noext.o"), "%s", s); free(s);
    CHECK(!strcmp(s = vcc_replace_extension("out.dir/x", ".d"), "out.dir/x.d"), "%s", s); free(s);
    CHECK(!strcmp(s = vcc_replace_extension("sub/x.o", ".d"), "sub/x.d"), "%s", s); free(s);

    /* The dependency names plain clang 14 uses (checked with clang -###). */
    static const struct { const char *line, *file, *target; } deps[] = {
        {"-MD -c sub/a.c", "a.d", "a.o"},
        {"-MD -c a.c -o sub/x.o", "sub/x.d", "sub/x.o"},
        {"-MMD -S a.c", "a.d", "a.o"},
        {"-MMD -S a.c -o x.s", "x.d", "x.s"},
        {"-MD a.c b.c -o prog", "prog.d", "prog"},
        {"-MD a.c", "a.d", "a.o"},
    };
    for (size_t i = 0; i < sizeof deps / sizeof deps[0]; i++) {
        classify(deps[i].line);
        char *f = vcc_dep_file(&args, &args.inputs[0]), *t = vcc_dep_target(&args, &args.inputs[0]);
        CHECK(f && !strcmp(f, deps[i].file), "'%s': file %s, want %s", deps[i].line, f, deps[i].file);
        CHECK(t && !strcmp(t, deps[i].target), "'%s': target %s, want %s", deps[i].line, t,
              deps[i].target);
        free(f);
        free(t);
    }
    classify("-MD -MF y.d -MQ z -c a.c");
    CHECK(!vcc_dep_file(&args, &args.inputs[0]) && !vcc_dep_target(&args, &args.inputs[0]),
          "named by the user: nothing to add");
    classify("-Wp,-MD,x.d -c a.c -o y.o");
    CHECK(!vcc_dep_file(&args, &args.inputs[0]), "-Wp,-MD names the file");
    CHECK((s = vcc_dep_target(&args, &args.inputs[0])) && !strcmp(s, "y.o"), "-Wp,-MD target %s", s);
    free(s);
    classify("-c a.c");
    CHECK(!vcc_dep_file(&args, &args.inputs[0]), "no -MD, no dependency file");
    classify("-c dir/a.c");
    CHECK(!strcmp(s = vcc_default_output(&args, &args.inputs[0]), "a.o"), "%s", s); free(s);
    classify("-S dir/a.i");
    CHECK(!strcmp(s = vcc_default_output(&args, &args.inputs[0]), "a.s"), "%s", s); free(s);

    CHECK(vcc_is_linker_input("x.o") && vcc_is_linker_input("lib/libz.a") &&
          vcc_is_linker_input("libm.so.6") && vcc_is_linker_input("noext"), "linker inputs");
    CHECK(!vcc_is_linker_input("x.s") && !vcc_is_linker_input("x.c") && !vcc_is_linker_input("so.d/x.S"),
          "not linker inputs");
}

static void test_response_files(void)
{
    char dir[] = "/tmp/vigil-test-args-XXXXXX";
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); return; }
    char outer[256], inner[256];
    snprintf(outer, sizeof outer, "%s/outer.rsp", dir);
    snprintf(inner, sizeof inner, "%s/inner.rsp", dir);
    FILE *f = fopen(inner, "w");
    fprintf(f, "-DQ=\"a b\" 'single quoted'\n");
    fclose(f);
    f = fopen(outer, "w");
    fprintf(f, "-c\n  a\\ b.c\t@%s -o out.o\n", inner);
    fclose(f);
    char at[300], *argv[] = {"-O2", at, "@/nonexistent/file", NULL};
    snprintf(at, sizeof at, "@%s", outer);
    int argc;
    char **v = vcc_expand_response_files(3, argv, &argc);
    static const char *const want[] = {"-O2", "-c", "a b.c", "-DQ=a b", "single quoted", "-o",
                                       "out.o", "@/nonexistent/file"};
    CHECK(argc == 8, "argc %d", argc);
    for (int i = 0; i < argc && i < 8; i++)
        CHECK(!strcmp(v[i], want[i]), "arg %d: '%s', want '%s'", i, v[i], want[i]);
    CHECK(v[argc] == NULL, "NULL-terminated");
    unlink(inner);
    unlink(outer);
    rmdir(dir);
}

int main(void)
{
    test_actions();
    test_inputs();
    test_roles();
    test_levels_and_flags();
    test_names();
    test_response_files();
    vcc_args_free(&args);
    return CHECK_DONE("test_args");
}
