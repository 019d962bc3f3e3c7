#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parasail.h"
#include "parasail/matrix_lookup.h"
/* Reads lines "mode matrix open extend query target" from stdin; prints "score end_query end_ref" per line. */
int main(void) {
    char mode[16], name[32], query[4096], target[4096];
    int open, extend;
    while (scanf("%15s %31s %d %d %4095s %4095s", mode, name, &open, &extend, query, target) == 6) {
        const parasail_matrix_t *matrix = parasail_matrix_lookup(name);
        if (!matrix) { fprintf(stderr, "no matrix %s\n", name); return 1; }
        parasail_result_t *r;
        int q = (int)strlen(query), t = (int)strlen(target);
        if (!strcmp(mode, "nw")) r = parasail_nw(query, q, target, t, open, extend, matrix);
        else if (!strcmp(mode, "sg")) r = parasail_sg(query, q, target, t, open, extend, matrix);
        else r = parasail_sw(query, q, target, t, open, extend, matrix);
        printf("%d %d %d\n", r->score, r->end_query, r->end_ref);
        parasail_result_free(r);
    }
    return 0;
}
