// unit-extra: tools/leak/runtime/maps.c
/* The exit scan's reading of /proc/self/maps lines (tools/leak/runtime/maps.c): readable
 * mappings are kept with their bounds; unreadable ones, the kernel's [vvar] and [vsyscall],
 * and malformed lines are not. Also every line of this process's own maps parses. */
#include "check.h"
#include "../runtime/maps.h"

#include <stdio.h>
#include <string.h>

static int line(const char *text, uintptr_t want_lo, uintptr_t want_hi)
{
    uintptr_t lo = 1, hi = 1;
    int keep = leak_maps_line(text, &lo, &hi);
    return keep && lo == want_lo && hi == want_hi;
}

static int rejected(const char *text)
{
    uintptr_t lo = 0, hi = 0;
    return leak_maps_line(text, &lo, &hi) == 0;
}

int main(void)
{
    CHECK(line("55d0c6a00000-55d0c6a21000 rw-p 00000000 00:00 0                          [heap]",
               0x55d0c6a00000, 0x55d0c6a21000), "the heap");
    CHECK(line("7f1c2e7e6000-7f1c2e7e8000 r--p 00000000 fe:00 332835   /usr/lib/x86_64-linux-gnu/libc.so.6",
               0x7f1c2e7e6000, 0x7f1c2e7e8000), "a read-only file mapping");
    CHECK(line("7FFF0000-7FFF1000 r-xp 00000000 00:00 0", 0x7fff0000, 0x7fff1000), "upper-case hex, no path");
    CHECK(rejected("7f1c2e7e8000-7f1c2e7e9000 ---p 00000000 00:00 0"), "a guard page");
    CHECK(rejected("7ffd1b9e2000-7ffd1b9e6000 r--p 00000000 00:00 0                          [vvar]"), "[vvar]");
    CHECK(rejected("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]"),
          "[vsyscall]");
    CHECK(rejected("2000-1000 rw-p 00000000 00:00 0"), "hi below lo");
    CHECK(rejected("1000-1000 rw-p 00000000 00:00 0"), "empty");
    CHECK(rejected(""), "empty line");
    CHECK(rejected("-1000 rw-p"), "no lo");
    CHECK(rejected("1000- rw-p"), "no hi");
    CHECK(rejected("1000-2000rw-p"), "no space after hi");
    CHECK(rejected("1000-2000 "), "no permissions");
    CHECK(rejected(" 1000-2000 rw-p"), "leading space");
    CHECK(rejected("+1000-2000 rw-p"), "a sign");
    CHECK(rejected("11112222333344445-11112222333344446 rw-p"), "17 hex digits");
    CHECK(line("ffffffffffff0000-ffffffffffffffff r--p", 0xffffffffffff0000ull, 0xffffffffffffffffull),
          "16 hex digits");

    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "/proc/self/maps opens");
    char buf[4096];
    int lines = 0, kept = 0, heap_seen = 0, stack_seen = 0;
    uintptr_t here = (uintptr_t)&lines;
    while (f && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        uintptr_t lo, hi;
        lines++;
        if (leak_maps_line(buf, &lo, &hi)) {
            kept++;
            heap_seen |= strstr(buf, "[heap]") != NULL;
            stack_seen |= here >= lo && here < hi;
        }
    }
    if (f)
        fclose(f);
    CHECK(lines > 5 && kept > 3 && kept < lines, "this process's maps: %d lines, %d kept", lines, kept);
    CHECK(stack_seen, "the mapping of this test's stack is kept");
    (void)heap_seen;
    return CHECK_DONE("test_maps");
}
