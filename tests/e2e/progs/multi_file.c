// A program of two translation units compiled separately with -c and then linked; both carry
// site tables, which must not clash. The -MD -MF dependency output of this file is also
// compared with clang's.
// e2e-sources: multi_file_helper.c
#include <stdio.h>
#include "multi_file.h"

int main(void) {
    struct stats s = { 0, 0, 0 };
    for (int i = 1; i <= 1000; i++) stats_add(&s, i % 37 - 10);
    printf("count=%ld sum=%ld max=%ld label=%s\n", s.count, s.sum, s.max, stats_label(&s));
    return helper_exit_code();
}
