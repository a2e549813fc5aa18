/* What collector.c and activity.c share. Not an interface. */
#ifndef GRAPHCERT_COLLECTOR_H
#define GRAPHCERT_COLLECTOR_H

#include <stdint.h>

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_result.h>

/* CUPTI's clock (the clock of activity records). */
uint64_t gc_now(void);
/* An `error` line: a setup step failed. */
void gc_error(const char *what, CUptiResult result, const char *detail);
/* Remember that a context was made on this device (graphmem lines at exit). */
void gc_device_used(uint32_t ordinal);
/* The `device` line of a new context's device (once per device). */
void gc_describe_device(CUcontext ctx);
/* A `graphmem` line per device used (cuDeviceGetGraphMemAttribute). */
void gc_graphmem_lines(void);

/* True when GRAPHCERT_COLLECTOR_OFF (a comma list: graphs, kernels, calls, markers,
 * callbacks) leaves `part` off: the overhead benchmark's breakdown. A part left off is
 * written as an `error` line, so the record says it is incomplete. */
int gc_part_off(const char *part);

/* Activity: buffers, the kinds and launch API records enabled; 0 on success (an `error`
 * line written for each step that failed). */
int gc_activity_start(void);
/* The `str` id of a name (writing its `str` line the first time); 0 for NULL. */
uint64_t gc_intern(const char *s);

#endif
