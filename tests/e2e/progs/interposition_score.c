// The program's score(), which interposes on the library's (interposition.c).
static volatile int weights[16] = {1, 2, 3};

int score(int n)
{
    int s = 1000;
    for (int i = 0; i < n; i++)
        s += weights[i & 15];
    return s;
}
