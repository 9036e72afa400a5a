/* vigil-cc's configuration file (VIGIL_CC_CONFIG, docs/config.md), in the syntax of clang's
 * sanitizer special-case lists:
 *
 *   # a comment (a line whose first non-blank character is '#')
 *   [skip]                 a section header: the entries below it belong to it
 *   fun:lua_*              a function name glob (fnmatch, '*' also matches '/')
 *   src:lgc.c              a source file glob, matched against the path and its base name
 *
 * A section may appear more than once (its entries add up). Which section names mean
 * something is for vigil-cc to say (vigil_ccconfig_section_line lets it point at a bad one);
 * the parser only checks the syntax. Pure: no LLVM, no environment. */
#ifndef VIGIL_CCCONFIG_H
#define VIGIL_CCCONFIG_H
#include <stddef.h>
#include <stdio.h>

enum vigil_ccconfig_kind { VIGIL_CCCONFIG_SRC, VIGIL_CCCONFIG_FUN };

struct vigil_ccconfig_entry {
    enum vigil_ccconfig_kind kind;
    const char *glob;        /* into the config's own storage */
    size_t section;          /* index into sections */
    unsigned line;
};

struct vigil_ccconfig_section {
    const char *name;        /* without the brackets */
    unsigned line;           /* of its first header */
};

struct vigil_ccconfig {
    size_t nsections;
    struct vigil_ccconfig_section *sections;   /* distinct names, in order of first header */
    size_t nentries;
    struct vigil_ccconfig_entry *entries;      /* in file order */
    char *storage;                             /* the strings */
};

/* Parse from memory (len bytes; NUL bytes are rejected); name is used in messages. Returns 0,
 * or -1 with "NAME:LINE: expected ..." in err (nothing to free then). */
int vigil_ccconfig_parse(const char *text, size_t len, const char *name, struct vigil_ccconfig *c,
                         char *err, size_t errlen);
/* Read and parse a file. *text_out (when not NULL) gets the file's bytes (malloc'd, *len_out
 * bytes), for hashing. Returns 0, or -1 with "PATH:LINE: expected ..." or "PATH: reason". */
int vigil_ccconfig_load(const char *path, struct vigil_ccconfig *c, char **text_out, size_t *len_out,
                        char *err, size_t errlen);
void vigil_ccconfig_free(struct vigil_ccconfig *c);

/* Whether section has an entry matching: fun: globs against function, src: globs against file
 * and its base name (either may be NULL or ""). 0 when the section is absent. */
int vigil_ccconfig_match(const struct vigil_ccconfig *c, const char *section, const char *function,
                         const char *file);
/* Whether the config has this section. */
int vigil_ccconfig_has(const struct vigil_ccconfig *c, const char *section);

/* Write the config back in its syntax (sections in order, each with its entries): parsing the
 * output gives the same sections and entries. 0, or -1 on an I/O error. */
int vigil_ccconfig_write(FILE *f, const struct vigil_ccconfig *c);

#endif
