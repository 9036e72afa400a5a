/* Helpers of the memory checker's labelled programs: values the optimizer cannot see
 * through, and sinks that use a value without changing the program's output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int mc_sink_int;
static void *volatile mc_sink_ptr;
__attribute__((noinline)) static void sink(int v) { mc_sink_int = v; }
__attribute__((noinline)) static void *opaque(void *p) { mc_sink_ptr = p; return mc_sink_ptr; }
__attribute__((noinline)) static int zero(void) { return mc_sink_int * 0; }
