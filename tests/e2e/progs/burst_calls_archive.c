// burst_calls.c (b): an archive member. Its burst entry (no loop) must win over the program's
// weak fallback, although the linker loads the member after the program's objects.
int archive_unit(int x) { return x % 7 == 3 ? x * 2 : x + 1; }
