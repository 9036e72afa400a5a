/* The leak tool's API for programs built with vigil-cc (installed as <vigil/leak.h>). Safe to
 * call when the program runs without vigil: declare it weak and test for NULL
 * (#pragma weak vigil_leak_snapshot). */
#ifndef VIGIL_LEAK_API_H
#define VIGIL_LEAK_API_H
#ifdef __cplusplus
extern "C" {
#endif
/* Take a leak snapshot now. Returns the number of stale objects, or -1 when the leak tool is
 * not enabled (tools=leak). */
int vigil_leak_snapshot(void);
#ifdef __cplusplus
}
#endif
#endif
