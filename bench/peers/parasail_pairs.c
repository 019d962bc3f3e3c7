/* Pairs by order (target k of one FASTA file with query k of another) by parasail's striped AVX2 nw, sg or sw
   (16-bit lanes, redone in 32-bit where a score saturates; the profile made per pair, as a pair's query is used
   once), OpenMP threads over the pairs. Prints "seconds <wall>" on stderr and one score per pair on stdout; with
   a seventh argument "stats", parasail's _stats functions, and a line "score matches similar length" a pair; with
   "trace", its _trace functions and parasail_result_get_cigar, and a line "score cigar" a pair.
   Written for seqcompare's bench/align_pairs.py; parasail's own code is linked from its source, not copied. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parasail.h"
#include "parasail/matrix_lookup.h"
#include "fasta_records.h"

typedef parasail_result_t *(*aligner)(const char *, int, const char *, int, int, int, const parasail_matrix_t *);

int main(int argc, char **argv) {
    if (argc != 7 && !(argc == 8 && (!strcmp(argv[7], "stats") || !strcmp(argv[7], "trace")))) {
        fprintf(stderr, "usage: %s nw|sg|sw matrix targets.fasta queries.fasta open extend [stats|trace]\n", argv[0]);
        return 2;
    }
    int stats = argc == 8 && !strcmp(argv[7], "stats"), trace = argc == 8 && !strcmp(argv[7], "trace");
    aligner narrow, wide;
    if (trace) {
        if (!strcmp(argv[1], "nw")) { narrow = parasail_nw_trace_striped_avx2_256_16; wide = parasail_nw_trace_striped_avx2_256_32; }
        else if (!strcmp(argv[1], "sg")) { narrow = parasail_sg_trace_striped_avx2_256_16; wide = parasail_sg_trace_striped_avx2_256_32; }
        else { narrow = parasail_sw_trace_striped_avx2_256_16; wide = parasail_sw_trace_striped_avx2_256_32; }
    }
    else if (stats) {
        if (!strcmp(argv[1], "nw")) { narrow = parasail_nw_stats_striped_avx2_256_16; wide = parasail_nw_stats_striped_avx2_256_32; }
        else if (!strcmp(argv[1], "sg")) { narrow = parasail_sg_stats_striped_avx2_256_16; wide = parasail_sg_stats_striped_avx2_256_32; }
        else { narrow = parasail_sw_stats_striped_avx2_256_16; wide = parasail_sw_stats_striped_avx2_256_32; }
    }
    else if (!strcmp(argv[1], "nw")) { narrow = parasail_nw_striped_avx2_256_16; wide = parasail_nw_striped_avx2_256_32; }
    else if (!strcmp(argv[1], "sg")) { narrow = parasail_sg_striped_avx2_256_16; wide = parasail_sg_striped_avx2_256_32; }
    else { narrow = parasail_sw_striped_avx2_256_16; wide = parasail_sw_striped_avx2_256_32; }
    const parasail_matrix_t *matrix = parasail_matrix_lookup(argv[2]);
    if (!matrix) { fprintf(stderr, "no matrix %s\n", argv[2]); return 2; }
    int n_targets, n_queries;
    char **targets = read_fasta(argv[3], &n_targets), **queries = read_fasta(argv[4], &n_queries);
    if (n_targets != n_queries) { fprintf(stderr, "pairs by order need equal counts\n"); return 2; }
    int open = atoi(argv[5]), extend = atoi(argv[6]);
    int *scores = malloc((size_t)n_targets * sizeof(int));
    int *counts = malloc((size_t)n_targets * 3 * sizeof(int));  /* matches, similar, length */
    char **cigars = calloc((size_t)n_targets, sizeof(char *));
    double started = omp_get_wtime();
    #pragma omp parallel for schedule(dynamic, 8)
    for (int k = 0; k < n_targets; ++k) {
        /* parasail's s1 is the query, s2 the database sequence (seqcompare's target) */
        const char *q = queries[k], *t = targets[k];
        int q_len = (int)strlen(q), t_len = (int)strlen(t);
        parasail_result_t *r = narrow(q, q_len, t, t_len, open, extend, matrix);
        if (parasail_result_is_saturated(r)) {
            parasail_result_free(r);
            r = wide(q, q_len, t, t_len, open, extend, matrix);
        }
        scores[k] = r->score;
        if (trace) {
            parasail_cigar_t *cigar = parasail_result_get_cigar(r, q, q_len, t, t_len, matrix);
            cigars[k] = parasail_cigar_decode(cigar);
            parasail_cigar_free(cigar);
        }
        if (stats) {
            counts[3 * k] = parasail_result_get_matches(r);
            counts[3 * k + 1] = parasail_result_get_similar(r);
            counts[3 * k + 2] = parasail_result_get_length(r);
        }
        parasail_result_free(r);
    }
    fprintf(stderr, "seconds %.6f\n", omp_get_wtime() - started);
    for (int k = 0; k < n_targets; ++k) {
        if (trace) printf("%d %s\n", scores[k], cigars[k]);
        else if (stats) printf("%d %d %d %d\n", scores[k], counts[3 * k], counts[3 * k + 1], counts[3 * k + 2]);
        else printf("%d\n", scores[k]);
    }
    return 0;
}
