/* Shared by the subcommands of the `vigil` command (cmd/main.c holds the table). */
#ifndef VIGIL_CMD_H
#define VIGIL_CMD_H

#include <stddef.h>

#include "version.h"

/* Exit statuses of the vigil command itself (`vigil run` exits with the program's). */
enum { EXIT_BAD_INPUT = 1, EXIT_USAGE = 2 };

/* "vigil CMD: message" and the command's usage on stderr; returns EXIT_USAGE. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "vigil CMD: message" on stderr; returns EXIT_BAD_INPUT. */
int cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The path of libvigil.so installed beside this command (<bindir>/../lib); 0 if readable. */
int cmd_runtime_library(char *path, size_t len);

#endif
