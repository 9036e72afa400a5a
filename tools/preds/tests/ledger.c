/* A seeded-bug program for adaptive bug isolation (tools/preds/tests/run-adaptive.sh): the bug sits
 * several calls below main and crashes with SIGSEGV, for backward search from the crash site.
 * Input: lines "<op> <account> <amount>", op one of dep, wd, xfer, fee. An account number
 * above 40 is folded into a small table by bucket_of(); the seeded bug: folding a number
 * above 90 yields no bucket (NULL), and the first write through it faults. The predictor is
 * "branch true" on the line marked SEEDED-BUG. */
#include <stdio.h>
#include <string.h>

struct bucket {
    long balance, ops;
};

static struct bucket buckets[48];

static struct bucket *bucket_of(int account)
{
    if (account < 0)
        return &buckets[0];
    if (account <= 40)
        return &buckets[account];
    if (account > 90)             /* SEEDED-BUG: large account numbers lose their bucket */
        return NULL;
    return &buckets[41 + account % 7];
}

static int apply(struct bucket *b, long amount)
{
    /* volatile: the fault must stay a fault. A plain access through the NULL is undefined, and
     * the optimizer may remove the path that leads to it instead (it did, once vigil-cc's
     * cleanup turned the select of the bucket into a PHI). */
    ((volatile struct bucket *)b)->ops++;
    if (amount < 0 && b->balance + amount < 0)
        return -1;
    b->balance += amount;
    return 0;
}

static int post(int account, long amount)
{
    struct bucket *b = bucket_of(account);
    return apply(b, amount);
}

static int transfer(int from, int to, long amount)
{
    if (post(from, -amount) != 0)
        return -1;
    return post(to, amount);
}

static int handle(const char *op, int account, long amount)
{
    if (strcmp(op, "dep") == 0)
        return post(account, amount);
    if (strcmp(op, "wd") == 0)
        return post(account, -amount);
    if (strcmp(op, "xfer") == 0)
        return transfer(account, (account * 7 + 3) % 40, amount);
    if (strcmp(op, "fee") == 0)
        return amount > 100 ? post(account, -amount / 100) : 0;
    return 1;
}

int main(void)
{
    char op[16];
    int account, rejected = 0, unknown = 0;
    long amount;
    while (scanf("%15s %d %ld", op, &account, &amount) == 3) {
        int rc = handle(op, account, amount);
        if (rc < 0)
            rejected++;
        else if (rc > 0)
            unknown++;
    }
    long total = 0;
    for (size_t i = 0; i < sizeof buckets / sizeof *buckets; i++)
        total += buckets[i].balance;
    printf("total %ld, %d rejected, %d unknown\n", total, rejected, unknown);
    return 0;
}
