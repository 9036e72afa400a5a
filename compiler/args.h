/* Classifying a cc command line: what the user asked for (compile, assemble, link, or something
 * vigil-cc hands to clang untouched), which inputs are C to instrument, and which of the
 * user's arguments go to which of the commands vigil-cc runs. Free of LLVM (unit-tested). */
#ifndef VIGIL_CC_ARGS_H
#define VIGIL_CC_ARGS_H
#include <stddef.h>

enum vcc_action {
    VCC_PASS_THROUGH,   /* run clang with the original arguments, nothing else */
    VCC_COMPILE,        /* -c: one object per input */
    VCC_ASSEMBLY,       /* -S: one assembly file per input */
    VCC_LINK,           /* compile the sources to temporary objects, then link */
};

enum vcc_lang {
    VCC_LANG_C,              /* instrumented */
    VCC_LANG_C_PREPROCESSED, /* .i / -x cpp-output: instrumented */
    VCC_LANG_OTHER,          /* everything else: handed to clang as it is */
};

/* Where an argument goes (bits of vcc_args.roles[i]). A separate option value carries the same
 * bits as its option. */
enum {
    VCC_TO_FE = 1,       /* front end: clang -emit-llvm on one C source */
    VCC_TO_BE = 2,       /* back end: clang -c on the optimized bitcode */
    VCC_TO_LINK = 4,     /* the final link */
    VCC_IS_INPUT = 8,    /* an input file (see inputs[]) */
    VCC_IS_OUTPUT = 16,  /* -o FILE: every command gets its own -o */
    VCC_IS_LANG = 32,    /* -x LANG: positional, kept in place in FE and link commands */
    VCC_IS_ACTION = 64,  /* -c, -S: every command states its own */
};

struct vcc_input {
    const char *path;
    int argi;               /* index in vcc_args.argv */
    enum vcc_lang lang;
    const char *xlang;      /* the -x value in force for this input, NULL if none */
};

struct vcc_args {
    int argc;
    char **argv;            /* after @file expansion, without argv[0] */
    unsigned *roles;        /* argc entries */
    enum vcc_action action;
    const char *pass_reason; /* why VCC_PASS_THROUGH (a short phrase) */

    struct vcc_input *inputs;
    int ninputs, nsources;  /* nsources: inputs with lang C or C_PREPROCESSED */
    const char *output;     /* -o value, NULL if none */

    char opt_level;         /* '0', '1', '2', '3', 's', 'z' (last -O wins; -Og = 1, -Ofast = 3) */
    int has_debug_flag;     /* the user chose a -g level (including -g0) */
    int loop_vectorize, slp_vectorize, unroll_loops; /* -f[no-]...: 1/0, -1 = not given */
    int omit_frame_pointer; /* -f[no-]omit-frame-pointer: 1/0 (last wins), -1 = not given */
    int shared, nostdlib, relocatable, static_link;
    const char *static_flag; /* the option that asked for a static link (-static, -static-pie, --static) */
    int print_version;      /* --version: clang prints its version and stops */
    int dep_file;           /* -MD or -MMD given */
    int dep_file_named;     /* -MF given */
    int dep_target_named;   /* -MT or -MQ given */
    int verbose;            /* -v */
};

/* Expand @file arguments (gcc/clang rules: whitespace separates, quotes and backslash escape,
 * nested files allowed; an unreadable @file stays as it is). Returns a malloc'd,
 * NULL-terminated vector. */
char **vcc_expand_response_files(int argc, char **argv, int *out_argc);

/* Classify argv (without argv[0]). The vectors are kept by reference. Returns 0, or -1 with a
 * one-line reason in err (only for malformed command lines vigil-cc itself must understand,
 * e.g. "-o" without a value: the caller then hands the command to clang for its own message). */
int vcc_classify(int argc, char **argv, struct vcc_args *a, char *err, size_t errlen);
void vcc_args_free(struct vcc_args *a);

/* Output names, as clang derives them (all malloc'd). */
char *vcc_stem_with(const char *path, const char *suffix);  /* dir/a.c, ".o" -> "a.o" */
char *vcc_replace_extension(const char *path, const char *ext); /* out/x.o, ".d" -> out/x.d */
/* Default output of one input for -c / -S (used when there is no -o). */
char *vcc_default_output(const struct vcc_args *a, const struct vcc_input *in);
/* What vigil-cc must add to the front end so that -MD/-MMD write the dependency file and make
 * target plain clang would (derived from -o, else from the input's name); NULL when the user
 * named them (-MF, -MT/-MQ, -Wp,-MD,FILE) or asked for no dependency file. */
char *vcc_dep_file(const struct vcc_args *a, const struct vcc_input *in);
char *vcc_dep_target(const struct vcc_args *a, const struct vcc_input *in);

/* Whether arg is a dependency-output option (-MD, -MMD, -MF FILE, -MT T, -Wp,-MD,FILE, ...):
 * 0 if not, 1 if it is (its value joined, or none), 2 if it takes the next argument as its value. */
int vcc_dep_option(const char *arg);

/* Whether a link of this command line gets the vigil runtime (an executable: not -shared,
 * -nostdlib/-nodefaultlibs or -r). */
int vcc_links_runtime(const struct vcc_args *a);

/* True for inputs the linker takes as they are (objects, archives, shared libraries). */
int vcc_is_linker_input(const char *path);

#endif
