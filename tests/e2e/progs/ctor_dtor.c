// Constructors and destructors with priorities, and atexit handlers; order must be kept.
#include <stdio.h>
#include <stdlib.h>

static int initialized[3];
static int order;

__attribute__((constructor(101))) static void first_constructor(void) { initialized[0] = ++order; }
__attribute__((constructor(102))) static void second_constructor(void) { initialized[1] = ++order; }
__attribute__((constructor)) static void plain_constructor(void) { initialized[2] = ++order; }

__attribute__((destructor)) static void plain_destructor(void) { printf("destructor plain\n"); }
__attribute__((destructor(101))) static void early_destructor(void) { printf("destructor 101\n"); fflush(stdout); }

static void exit_handler_one(void) { printf("atexit one\n"); }
static void exit_handler_two(void) { printf("atexit two\n"); }

int main(void) {
    printf("constructors ran in order: %d %d %d\n", initialized[0], initialized[1], initialized[2]);
    atexit(exit_handler_one);
    atexit(exit_handler_two);
    printf("main returns\n");
    return 0;
}
