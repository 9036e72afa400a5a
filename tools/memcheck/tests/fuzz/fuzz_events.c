// fuzz-extra: tools/memcheck/cmd/events.c
// fuzz-libs: -lzstd
/* libFuzzer harness for the memory checker's event log reader (tools/memcheck/cmd/events.c):
 * any input, compressed (zstd magic first) or not, is read or rejected with a message that
 * names the file and a byte; an accepted log, written out again, reads back the same. */
#include "../../cmd/events.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mc_event_log l, again;
    char err[400];
    int rc = size >= 4 && data[0] == 0x28 && data[1] == 0xb5 ? mc_events_decode(data, size, "fuzz.zst", &l, err, sizeof err)
                                                             : mc_events_parse(data, size, "fuzz.zst", &l, err, sizeof err);
    if (rc != 0) {
        if (strncmp(err, "fuzz.zst: ", 10) != 0 || !strchr(err + 10, ' '))
            abort();   /* every message names the file, then what was wrong */
        return 0;
    }
    size_t n = VIGIL_MCEV_HEADER_SIZE + l.n * VIGIL_MCEV_RECORD_SIZE;
    uint8_t *out = malloc(n);
    if (!out)
        abort();
    memcpy(out, VIGIL_MCEV_MAGIC, 8);
    le(out + 8, VIGIL_MCEV_VERSION, 4);
    le(out + 12, VIGIL_MCEV_RECORD_SIZE, 4);
    le(out + 16, l.dropped, 8);
    le(out + 24, l.n, 8);
    for (size_t i = 0; i < l.n; i++) {
        uint8_t *r = out + VIGIL_MCEV_HEADER_SIZE + i * VIGIL_MCEV_RECORD_SIZE;
        const struct vigil_mcev *e = &l.ev[i];
        if (e->kind >= VIGIL_MCK_KINDS || (e->flags & ~VIGIL_MCEV_FLAGS) || !e->thread)
            abort();   /* accepted, so valid */
        le(r, e->ns, 8), le(r + 8, e->addr, 8), le(r + 16, e->block, 8), le(r + 24, e->block_size, 4);
        le(r + 28, e->site, 4), le(r + 32, e->thread, 4), le(r + 36, e->size, 2);
        r[38] = e->kind, r[39] = e->flags;
    }
    if (mc_events_parse(out, n, "again", &again, err, sizeof err) != 0 || again.n != l.n || again.dropped != l.dropped ||
        (l.n && memcmp(again.ev, l.ev, l.n * sizeof *l.ev) != 0))
        abort();
    mc_events_free(&again);
    mc_events_free(&l);
    free(out);
    return 0;
}
