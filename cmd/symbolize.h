/* Address -> function, file:line:column, from a binary's symbol table and DWARF (libdw).
 * Addresses are link-time addresses of the file (a runtime PC minus the module's load bias),
 * so the same address always means the same instruction, whatever the process layout was. */
#ifndef VIGIL_CMD_SYMBOLIZE_H
#define VIGIL_CMD_SYMBOLIZE_H
#include <stddef.h>
#include <stdint.h>

struct vigil_source_location {
    char function[256];      /* innermost function, inlined ones included; "" when unknown */
    char container[256];     /* the function compiled as such that holds the address (the
                                outermost subprogram: where inlined code ended up); "" when
                                unknown */
    char file[1024];         /* "" when there is no line information */
    int line, column;        /* 0 when unknown */
    int outlined;            /* in vigil-cc's outlined instrumented copy of `container`, which
                                the checking copy called: that caller's frame is not the user's */
    int thunk;               /* a transfer thunk (<name>.vigil.xfer): vigil's frame, not the user's */
};

struct vigil_symbolizer;

/* Opens path (executable or shared object); NULL with "PATH: reason" in err. */
struct vigil_symbolizer *vigil_symbolizer_open(const char *path, char *err, size_t errlen);
/* 0 when at least the function or the line is known, -1 when nothing is. */
int vigil_symbolize(struct vigil_symbolizer *s, uint64_t address, struct vigil_source_location *out);
/* The frames at address with the inlined calls expanded, innermost first, at most max: out[0]
 * is what vigil_symbolize gives (the innermost function, at the address's line); each next one
 * is the function the previous one was inlined into, at the line of that inlined call; the
 * last one is the function compiled as such (`container`). Returns their number, 0 when
 * nothing is known. */
int vigil_symbolize_inlined(struct vigil_symbolizer *s, uint64_t address, struct vigil_source_location *out, int max);
#define VIGIL_MAX_INLINED 16
/* The same for an offset into the file (as /proc/PID/maps gives it, e.g. a crash PC): mapped
 * to its link-time address through the PT_LOAD segments first. */
int vigil_symbolize_file_offset(struct vigil_symbolizer *s, uint64_t offset,
                                struct vigil_source_location *out);
void vigil_symbolizer_close(struct vigil_symbolizer *s);

#endif
