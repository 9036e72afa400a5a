// The library's hidden helper() (interposition.c): a loop, so no burst entry of its own.
static volatile int table[64];

__attribute__((visibility("hidden"))) int helper(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i + table[i & 63];
    return s;
}
