/* fields (a seeded-fault program of tools/preds/tests: its main loop is a switch, and the
 * bug is in one case): reads comma-separated records on stdin and prints, per record, its number of fields
 * and the length of its longest field. Quoted fields may hold commas; a backslash escapes the
 * next character. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int c, fields = 1, len = 0, longest = 0, in_quote = 0, records = 0, escapes = 0;
    while ((c = getchar()) != EOF) {
        switch (c) {
        case '"':
            in_quote = !in_quote;
            break;
        case ',':
            if (in_quote) {
                len++;
                break;
            }
            fields++;
            if (len > longest)
                longest = len;
            len = 0;
            break;
        case '\\':
            if ((c = getchar()) == EOF)
                break;
            escapes++;
            len++;
            break;
        case '\t':
            if (in_quote) {   /* SEEDED-BUG: a tab is valid inside quotes */
                fprintf(stderr, "fields: tab inside a quoted field in record %d\n", records + 1);
                exit(3);
            }
            len++;
            break;
        case '\n':
            if (len > longest)
                longest = len;
            printf("%d %d\n", fields, longest);
            records++;
            fields = 1, len = 0, longest = 0, in_quote = 0;
            break;
        default:
            len++;
            break;
        }
    }
    printf("%d records, %d escapes\n", records, escapes);
    return 0;
}
