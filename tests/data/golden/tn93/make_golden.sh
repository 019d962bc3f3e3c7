#!/bin/sh
# How the veg/tn93 golden files here were made (tn93 v1.0.15, commit c9a319b of github.com/veg/tn93, built with
# `cmake -DCMAKE_BUILD_TYPE=Release .. && make tn93`). One OpenMP thread (OMP_NUM_THREADS=1), so pairs come in tn93's (i, j) order.
# pol_2000x9000.fasta is the first 2,000 records of seqcompare.simulate.simulate_pol(5000, 9000, seed=0), written by
# write_fasta (the test's file). The same command on all 5,000 gave the golden file the test used until session 37.
set -e
TN93=${TN93:-tn93}
export OMP_NUM_THREADS=1
$TN93 -q -t 0.015 -l 1 -o gene_515.t0.015.csv gene_515.fasta  # the bundled data/gene_515.fasta
for a in resolve average skip gapmm; do
  $TN93 -q -t 0.0003 -l 1 -a $a -o sarscov2_338.$a.csv sarscov2_338.fasta
done
$TN93 -q -t 0.0003 -l 1 -a resolve -g 0.02 -o sarscov2_338.resolve_g0.02.csv sarscov2_338.fasta
$TN93 -q -t 0.015 -l 500 -o pol_2000x9000.l500.csv pol_2000x9000.fasta
gzip -9 -n *.csv
