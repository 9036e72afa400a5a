// ELF symbol binding with burst entries: instrumented code calls "<name>.vigil.b", which the
// dynamic linker must bind as it binds <name>. The program defines score() (with a loop: no
// burst entry of its own), which the library exports too: the plain build runs the program's
// score() from both, and so must every mode. The library's hidden helper() has a loop; the
// program's helper() is another function: the library's calls stay in the library.
// e2e-shlib: interposition_lib.c interposition_lib_hidden.c
// e2e-sources: interposition_score.c
#include <stdio.h>

int score(int n);       /* interposition_score.c, and the library's */
int helper(int n);      /* the program's own; the library has a hidden one */
int lib_score(int n);   /* the library's: calls score() */
int lib_helper(int n);  /* the library's: calls its hidden helper() */

int helper(int n) { return -1000 * n; }

int main(void)
{
    long from_program = 0, from_library = 0, hidden = 0;
    for (int i = 0; i < 20000; i++) {
        from_program += score(5);
        from_library += lib_score(5);
        hidden += lib_helper(10);
    }
    printf("score from the program %ld, from the library %ld; library's helper %ld; program's %d\n",
           from_program, from_library, hidden, helper(3));
    return 0;
}
