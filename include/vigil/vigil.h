/* Public API for programs built with vigil-cc (each tool's own API is in its header, such as
 * vigil/leak.h). Every function is also safe to call when the
 * program runs without the vigil runtime linked in (declare them weak and test for NULL). */
#ifndef VIGIL_H
#define VIGIL_H
#ifdef __cplusplus
extern "C" {
#endif
/* Write the run report now (without exiting); returns 0 on success. */
int vigil_flush_report(void);
#ifdef __cplusplus
}
#endif
#endif
