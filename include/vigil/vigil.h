/* Public API for programs built with vigil-cc. Every function is also safe to call when the
 * program runs without the vigil runtime linked in (declare them weak and test for NULL). */
#ifndef VIGIL_H
#define VIGIL_H
#ifdef __cplusplus
extern "C" {
#endif
/* Write the run report now (without exiting); returns 0 on success. */
int vigil_flush_report(void);
/* Leak tool (tools=leak): take a leak snapshot now. Returns the number of stale objects, or -1
 * when the leak tool is not enabled. */
int vigil_leak_snapshot(void);
#ifdef __cplusplus
}
#endif
#endif
