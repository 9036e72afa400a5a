// The library of interposition.c: an exported score() without a loop (the program's wins) and
// callers of score() and of a hidden helper() defined in another unit.
__attribute__((visibility("hidden"))) int helper(int n);

int score(int n) { return n + 1; }

int lib_score(int n) { return score(n) + score(n + 1) - score(n + 1); }

int lib_helper(int n) { return helper(n) + 1; }
