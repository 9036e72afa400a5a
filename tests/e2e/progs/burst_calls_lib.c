// burst_calls.c (e): a shared library. The program reaches it through the weak fallback (local
// burst entries do not cross shared objects): the library's entry check runs at every call.
int shared_unit(int x) { return x % 7 == 3 ? x * 2 : x + 1; }
