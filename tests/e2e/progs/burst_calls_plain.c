// burst_calls.c (c): an archive member built by plain clang: the program's instrumented code
// reaches it through the weak fallback of its local burst entry.
int plain_unit(int x) { return x % 7 == 3 ? x * 2 : x + 1; }
