// A shared library built with the same compiler (-shared -fPIC), loaded with dlopen; the
// library calls back into the program. The library's path is argv[1].
// e2e-plugin: plugin_lib.c
// e2e-args: @BUILD@/plugin_lib.so
// e2e-link: -ldl -Wl,-E
#include <dlfcn.h>
#include <stdio.h>

int host_callback(int x) { return x * 3 + 1; }

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: dlopen_plugin LIB\n"); return 2; }
    void *handle = dlopen(argv[1], RTLD_NOW);
    if (!handle) { fprintf(stderr, "dlopen failed\n"); return 1; }
    long (*transform)(int (*)(int), int) = (long (*)(int (*)(int), int))dlsym(handle, "plugin_transform");
    const char *(*name)(void) = (const char *(*)(void))dlsym(handle, "plugin_name");
    int *counter = dlsym(handle, "plugin_calls");
    if (!transform || !name || !counter) { fprintf(stderr, "dlsym failed\n"); return 1; }
    long total = 0;
    for (int i = 0; i < 100; i++) total += transform(host_callback, i);
    printf("plugin %s total=%ld calls=%d\n", name(), total, *counter);
    dlclose(handle);
    /* Load it again: its constructors and site table are registered a second time. */
    handle = dlopen(argv[1], RTLD_NOW);
    transform = (long (*)(int (*)(int), int))dlsym(handle, "plugin_transform");
    printf("again %ld\n", transform(host_callback, 5));
    dlclose(handle);
    return 0;
}
