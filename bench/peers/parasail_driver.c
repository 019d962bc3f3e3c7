#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parasail.h"
#include "parasail/matrix_lookup.h"
/* Reads lines "mode matrix open extend query target" from stdin; prints "score end_query end_ref matches similar
   length" per line: the first three from parasail_<mode>, the statistics from parasail_<mode>_stats. */
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
        parasail_result_t *s;
        if (!strcmp(mode, "nw")) s = parasail_nw_stats(query, q, target, t, open, extend, matrix);
        else if (!strcmp(mode, "sg")) s = parasail_sg_stats(query, q, target, t, open, extend, matrix);
        else s = parasail_sw_stats(query, q, target, t, open, extend, matrix);
        if (s->score != r->score) { fprintf(stderr, "stats score differs\n"); return 1; }
        printf("%d %d %d %d %d %d\n", r->score, r->end_query, r->end_ref, parasail_result_get_matches(s),
               parasail_result_get_similar(s), parasail_result_get_length(s));
        parasail_result_free(r);
        parasail_result_free(s);
    }
    return 0;
}
