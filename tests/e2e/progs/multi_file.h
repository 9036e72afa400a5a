#ifndef MULTI_FILE_H
#define MULTI_FILE_H
struct stats { long count, sum, max; };
void stats_add(struct stats *s, long value);
const char *stats_label(const struct stats *s);
int helper_exit_code(void);
#endif
