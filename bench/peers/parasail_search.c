/* Every query of one FASTA file against every sequence of another, by parasail's striped AVX2 Smith-Waterman
   with a profile made once per query (16-bit lanes, redone in 32-bit where a score saturates), OpenMP threads over
   the database. Prints "seconds <wall>" on stderr and one score per pair on stdout, queries by rows. Written for
   seqcompare's bench/align_modes.py; parasail's own code is linked from its source, not copied. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "parasail.h"
#include "parasail/matrix_lookup.h"
#include "fasta_records.h"

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: %s queries.fasta db.fasta open extend\n", argv[0]); return 2; }
    int n_queries, n_db;
    char **queries = read_fasta(argv[1], &n_queries), **db = read_fasta(argv[2], &n_db);
    int open = atoi(argv[3]), extend = atoi(argv[4]);
    const parasail_matrix_t *matrix = parasail_matrix_lookup("blosum62");
    int *scores = malloc((size_t)n_queries * n_db * sizeof(int));
    int *lengths = malloc(n_db * sizeof(int));
    for (int d = 0; d < n_db; ++d) lengths[d] = (int)strlen(db[d]);
    double started = omp_get_wtime();
    for (int q = 0; q < n_queries; ++q) {
        int q_len = (int)strlen(queries[q]);
        parasail_profile_t *narrow = parasail_profile_create_avx_256_16(queries[q], q_len, matrix);
        parasail_profile_t *wide = parasail_profile_create_avx_256_32(queries[q], q_len, matrix);
        #pragma omp parallel for schedule(dynamic, 16)
        for (int d = 0; d < n_db; ++d) {
            parasail_result_t *r = parasail_sw_striped_profile_avx2_256_16(narrow, db[d], lengths[d], open, extend);
            if (parasail_result_is_saturated(r)) {
                parasail_result_free(r);
                r = parasail_sw_striped_profile_avx2_256_32(wide, db[d], lengths[d], open, extend);
            }
            scores[(size_t)q * n_db + d] = r->score;
            parasail_result_free(r);
        }
        parasail_profile_free(narrow);
        parasail_profile_free(wide);
    }
    fprintf(stderr, "seconds %.6f\n", omp_get_wtime() - started);
    for (size_t k = 0; k < (size_t)n_queries * n_db; ++k) printf("%d\n", scores[k]);
    return 0;
}
