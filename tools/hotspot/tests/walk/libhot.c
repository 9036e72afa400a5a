/* A shared library built with vigil-cc: its hot leaf and the library function that calls it. */
__attribute__((noinline)) double lib_leaf(double x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x * i / (i + 3.0);
    return s;
}

double lib_work(int k)
{
    double s = 0;
    for (int i = 0; i < 2; i++)
        s += lib_leaf(k + i, 2000);
    return s;
}
