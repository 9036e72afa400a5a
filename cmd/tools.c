/* `vigil tools`: the analysis tools built into the runtime, with their options. The runtime
 * itself is the one place that knows which tools it carries: load it into a trivial program
 * with help=1 and keep its tool lines; each tool's options come from its table. */
#include "cmd.h"
#include "cmdtool.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void print_option(void *arg, const char *line)
{
    (void)arg;
    printf("    %s\n", line);
}

int cmd_tools(int argc, char **argv)
{
    if (argc > 1)
        return cmd_usage_error("tools", "unexpected argument '%s'", argv[1]);
    char lib[PATH_MAX];
    if (cmd_runtime_library(lib, sizeof lib) != 0)
        return cmd_error("tools", "cannot find the runtime library %s", lib);
    int fds[2];
    if (pipe(fds) != 0)
        return cmd_error("tools", "pipe: %m");
    pid_t pid = fork();
    if (pid < 0)
        return cmd_error("tools", "fork: %m");
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("LD_PRELOAD", lib, 1);
        setenv("VIGIL_OPTIONS", "help=1:report=0", 1);
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    char line[1024];
    int found = 0;
    const char prefix[] = "vigil: tool ";
    while (in && fgets(line, sizeof line, in))
        if (strncmp(line, prefix, sizeof prefix - 1) == 0) {
            char *name = line + sizeof prefix - 1, *colon = strchr(name, ':');
            if (colon) {
                *colon = '\0';
                printf("  %-8s %s", name, colon + 2);
                const struct vigil_cmd_tool *t = cmd_find_tool(name);
                if (t && t->options)
                    vigil_optset_help(t->options, print_option, NULL);
                found++;
            }
        }
    if (in)
        fclose(in);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!found)
        return cmd_error("tools", "the runtime %s listed no tools", lib);
    printf("\nEnable with VIGIL_OPTIONS=tools=NAME[,NAME] or `vigil run --tool NAME`; set a tool's\n"
           "options with TOOL.key=value (VIGIL_OPTIONS=tools=leak:leak.stale_after=60).\n");
    return 0;
}
