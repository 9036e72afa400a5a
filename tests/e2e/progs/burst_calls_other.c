// burst_calls.c (a): a unit of the program. Without a loop, so that built by vigil-cc it has a
// burst entry, which the program's instrumented code calls directly.
int other_unit(int x) { return x % 7 == 3 ? x * 2 : x + 1; }
