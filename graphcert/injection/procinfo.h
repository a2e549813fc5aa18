/* This process as /proc tells it: its start time and its `process` line. */
#ifndef GRAPHCERT_PROCINFO_H
#define GRAPHCERT_PROCINFO_H

#include "jsonout.h"

/* The process's start time in clock ticks (field 22 of /proc/self/stat), 0 if unreadable. */
unsigned long long gc_start_ticks(void);
/* The fields of the `process` line after "t": pid, ppid, argv, exe, wall_ns. */
void gc_process_fields(jbuf *b);

#endif
