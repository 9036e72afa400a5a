// The shared library loaded by dlopen_plugin.c (not a program on its own).
#include <stdio.h>

int plugin_calls;
static int loads;

__attribute__((constructor)) static void plugin_loaded(void) { loads++; }

const char *plugin_name(void) { return loads == 1 ? "squares" : "reloaded"; }

long plugin_transform(int (*callback)(int), int x) {
    plugin_calls++;
    long s = 0;
    for (int i = 0; i <= x; i++) s += callback(i) % 17;
    return s * (x % 3 == 0 ? -1 : 1);
}
