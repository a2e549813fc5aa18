/* Runs the collector's graph reader (graphread.c) on one of fake_driver.c's SYNTHETIC graphs
 * (argv[1]: 1 or 2) and prints the snapshot JSON, or "error: why". */
#include <stdio.h>
#include <stdlib.h>

#include "drv.h"
#include "graphread.h"

CUgraph fake_graph_handle(int which);

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    jbuf b;
    char why[256] = "";
    jb_init(&b);
    gc_drv_prepare(); /* as InitializeInjection does */
    if (gc_read_graph(&b, fake_graph_handle(atoi(argv[1])), why, sizeof why) != 0) {
        printf("error: %s\n", why);
        return 1;
    }
    printf("%s\n", b.data);
    return 0;
}
