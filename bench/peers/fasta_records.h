/* A FASTA file's records as NUL-terminated strings (line breaks, CRs and spaces dropped), for the peer drivers
   beside this file (parasail_search.c, parasail_pairs.c). */
#ifndef SEQCOMPARE_PEERS_FASTA_RECORDS_H
#define SEQCOMPARE_PEERS_FASTA_RECORDS_H
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

static char **read_fasta(const char *path, int *count) {
    FILE *file = fopen(path, "r");
    if (!file) { perror(path); exit(1); }
    size_t capacity = 1024, n = 0;
    char **records = malloc(capacity * sizeof(char *));
    char *line = NULL; size_t size = 0; ssize_t got;
    char *current = NULL; size_t length = 0, room = 0;
    while ((got = getline(&line, &size, file)) > 0) {
        if (line[0] == '>') {
            if (current) records[n++] = current;
            if (n == capacity) records = realloc(records, (capacity *= 2) * sizeof(char *));
            room = 1024; length = 0; current = malloc(room); current[0] = 0;
            continue;
        }
        for (ssize_t k = 0; k < got; ++k) {
            char c = line[k];
            if (c == '\n' || c == '\r' || c == ' ') continue;
            if (length + 2 > room) current = realloc(current, room *= 2);
            current[length++] = c; current[length] = 0;
        }
    }
    if (current) records[n++] = current;
    fclose(file); free(line);
    *count = (int)n;
    return records;
}

#endif
