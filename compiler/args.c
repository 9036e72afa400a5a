/* Classifying a cc command line (see args.h). The rules follow what clang does with the same
 * arguments; anything vigil-cc does not need to understand goes to clang unchanged. */
#include "args.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textfmt.h"

/* What an argument is, before the action is known (the action decides some destinations). */
enum category {
    CAT_INPUT,
    CAT_OUTPUT,
    CAT_LANG,
    CAT_ACTION,
    CAT_PREPROC,  /* preprocessor and language flags: front end (and link if it compiles) */
    CAT_DEP,      /* -MD & co: the front end writes the dependency file */
    CAT_CODEGEN,  /* -O, -g, -f, -m, -W, --target, ...: every command */
    CAT_ASM,      /* -Wa, -Xassembler: back end and link */
    CAT_LINKER,   /* -l, -L, -Wl, -shared, ...: link (and front end under -c/-S, as clang warns) */
    CAT_UNKNOWN,  /* options vigil-cc does not know: front end and link */
    CAT_PASS,     /* forces a pass-through of the whole command */
};

enum match { EXACT, PREFIX, SEPARATE, JOINED_OR_SEPARATE };

struct rule {
    const char *name;
    enum match match;
    enum category cat;
};

/* First match wins: longer names before their prefixes. */
static const struct rule rules[] = {
    /* Things vigil-cc leaves entirely to clang. */
    {"-E", EXACT, CAT_PASS},
    {"-M", EXACT, CAT_PASS},
    {"-MM", EXACT, CAT_PASS},
    {"-fsyntax-only", EXACT, CAT_PASS},
    {"-emit-llvm", EXACT, CAT_PASS},
    {"-###", EXACT, CAT_PASS},
    {"--version", EXACT, CAT_PASS},
    {"-dumpversion", EXACT, CAT_PASS},
    {"-dumpmachine", EXACT, CAT_PASS},
    {"-dumpspecs", EXACT, CAT_PASS},
    {"-help", EXACT, CAT_PASS},
    {"--help", EXACT, CAT_PASS},
    {"--analyze", EXACT, CAT_PASS},
    {"-print-", PREFIX, CAT_PASS},
    {"--print-", PREFIX, CAT_PASS},
    {"-save-temps", PREFIX, CAT_PASS},
    {"--save-temps", PREFIX, CAT_PASS},
    {"-flto", PREFIX, CAT_PASS},
    /* Instrumentation done by LLVM passes inside clang's own pipeline, which vigil-cc replaces:
     * compiling such code through vigil-cc would silently drop it. */
    {"-fsanitize=", PREFIX, CAT_PASS},
    {"-fsanitize-coverage=", PREFIX, CAT_PASS},
    {"--coverage", EXACT, CAT_PASS},
    {"-fprofile-arcs", EXACT, CAT_PASS},
    {"-ftest-coverage", EXACT, CAT_PASS},
    {"-fprofile-instr-generate", PREFIX, CAT_PASS},
    {"-fprofile-generate", PREFIX, CAT_PASS},
    {"-fcs-profile-generate", PREFIX, CAT_PASS},
    {"-fprofile-use", PREFIX, CAT_PASS},
    {"-fprofile-instr-use", PREFIX, CAT_PASS},
    {"-fprofile-sample-use", PREFIX, CAT_PASS},
    {"-fauto-profile", PREFIX, CAT_PASS},
    {"-finstrument-function", PREFIX, CAT_PASS},
    {"-fmemory-profile", PREFIX, CAT_PASS},
    {"-fpseudo-probe-for-profiling", EXACT, CAT_PASS},
    {"-fembed-bitcode", PREFIX, CAT_PASS},
    {"-pg", EXACT, CAT_PASS}, /* mcount calls come from a pass of clang's pipeline */

    {"-objc", PREFIX, CAT_UNKNOWN}, /* not -o bjc... */
    {"-o", JOINED_OR_SEPARATE, CAT_OUTPUT},
    {"-x", JOINED_OR_SEPARATE, CAT_LANG},
    {"-c", EXACT, CAT_ACTION},
    {"-S", EXACT, CAT_ACTION},

    {"-MD", EXACT, CAT_DEP},
    {"-MMD", EXACT, CAT_DEP},
    {"-MP", EXACT, CAT_DEP},
    {"-MG", EXACT, CAT_DEP},
    {"-MV", EXACT, CAT_DEP},
    {"-MF", JOINED_OR_SEPARATE, CAT_DEP},
    {"-MT", JOINED_OR_SEPARATE, CAT_DEP},
    {"-MQ", JOINED_OR_SEPARATE, CAT_DEP},
    {"-MJ", JOINED_OR_SEPARATE, CAT_DEP},

    {"-Wp,-MD,", PREFIX, CAT_DEP},  /* clang rewrites these into -MD/-MMD -MF FILE */
    {"-Wp,-MMD,", PREFIX, CAT_DEP},
    {"-D", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-U", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-I", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-F", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-include-pch", SEPARATE, CAT_PREPROC},
    {"-include", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-imacros", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-isystem-after", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-isystem", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-idirafter", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-iquote", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-iprefix", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-iwithprefixbefore", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-iwithprefix", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-iwithsysroot", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-isysroot", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-ivfsoverlay", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-imultilib", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-cxx-isystem", JOINED_OR_SEPARATE, CAT_PREPROC},
    {"-aux-info", SEPARATE, CAT_PREPROC},
    {"-Xclang", SEPARATE, CAT_PREPROC},
    {"-Xpreprocessor", SEPARATE, CAT_PREPROC},
    {"-Wp,", PREFIX, CAT_PREPROC},
    {"-std=", PREFIX, CAT_PREPROC},
    {"--std=", PREFIX, CAT_PREPROC},
    {"-ansi", EXACT, CAT_PREPROC},
    {"-pedantic", EXACT, CAT_PREPROC},
    {"-pedantic-errors", EXACT, CAT_PREPROC},
    {"-trigraphs", EXACT, CAT_PREPROC},
    {"-undef", EXACT, CAT_PREPROC},
    {"-nostdinc", EXACT, CAT_PREPROC},
    {"-nostdlibinc", EXACT, CAT_PREPROC},
    {"-nobuiltininc", EXACT, CAT_PREPROC},
    {"-C", EXACT, CAT_PREPROC},
    {"-CC", EXACT, CAT_PREPROC},
    {"-P", EXACT, CAT_PREPROC},
    {"-H", EXACT, CAT_PREPROC},

    {"-Wa,", PREFIX, CAT_ASM},
    {"-Xassembler", SEPARATE, CAT_ASM},

    {"-Wl,", PREFIX, CAT_LINKER},
    {"-Xlinker", SEPARATE, CAT_LINKER},
    {"-l", JOINED_OR_SEPARATE, CAT_LINKER},
    {"-L", JOINED_OR_SEPARATE, CAT_LINKER},
    {"-T", JOINED_OR_SEPARATE, CAT_LINKER},
    {"-u", JOINED_OR_SEPARATE, CAT_LINKER},
    {"-z", JOINED_OR_SEPARATE, CAT_LINKER},
    {"-e", SEPARATE, CAT_LINKER},
    {"-shared", EXACT, CAT_LINKER},
    {"-static", EXACT, CAT_LINKER},
    {"--static", EXACT, CAT_LINKER}, /* clang's alias of -static */
    {"-static-pie", EXACT, CAT_LINKER},
    {"-rdynamic", EXACT, CAT_LINKER},
    {"-nostdlib", EXACT, CAT_LINKER},
    {"-nostartfiles", EXACT, CAT_LINKER},
    {"-nodefaultlibs", EXACT, CAT_LINKER},
    {"-nolibc", EXACT, CAT_LINKER},
    {"-pie", EXACT, CAT_LINKER},
    {"-no-pie", EXACT, CAT_LINKER},
    {"-s", EXACT, CAT_LINKER},
    {"-r", EXACT, CAT_LINKER},
    {"-symbolic", EXACT, CAT_LINKER},
    {"-static-libgcc", EXACT, CAT_LINKER},
    {"-shared-libgcc", EXACT, CAT_LINKER},
    {"--ld-path=", PREFIX, CAT_LINKER},
    {"-rtlib=", PREFIX, CAT_LINKER},
    {"--rtlib=", PREFIX, CAT_LINKER},
    {"-unwindlib=", PREFIX, CAT_LINKER},
    {"--unwindlib=", PREFIX, CAT_LINKER},

    {"-mllvm", SEPARATE, CAT_CODEGEN},
    {"-target", SEPARATE, CAT_CODEGEN},
    {"--target=", PREFIX, CAT_CODEGEN},
    {"--sysroot=", PREFIX, CAT_CODEGEN},
    {"--sysroot", SEPARATE, CAT_CODEGEN},
    {"--gcc-toolchain=", PREFIX, CAT_CODEGEN},
    {"-arch", SEPARATE, CAT_CODEGEN},
    {"--param", SEPARATE, CAT_CODEGEN},
    {"-B", JOINED_OR_SEPARATE, CAT_CODEGEN},
    {"-O", PREFIX, CAT_CODEGEN},
    {"-g", PREFIX, CAT_CODEGEN},
    {"-f", PREFIX, CAT_CODEGEN},
    {"-m", PREFIX, CAT_CODEGEN},
    {"-W", PREFIX, CAT_CODEGEN},
    {"-w", EXACT, CAT_CODEGEN},
    {"-v", EXACT, CAT_CODEGEN},
    {"-pipe", EXACT, CAT_CODEGEN},
    {"-pthread", EXACT, CAT_CODEGEN},
    {"-pthreads", EXACT, CAT_CODEGEN},
    {"-Qunused-arguments", EXACT, CAT_CODEGEN},
    {"-no-canonical-prefixes", EXACT, CAT_CODEGEN},
    {"-no-integrated-as", EXACT, CAT_CODEGEN},
    {"-integrated-as", EXACT, CAT_CODEGEN},
};

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The matching rule for arg, and whether it consumes the next argument. */
static const struct rule *find_rule(const char *arg, int *takes_next)
{
    *takes_next = 0;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const struct rule *r = &rules[i];
        int exact = strcmp(arg, r->name) == 0;
        switch (r->match) {
        case EXACT:
            if (exact) return r;
            break;
        case PREFIX:
            if (starts_with(arg, r->name)) return r;
            break;
        case SEPARATE:
            if (exact) { *takes_next = 1; return r; }
            break;
        case JOINED_OR_SEPARATE:
            if (exact) { *takes_next = 1; return r; }
            if (starts_with(arg, r->name)) return r;
            break;
        }
    }
    return NULL;
}

int vcc_dep_option(const char *arg)
{
    int takes_next;
    const struct rule *r = find_rule(arg, &takes_next);
    if (!r || r->cat != CAT_DEP) return 0;
    return takes_next ? 2 : 1;
}

/* ---- response files ---- */

struct vec {
    char **v;
    int n, cap;
};

static void vec_push(struct vec *v, char *s)
{
    if (v->n + 1 >= v->cap) {
        v->cap = v->cap ? v->cap * 2 : 16;
        v->v = realloc(v->v, (size_t)v->cap * sizeof *v->v);
        if (!v->v) { perror("vigil-cc"); exit(1); }
    }
    v->v[v->n++] = s;
    v->v[v->n] = NULL;
}

/* A response file's text, NUL-terminated; NULL when it cannot be read. */
static char *read_file(const char *path)
{
    char *text, err[64];
    size_t len;
    return vigil_text_load_file(path, SIZE_MAX, &text, &len, err, sizeof err) == 0 ? text : NULL;
}

static void expand_into(struct vec *out, char *arg, int depth);

/* Split a response file's text the way gcc does and push each word (expanding nested @files). */
static void split_response(struct vec *out, const char *text, int depth)
{
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') p++;
        if (!*p) return;
        char *word = malloc(strlen(p) + 1), *w = word;
        char quote = 0;
        for (; *p; p++) {
            if (quote) {
                if (*p == quote) quote = 0;
                else if (*p == '\\' && p[1]) *w++ = *++p;
                else *w++ = *p;
            } else if (*p == '\'' || *p == '"') {
                quote = *p;
            } else if (*p == '\\' && p[1]) {
                *w++ = *++p;
            } else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
                break;
            } else {
                *w++ = *p;
            }
        }
        *w = 0;
        expand_into(out, word, depth + 1);
    }
}

static void expand_into(struct vec *out, char *arg, int depth)
{
    char *text;
    if (arg[0] != '@' || depth > 20 || !(text = read_file(arg + 1))) {
        vec_push(out, arg);
        return;
    }
    split_response(out, text, depth);
    free(text);
}

char **vcc_expand_response_files(int argc, char **argv, int *out_argc)
{
    struct vec out = {0};
    vec_push(&out, NULL);
    out.n = 0;
    for (int i = 0; i < argc; i++) expand_into(&out, argv[i], 0);
    *out_argc = out.n;
    return out.v;
}

/* ---- classification ---- */

static enum vcc_lang lang_of(const char *path, const char *xlang)
{
    if (xlang && strcmp(xlang, "none") != 0) {
        if (strcmp(xlang, "c") == 0) return VCC_LANG_C;
        if (strcmp(xlang, "cpp-output") == 0 || strcmp(xlang, "c-cpp-output") == 0)
            return VCC_LANG_C_PREPROCESSED;
        return VCC_LANG_OTHER;
    }
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return VCC_LANG_OTHER;
    if (strcmp(dot, ".c") == 0) return VCC_LANG_C;
    if (strcmp(dot, ".i") == 0) return VCC_LANG_C_PREPROCESSED;
    return VCC_LANG_OTHER;
}

int vcc_links_runtime(const struct vcc_args *a)
{
    return !a->shared && !a->nostdlib && !a->relocatable;
}

int vcc_is_linker_input(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot) return 1; /* clang hands extension-less files to the linker too */
    if (!strcmp(dot, ".o") || !strcmp(dot, ".a") || !strcmp(dot, ".so") || !strcmp(dot, ".lo") ||
        !strcmp(dot, ".obj") || !strcmp(dot, ".lib"))
        return 1;
    return strstr(base, ".so.") != NULL; /* libfoo.so.1 */
}

static char opt_level_of(const char *arg)
{
    const char *v = arg + 2;
    if (!*v) return '1';
    if (!strcmp(v, "s") || !strcmp(v, "z")) return *v;
    if (!strcmp(v, "g")) return '1';
    if (!strcmp(v, "fast")) return '3';
    if (v[0] >= '0' && v[0] <= '9' && !v[1]) return v[0] > '3' ? '3' : v[0];
    return 0; /* clang will complain */
}

static int is_debug_level_flag(const char *arg)
{
    static const char *const prefixes[] = {"-ggdb", "-gdwarf", "-gline-", "-gstabs", "-gfull",
                                           "-gused", "-gcodeview", "-gmlt", "-glldb", "-gsce"};
    if (!strcmp(arg, "-g")) return 1;
    if (arg[2] >= '0' && arg[2] <= '9') return 1;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (starts_with(arg, prefixes[i])) return 1;
    return 0;
}

/* -f flags that change clang's optimization pipeline settings. */
static void note_f_flag(struct vcc_args *a, const char *arg)
{
    int on = !starts_with(arg, "-fno-");
    const char *name = arg + (on ? 2 : 5);
    if (!strcmp(name, "vectorize") || !strcmp(name, "tree-vectorize") ||
        !strcmp(name, "tree-loop-vectorize"))
        a->loop_vectorize = on;
    else if (!strcmp(name, "slp-vectorize") || !strcmp(name, "tree-slp-vectorize"))
        a->slp_vectorize = on;
    else if (!strcmp(name, "unroll-loops"))
        a->unroll_loops = on;
    else if (!strcmp(name, "omit-frame-pointer"))
        a->omit_frame_pointer = on;
}

static void pass_through(struct vcc_args *a, const char *reason)
{
    if (a->action != VCC_PASS_THROUGH) {
        a->action = VCC_PASS_THROUGH;
        a->pass_reason = reason;
    }
}

int vcc_classify(int argc, char **argv, struct vcc_args *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->opt_level = '0';
    a->loop_vectorize = a->slp_vectorize = a->unroll_loops = a->omit_frame_pointer = -1;
    a->roles = calloc((size_t)argc + 1, sizeof *a->roles);
    a->inputs = calloc((size_t)argc + 1, sizeof *a->inputs);
    enum category *cat = calloc((size_t)argc + 1, sizeof *cat);
    if (!a->roles || !a->inputs || !cat) { perror("vigil-cc"); exit(1); }

    int compile = 0, assemble = 0, forced = 0;
    const char *forced_reason = NULL, *xlang = NULL;
    if (argc > 0 && starts_with(argv[0], "-cc1")) { forced = 1; forced_reason = "clang -cc1 call"; }

    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == 0) {
            cat[i] = CAT_INPUT;
            struct vcc_input *in = &a->inputs[a->ninputs++];
            in->path = arg;
            in->argi = i;
            in->xlang = xlang;
            in->lang = lang_of(arg, xlang);
            if (!strcmp(arg, "-")) { forced = 1; forced_reason = "input from stdin"; in->lang = VCC_LANG_OTHER; }
            if (in->lang != VCC_LANG_OTHER) a->nsources++;
            continue;
        }
        int takes_next;
        const struct rule *r = find_rule(arg, &takes_next);
        enum category c = r ? r->cat : CAT_UNKNOWN;
        const char *value = NULL;
        if (takes_next) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "argument to '%s' is missing", arg);
                free(cat);
                return -1;
            }
            value = argv[i + 1];
        } else if (r && r->match == JOINED_OR_SEPARATE) {
            value = arg + strlen(r->name);
        }
        cat[i] = c;
        if (takes_next) cat[i + 1] = c;

        switch (c) {
        case CAT_PASS:
            forced = 1;
            if (!forced_reason) forced_reason = arg;
            if (!strcmp(arg, "--version")) a->print_version = 1;
            break;
        case CAT_OUTPUT:
            a->output = value;
            break;
        case CAT_LANG:
            xlang = value;
            break;
        case CAT_ACTION:
            if (!strcmp(arg, "-c")) compile = 1; else assemble = 1;
            break;
        case CAT_DEP:
            if (!strcmp(arg, "-MD") || !strcmp(arg, "-MMD")) a->dep_file = 1;
            else if (starts_with(arg, "-Wp,")) a->dep_file = a->dep_file_named = 1;
            else if (starts_with(arg, "-MF")) a->dep_file_named = 1;
            else if (starts_with(arg, "-MT") || starts_with(arg, "-MQ")) a->dep_target_named = 1;
            break;
        case CAT_CODEGEN:
            if (arg[1] == 'O' && opt_level_of(arg)) a->opt_level = opt_level_of(arg);
            else if (arg[1] == 'g' && is_debug_level_flag(arg)) a->has_debug_flag = 1;
            else if (arg[1] == 'f') note_f_flag(a, arg);
            else if (!strcmp(arg, "-v")) a->verbose = 1;
            break;
        case CAT_LINKER:
            if (!strcmp(arg, "-shared")) a->shared = 1;
            else if (!strcmp(arg, "-nostdlib") || !strcmp(arg, "-nodefaultlibs")) a->nostdlib = 1;
            else if (!strcmp(arg, "-r")) a->relocatable = 1;
            else if (!strcmp(arg, "-static") || !strcmp(arg, "--static") || !strcmp(arg, "-static-pie")) {
                a->static_link = 1;
                a->static_flag = arg;
            }
            break;
        default:
            break;
        }
        if (takes_next) i++;
    }

    /* The action, as clang decides it: -S beats -c; neither means link. */
    if (assemble) a->action = VCC_ASSEMBLY;
    else if (compile) a->action = VCC_COMPILE;
    else a->action = VCC_LINK;
    if (forced) pass_through(a, forced_reason);
    if (a->ninputs == 0) pass_through(a, "no input files");
    if (a->action != VCC_LINK && a->nsources == 0) pass_through(a, "no C source to instrument");
    if (a->action != VCC_LINK && a->output && a->ninputs > 1)
        pass_through(a, "-o with several outputs"); /* clang reports the error */
    if (a->action == VCC_LINK && a->nsources == 0 && !vcc_links_runtime(a))
        pass_through(a, "link without sources or runtime");

    /* Preprocessor flags matter at link time only if clang still compiles something there. */
    int link_compiles = 0;
    for (int k = 0; k < a->ninputs; k++)
        if (a->inputs[k].lang == VCC_LANG_OTHER && !vcc_is_linker_input(a->inputs[k].path))
            link_compiles = 1;

    for (int i = 0; i < argc; i++) {
        unsigned r = 0;
        switch (cat[i]) {
        case CAT_INPUT: r = VCC_IS_INPUT; break;
        case CAT_OUTPUT: r = VCC_IS_OUTPUT; break;
        case CAT_LANG: r = VCC_IS_LANG; break;
        case CAT_ACTION: r = VCC_IS_ACTION; break;
        case CAT_PREPROC: r = VCC_TO_FE | (link_compiles ? VCC_TO_LINK : 0); break;
        case CAT_DEP: r = VCC_TO_FE; break;
        case CAT_CODEGEN: r = VCC_TO_FE | VCC_TO_BE | VCC_TO_LINK; break;
        case CAT_ASM: r = VCC_TO_BE | VCC_TO_LINK; break;
        case CAT_LINKER: r = VCC_TO_LINK | (a->action != VCC_LINK ? VCC_TO_FE : 0); break;
        case CAT_UNKNOWN: case CAT_PASS: r = VCC_TO_FE | VCC_TO_LINK; break;
        }
        a->roles[i] = r;
    }
    free(cat);
    return 0;
}

void vcc_args_free(struct vcc_args *a)
{
    free(a->roles);
    free(a->inputs);
    a->roles = NULL;
    a->inputs = NULL;
}

/* ---- output names ---- */

static char *concat(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    char *s = malloc(alen + blen + 1);
    if (!s) { perror("vigil-cc"); exit(1); }
    memcpy(s, a, alen);
    memcpy(s + alen, b, blen + 1);
    return s;
}

/* Length of path without its extension (the last '.' of the file name, not a leading one). */
static size_t without_extension(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || !strcmp(base, ".") || !strcmp(base, "..")) return strlen(path);
    return (size_t)(dot - path);
}

char *vcc_stem_with(const char *path, const char *suffix)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    return concat(base, without_extension(base), suffix);
}

char *vcc_replace_extension(const char *path, const char *ext)
{
    return concat(path, without_extension(path), ext);
}

char *vcc_default_output(const struct vcc_args *a, const struct vcc_input *in)
{
    return vcc_stem_with(in->path, a->action == VCC_ASSEMBLY ? ".s" : ".o");
}

char *vcc_dep_file(const struct vcc_args *a, const struct vcc_input *in)
{
    if (!a->dep_file || a->dep_file_named) return NULL;
    if (a->output) return vcc_replace_extension(a->output, ".d");
    return vcc_stem_with(in->path, ".d");
}

char *vcc_dep_target(const struct vcc_args *a, const struct vcc_input *in)
{
    if (!a->dep_file || a->dep_target_named) return NULL;
    if (a->output) return concat(a->output, strlen(a->output), "");
    return vcc_stem_with(in->path, ".o"); /* also under -S, as clang does */
}
