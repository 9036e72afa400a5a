/* The memory checker's event log, read (vigil/mcevents.h has the format): the command part's
 * reader, used by `vigil memcheck-events` and `vigil report`, fuzzed on its own
 * (tools/memcheck/tests/fuzz/fuzz_events.c). */
#ifndef MC_EVENTS_H
#define MC_EVENTS_H
#include <stddef.h>
#include <stdint.h>

#include <vigil/mcevents.h>

#define MC_EVENTS_MAX_BYTES (1ull << 30)   /* a log decompressing to more is rejected */

struct mc_event_log {
    struct vigil_mcev *ev;
    size_t n;
    uint64_t dropped;                      /* the header's count of events the pool had no room for */
};

/* Decompressed bytes -> the log. 0, or -1 with "NAME: byte N: what was expected" in err. */
int mc_events_parse(const uint8_t *data, size_t size, const char *name, struct mc_event_log *out, char *err,
                    size_t errlen);
/* The file's bytes (zstd frames) -> the log: decompressed, then parsed. 0, or -1 with
 * "NAME: ..." in err (not zstd, damaged or truncated compressed data, a bad log). */
int mc_events_decode(const uint8_t *data, size_t size, const char *name, struct mc_event_log *out, char *err,
                     size_t errlen);
/* The same from a file. */
int mc_events_load(const char *path, struct mc_event_log *out, char *err, size_t errlen);
void mc_events_free(struct mc_event_log *l);

#endif
