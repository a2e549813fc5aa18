/* Read a CUgraph into the snapshot JSON of docs/record-streams.md. */
#ifndef GRAPHCERT_GRAPHREAD_H
#define GRAPHCERT_GRAPHREAD_H

#include <cuda.h>
#include <stddef.h>

#include "jsonout.h"

/* Appends the snapshot object to `out`; 0 on success, else -1 with why in `why` (what is in
 * `out` is then to be discarded). Host-side queries only: nothing waits on the GPU. */
int gc_read_graph(jbuf *out, CUgraph graph, char *why, size_t why_n);

#endif
