// Second translation unit of multi_file.c (not a program on its own).
#include "multi_file.h"

void stats_add(struct stats *s, long value) {
    if (s->count == 0 || value > s->max) s->max = value;
    s->count++;
    s->sum += value;
}

const char *stats_label(const struct stats *s) { return s->sum > 0 ? "positive" : "non-positive"; }

int helper_exit_code(void) { return 5; }
