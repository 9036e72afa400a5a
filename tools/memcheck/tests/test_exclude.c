// unit-extra: tools/memcheck/runtime/exclude.c
/* What the user excludes from the memory checker (tools/memcheck/runtime/exclude.c): the
 * range and kind options, good and bad, and the reader of /proc/self/maps's shared mappings. */
#include "../../../tests/unit/check.h"
#include "../runtime/exclude.h"

#include <string.h>
#include <sys/mman.h>
#include <stdio.h>

int main(void)
{
    struct mc_range r[MC_RANGES_MAX];
    size_t n;
    char err[200];
    CHECK(mc_ranges_parse("", r, &n, err, sizeof err) == 0 && n == 0, "empty");
    CHECK(mc_ranges_parse("0x50000-0x60000,4096-8192", r, &n, err, sizeof err) == 0 && n == 2, "two: %s", err);
    CHECK(r[0].lo == 0x50000 && r[0].hi == 0x60000 && r[1].lo == 4096 && r[1].hi == 8192, "values");
    CHECK(mc_in_ranges(r, n, 0x5fffc, 4) && !mc_in_ranges(r, n, 0x60000, 8) && mc_in_ranges(r, n, 0x4fffc, 8) &&
              !mc_in_ranges(r, n, 0x4fff8, 8) && mc_in_ranges(r, n, 8191, 1) && !mc_in_ranges(r, n, 4095, 1),
          "bounds: LO in, HI out, an access that straddles LO is in");
    const char *bad[] = {"0x60000-0x50000", "0x5-0x5", "zz", "0x50000", "0x50000-", "-0x5", "0x1-0x2,", ",0x1-0x2",
                         "0x1-0x2x", "0x-0x5", "0x10000000000000000-0x2", "1-2,3-4,5-6,7-8,9-10,11-12,13-14,15-16,"
                         "17-18,19-20,21-22,23-24,25-26,27-28,29-30,31-32,33-34"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK(mc_ranges_parse(bad[i], r, &n, err, sizeof err) == -1 && err[0], "%s accepted", bad[i]);
    }
    CHECK(mc_ranges_parse("0x60000-0x50000", r, &n, err, sizeof err) == -1 && strstr(err, "LO below HI"), "%s", err);
    CHECK(mc_ranges_parse("zz", r, &n, err, sizeof err) == -1 && strstr(err, "range 1 \"zz\": expected LO-HI"), "%s", err);

    unsigned k;
    CHECK(mc_kinds_parse("", &k, err, sizeof err) == 0 && k == 0, "no kinds");
    CHECK(mc_kinds_parse("stack,heap,globals,shared", &k, err, sizeof err) == 0 &&
              k == (MC_MEM_STACK | MC_MEM_HEAP | MC_MEM_GLOBALS | MC_MEM_SHARED), "all: %s", err);
    CHECK(mc_kinds_parse("shared", &k, err, sizeof err) == 0 && k == MC_MEM_SHARED, "shared");
    const char *badk[] = {"stacks", "heap,", ",heap", "heap,,stack", "HEAP", "glob"};
    for (size_t i = 0; i < sizeof badk / sizeof badk[0]; i++)
        CHECK(mc_kinds_parse(badk[i], &k, err, sizeof err) == -1, "%s accepted", badk[i]);
    CHECK(mc_kinds_parse("stacks", &k, err, sizeof err) == -1 && strstr(err, "expected stack, heap, globals or shared"),
          "%s", err);

    /* the maps reader, on text fed in pieces, and on this process's own maps */
    const char *maps = "55d0c0000000-55d0c0021000 r--p 00000000 08:01 123 /bin/x\n"
                       "7f0000000000-7f0000001000 rw-s 00000000 00:01 4 /dev/zero (deleted)\n"
                       "7f0000002000-7f0000003000 rw-p 00000000 00:00 0\n"
                       "garbage line\n"
                       "7f0000004000-7f0000008000 r--s 00000000 00:05 9 /SYSV00000000";
    struct mc_range s[4];
    struct mc_maps_reader rd;
    mc_maps_begin(&rd, s, NULL, 4);
    for (size_t i = 0, len = strlen(maps); i < len; i += 7)
        mc_maps_feed(&rd, maps + i, strnlen(maps + i, 7));
    mc_maps_end(&rd);
    CHECK(rd.n == 2 && s[0].lo == 0x7f0000000000 && s[0].hi == 0x7f0000001000 && s[1].lo == 0x7f0000004000 &&
              s[1].hi == 0x7f0000008000, "two shared mappings: %zu", rd.n);
    struct mc_range all[8];
    uint8_t sh[8];
    mc_maps_begin(&rd, all, sh, 8);
    mc_maps_feed(&rd, maps, strlen(maps));
    mc_maps_end(&rd);
    CHECK(rd.n == 4 && !sh[0] && sh[1] && !sh[2] && sh[3] && all[2].lo == 0x7f0000002000, "every mapping: %zu", rd.n);
    void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct mc_range own[64];
    mc_maps_begin(&rd, own, NULL, 64);
    FILE *f = fopen("/proc/self/maps", "r");
    char buf[333];
    size_t got;
    while (f && (got = fread(buf, 1, sizeof buf, f)) > 0)
        mc_maps_feed(&rd, buf, got);
    mc_maps_end(&rd);
    if (f)
        fclose(f);
    CHECK(m != MAP_FAILED && mc_in_ranges(own, rd.n, (uintptr_t)m + 100, 4) && !mc_in_ranges(own, rd.n, (uintptr_t)&k, 4),
          "this process's shared mapping found, its stack not");
    return CHECK_DONE("memcheck exclude");
}
