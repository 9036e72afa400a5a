// A filter whose reader went away (`prog | head`): the write raises SIGPIPE, which ends every
// build by that signal; the vigil build's report must say so.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    close(fds[0]);   /* no reader left */
    char line[64];
    for (int i = 0; i < 1000; i++) {
        snprintf(line, sizeof line, "line %d\n", i);
        if (write(fds[1], line, strlen(line)) < 0) {
            printf("write failed: not reached while SIGPIPE is fatal\n");
            return 2;
        }
    }
    return 0;
}
