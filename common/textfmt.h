/* Line-oriented text formats: the scaffolding shared by run reports (runreport.h), feedback
 * reports (tools/preds/cmd/feedback.h) and plan files (plan.h). Each of them is
 *
 *   <magic> <version>            the header, first line
 *   <key> <field> <field> ...    fields separated by single spaces
 *   end                          the last line; without it the file is torn
 *
 * with every line ending in '\n' and no NUL or carriage return anywhere. This piece reads the
 * lines and the header, checks all of that, and turns every error into "NAME:LINE: message";
 * the readers only interpret keys and fields.
 *
 * Nothing here allocates except vigil_text_load_file and vigil_text_grow: the runtime links
 * this file and reads its plan file with it. */
#ifndef VIGIL_TEXTFMT_H
#define VIGIL_TEXTFMT_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* What distinguishes one format's scaffolding from another's. */
struct vigil_text_format {
    const char *magic;               /* first word of the header: "vigil-run", ... */
    uint32_t min_version, max_version;   /* header versions this reader accepts */
    const char *what;                /* the document in messages: "run report", "plan file" */
    char quote;                      /* quotes words in messages: '"' or '`', as the format
                                        always has (tools and tests match on it) */
    int torn_on_last_line;           /* "missing end" names the last line present instead of
                                        the line where end was due (run.txt always has) */
};

struct vigil_text_reader {
    const struct vigil_text_format *format;
    const char *name;        /* file name used in messages */
    unsigned line;           /* number of the line last read, 1-based; 0 before the first */
    char *err;               /* "NAME:LINE: message" of the first error */
    size_t errlen;
    const char *text;        /* the whole input, not NUL-terminated */
    size_t len, pos;         /* its length; where the next line starts */
    uint32_t version;        /* from the header, once read */
    int ended;               /* the end line was read */
};

enum vigil_text_got {
    VIGIL_TEXT_DONE = 0,     /* after the end line: the input is complete */
    VIGIL_TEXT_LINE = 1,     /* a line of keys and fields is in the buffer */
    VIGIL_TEXT_END = 2,      /* the end line ("end" is in the buffer) */
};

void vigil_text_begin(struct vigil_text_reader *r, const struct vigil_text_format *format,
                      const char *text, size_t len, const char *name, char *err, size_t errlen);

/* Write "NAME:LINE: message" into err (when there is one); returns -1. */
int vigil_text_fail(struct vigil_text_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int vigil_text_vfail(struct vigil_text_reader *r, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* Copy the next line, without its '\n', into buf (NUL-terminated; a line of size bytes or more
 * is an error). The header is checked and skipped (r->version). Returns an enum vigil_text_got,
 * or -1 with the error written: empty input, a last line without newline, NUL or CR, text
 * after the end line, a bad header, or no end line. */
int vigil_text_next_line(struct vigil_text_reader *r, char *buf, size_t size);

/* Check a header line "<magic> <version>" against r->format; sets r->version. 0 or -1. */
int vigil_text_header(struct vigil_text_reader *r, const char *line);

/* Plain decimal: digits only, no sign, no leading zero (except "0" itself), at most max.
 * 0, or -1 without a message. */
int vigil_text_decimal(const char *s, uint64_t max, uint64_t *out);
/* The same, failing with "expected WHAT (a decimal number 0..MAX), got ...". */
int vigil_text_expect_decimal(struct vigil_text_reader *r, const char *s, uint64_t max,
                              const char *what, uint64_t *out);

enum vigil_text_hex_flags {
    VIGIL_TEXT_HEX_0X = 1,           /* "0x" must come first */
    VIGIL_TEXT_HEX_LOWERCASE = 2,    /* a..f only, as the writer prints tu hashes */
};
/* Value of one hex digit (either case), or -1. */
int vigil_text_hex_digit(char c);
/* Hex number of min_digits..max_digits digits (max_digits <= 16). 0, or -1 without a message. */
int vigil_text_hex(const char *s, unsigned flags, size_t min_digits, size_t max_digits,
                   uint64_t *out);

/* Split line in place at single spaces into at most max fields, the key first. Returns the
 * number of fields, or fails ("malformed line ...") on an empty field (an empty line, two
 * spaces, a space at either end) or more than max fields. */
int vigil_text_split(struct vigil_text_reader *r, char *line, char **fields, int max);

/* Make room for element n of *items (element size bytes, *cap allocated): doubles as needed.
 * 0, or -1 when out of memory (*items unchanged). */
int vigil_text_grow(void **items, size_t *cap, size_t n, size_t size);

/* Read the whole file into *text (malloc'd, NUL-terminated, the NUL not counted in *len).
 * Returns 0; -1 when it cannot be opened (errno set); -2 when it cannot be read whole (larger
 * than max_bytes, read error, out of memory). err holds "PATH: reason" on failure. */
int vigil_text_load_file(const char *path, size_t max_bytes, char **text, size_t *len,
                         char *err, size_t errlen);

/* String fields are percent-escaped, so they never contain spaces, newlines or '%'.
 * vigil_escape writes s into out (space, '%', control bytes and bytes >= 0x7f become %XX; the
 * empty string becomes "%") and returns the length that was needed (like snprintf). No
 * allocation: the runtime writes its run report with it. */
size_t vigil_escape(const char *s, char *out, size_t outlen);
/* Undo vigil_escape in place; -1 on a malformed escape. */
int vigil_unescape(char *s);

#endif
