// Not in the labelled set (run.sh checks it on its own): a report the program asks for with
// vigil_flush_report() while it runs. lose_list's frame was where the report's frames are now:
// what it left there (its list's nodes) must not count as pointers, so the lost list is
// reported whole in the snapshot, as at exit. argv[1]: a command that copies the snapshot.
#include <stdlib.h>
#include <vigil/vigil.h>

struct node { struct node *next; char pad[40]; };
static void *volatile keep;

static __attribute__((noinline)) void lose_list(int n)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *nd = malloc(sizeof *nd);
        nd->pad[0] = (char)i;
        nd->next = head;
        head = nd;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    lose_list(50);
    keep = malloc(16);
    vigil_flush_report();
    return system(argv[1]) == 0 ? 0 : 1;
}
