// Alignment modes on NVIDIA GPUs (modes.py's mode_pairs, cell for cell): global, local, semi-global, infix and
// prefix with any substitution table and affine gaps, giving the score, the end and start positions and
// parasail's statistics of the path that modes.py's CPU kernel follows.
//
// One thread per pair. A thread sweeps its query in strips of R rows: for each target column it takes the cell
// above the strip (its score, vertical-gap score and their paths) from a border row in global memory, works the R
// cells down the column in registers, and writes the strip's bottom cell back for the next strip. The border is
// laid out column-major across the launch's pairs ((column * fields + field) * pairs + pair), so a warp's reads
// and writes of one column are coalesced; the host sorts pairs by shape so a warp's threads run alike.
//
// A path is six integers: matches, similar, aligned pairs, length (columns), start row, start column.
// Scores are 32-bit: the host refuses inputs whose scores could reach 2**29.

#define NEG (-(1 << 30))

struct Path {
    int matches, similar, pairs, length, row, column;
};

__device__ __forceinline__ Path empty_path(int row, int column) { return Path{0, 0, 0, 0, row, column}; }

template <bool PATHS>
__device__ __forceinline__ void load(const int* __restrict__ border, long long at, long long stride, int& h, int& f,
                                     Path& hp, Path& fp) {
    h = border[at];
    f = border[at + stride];
    if (!PATHS) return;
    hp = Path{border[at + 2 * stride], border[at + 3 * stride], border[at + 4 * stride], border[at + 5 * stride],
              border[at + 6 * stride], border[at + 7 * stride]};
    fp = Path{border[at + 8 * stride], border[at + 9 * stride], border[at + 10 * stride], border[at + 11 * stride],
              border[at + 12 * stride], border[at + 13 * stride]};
}

template <bool PATHS>
__device__ __forceinline__ void store(int* __restrict__ border, long long at, long long stride, int h, int f,
                                      const Path& hp, const Path& fp) {
    border[at] = h;
    border[at + stride] = f;
    if (!PATHS) return;
    border[at + 2 * stride] = hp.matches;
    border[at + 3 * stride] = hp.similar;
    border[at + 4 * stride] = hp.pairs;
    border[at + 5 * stride] = hp.length;
    border[at + 6 * stride] = hp.row;
    border[at + 7 * stride] = hp.column;
    border[at + 8 * stride] = fp.matches;
    border[at + 9 * stride] = fp.similar;
    border[at + 10 * stride] = fp.pairs;
    border[at + 11 * stride] = fp.length;
    border[at + 12 * stride] = fp.row;
    border[at + 13 * stride] = fp.column;
}

// The substitution table in shared memory (SHARED, when it fits: the host gives the launch size x (size | 1) ints
// of dynamic shared memory), rows padded to an odd number of entries: the threads of a warp read one query
// letter's column from different target letters' rows, and an even row length such as 24 would put up to eight of
// them in one bank. Otherwise the table in global memory, rows unpadded. load_table runs in every thread of the
// block before any returns (it synchronises).
// SHARED is a template parameter of the kernels, so that the compiler knows which memory the table's reads go
// to (through a pointer that may be either it kept the strip's query codes in local memory).
__device__ __forceinline__ int table_stride(int size, bool shared) { return shared ? size | 1 : size; }

template <bool SHARED>
__device__ __forceinline__ void load_table(const int* __restrict__ table, int size) {
    if constexpr (SHARED) {
        extern __shared__ int padded[];
        const int stride = table_stride(size, true);
        for (int at = threadIdx.x; at < size * size; at += blockDim.x) padded[(at / size) * stride + at % size] = table[at];
        __syncthreads();
    }
}

// Row a of the table (padded rows in shared memory, or the caller's in global memory).
template <bool SHARED>
__device__ __forceinline__ const int* table_row(const int* __restrict__ table, int a, int stride) {
    if constexpr (SHARED) {
        extern __shared__ int padded[];
        return padded + a * stride;
    } else {
        return table + a * stride;
    }
}

// Whether (h, i, j) beats the best local cell so far: the higher score, then the smaller column, then row (the
// order modes.py's row-by-row scan settles on, whatever order the cells are visited in).
__device__ __forceinline__ bool better_local(int h, int i, int j, int best, int best_i, int best_j) {
    return h > best || (h == best && (j < best_j || (j == best_j && i < best_i)));
}

// PATHS false: the scores and ends only, the border two integers a column (the paths stay empty and unused).
template <int R, bool PATHS, bool SHARED>
__device__ void mode_pair(const unsigned char* __restrict__ t, int n, const unsigned char* __restrict__ q, int m,
                          const int* table, int row_length, int gap_open, int gap_extend, int mode,
                          int* __restrict__ border, long long stride, int& best, int& best_i, int& best_j,
                          Path& best_path) {
    const bool local = mode == 1;
    const bool free_target_start = mode == 1 || mode == 2 || mode == 3;
    const bool free_query_start = mode == 1 || mode == 2;
    const Path none = empty_path(0, 0);
    constexpr int FIELDS = PATHS ? 14 : 2;
    for (int j = 0; j <= n; ++j) {
        int h = j == 0 || free_target_start ? 0 : -(gap_open + (j - 1) * gap_extend);
        const Path start = empty_path(0, free_target_start ? j : 0);
        store<PATHS>(border, (long long)j * FIELDS * stride, stride, h, NEG, start, none);
    }
    best = local ? 0 : NEG;
    best_i = local ? 1 : 0;
    best_j = local ? 1 : 0;
    best_path = local ? empty_path(1, 1) : none;
    for (int first = 0; first < m; first += R) {
        const int rows = min(R, m - first);
        int code[R], west[R], e[R], row_best[PATHS ? 1 : R], row_column[PATHS ? 1 : R];
        Path west_path[R], e_path[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = first + r + 1;
            if constexpr (!PATHS) {
                row_best[r] = -1;  // below every local score: the row's first cell of its maximum is taken
                row_column[r] = 0;
            }
            code[r] = r < rows ? q[i - 1] : 0;
            west[r] = free_query_start ? 0 : -(gap_open + (i - 1) * gap_extend);
            west_path[r] = empty_path(free_query_start ? i : 0, 0);
            e[r] = NEG;
            e_path[r] = none;
        }
        // The cell above the strip in column 0 is the next diagonal; the strip's bottom border cell replaces it.
        int diag, unused_f;
        Path diag_path = none, unused_path = none;
        load<PATHS>(border, 0, stride, diag, unused_f, diag_path, unused_path);
        store<PATHS>(border, 0, stride, west[rows - 1], NEG, west_path[rows - 1], none);
        for (int j = 1; j <= n; ++j) {
            const long long at = (long long)j * FIELDS * stride;
            int north, f;
            Path north_path = none, f_path = none;
            load<PATHS>(border, at, stride, north, f, north_path, f_path);
            const int next_diag = north;
            const Path next_diag_path = north_path;
            const int a = t[j - 1];
            const int* scores = table_row<SHARED>(table, a, row_length);
            if constexpr (!PATHS) {
                // Values only: Hopper's DPX instructions, max(x + y, z) for each gap state and one three-way
                // maximum (clamped at 0 in local mode) for the cell; local ends tracked per row (below).
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if (r < rows) {
                        f = __viaddmax_s32(f, -gap_extend, north - gap_open);
                        e[r] = __viaddmax_s32(e[r], -gap_extend, west[r] - gap_open);
                        const int h_diag = diag + scores[code[r]];
                        const int h = local ? __vimax3_s32_relu(h_diag, e[r], f) : __vimax3_s32(h_diag, e[r], f);
                        if (local && h > row_best[r]) {  // the first column of the row's best
                            row_best[r] = h;
                            row_column[r] = j;
                        }
                        if (mode == 2 && j == n && h > best) {
                            best = h;
                            best_i = first + r + 1;
                            best_j = n;
                        }
                        diag = west[r];
                        west[r] = h;
                        north = h;
                    }
                }
                store<PATHS>(border, at, stride, north, f, north_path, f_path);
                diag = next_diag;
                continue;
            }
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (r < rows) {
                    const int i = first + r + 1;
                    const int f_open = north - gap_open, f_extend = f - gap_extend;
                    if (f_open > f_extend) {
                        f = f_open;
                        if (PATHS) f_path = north_path;
                    } else {
                        f = f_extend;
                    }
                    if (PATHS) f_path.length += 1;
                    const int e_open = west[r] - gap_open, e_extend = e[r] - gap_extend;
                    if (e_open > e_extend) {
                        e[r] = e_open;
                        if (PATHS) e_path[r] = west_path[r];
                    } else {
                        e[r] = e_extend;
                    }
                    if (PATHS) e_path[r].length += 1;
                    const int substitution = scores[code[r]];
                    const int h_diag = diag + substitution;
                    int h = max(h_diag, max(e[r], f));
                    if (local && h < 0) h = 0;
                    Path path = none;
                    if (!PATHS) {
                    } else if (h == h_diag) {
                        path = diag_path;
                        path.matches += a == code[r];
                        path.similar += substitution > 0;
                        path.pairs += 1;
                        path.length += 1;
                    } else if (h == f) {
                        path = f_path;
                    } else {
                        path = e_path[r];
                    }
                    if (PATHS && local && h <= 0) path = empty_path(i, j);
                    diag = west[r];
                    diag_path = west_path[r];
                    west[r] = h;
                    west_path[r] = path;
                    north = h;
                    north_path = path;
                    if (local && better_local(h, i, j, best, best_i, best_j)) {
                        best = h;
                        best_i = i;
                        best_j = j;
                        best_path = path;
                    }
                    if (mode == 2 && j == n && h > best) {  // semi-global: the last column, smallest row first
                        best = h;
                        best_i = i;
                        best_j = n;
                        best_path = path;
                    }
                }
            }
            store<PATHS>(border, at, stride, north, f, north_path, f_path);
            diag = next_diag;
            diag_path = next_diag_path;
        }
        if constexpr (!PATHS) {
            if (local) {  // each row's best against the best so far, rows in order
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if (r < rows && better_local(row_best[r], first + r + 1, row_column[r], best, best_i, best_j)) {
                        best = row_best[r];
                        best_i = first + r + 1;
                        best_j = row_column[r];
                    }
                }
            }
        }
    }
    // The border now holds the last row.
    int h, f;
    Path path = none, f_path = none;
    if (mode == 0 || (!local && (m == 0 || n == 0))) {
        load<PATHS>(border, (long long)n * FIELDS * stride, stride, h, f, path, f_path);
        best = h;
        best_i = m;
        best_j = n;
        best_path = path;
    } else if (mode == 2) {  // then the last row short of the last column: the smallest column wins ties
        for (int j = 1; j < n; ++j) {
            load<PATHS>(border, (long long)j * FIELDS * stride, stride, h, f, path, f_path);
            if (h > best || (h == best && j < best_j)) {
                best = h;
                best_i = m;
                best_j = j;
                best_path = path;
            }
        }
    } else if (mode == 3 || mode == 4) {  // the whole query, the leftmost best target end
        for (int j = 0; j <= n; ++j) {
            load<PATHS>(border, (long long)j * FIELDS * stride, stride, h, f, path, f_path);
            if (j == 0 || h > best) {
                best = h;
                best_i = m;
                best_j = j;
                best_path = path;
            }
        }
    } else if (local && (m == 0 || n == 0)) {
        best = 0;
        best_i = 0;
        best_j = 0;
        best_path = none;
    }
}

// Pairs 0 .. count - 1 of this launch: pair k aligns target pair_t[k] with query pair_q[k]. Outputs per pair:
// the score, the positions (target start, target end, query start, query end) and the counts (matches, similar,
// pairs, length).
template <int R, bool PATHS, bool SHARED>
__global__ void mode_pairs(const unsigned char* __restrict__ t_codes, const long long* __restrict__ t_off,
                           const unsigned char* __restrict__ q_codes, const long long* __restrict__ q_off,
                           const long long* __restrict__ pair_t, const long long* __restrict__ pair_q, int count,
                           const int* __restrict__ table, int size, int gap_open, int gap_extend, int mode,
                           int* __restrict__ border, int* __restrict__ scores, int* __restrict__ positions,
                           int* __restrict__ counts) {
    load_table<SHARED>(table, size);
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const long long t0 = t_off[pair_t[k]], q0 = q_off[pair_q[k]];
    const int n = (int)(t_off[pair_t[k] + 1] - t0), m = (int)(q_off[pair_q[k] + 1] - q0);
    int best, best_i, best_j;
    Path path;
    mode_pair<R, PATHS, SHARED>(t_codes + t0, n, q_codes + q0, m, table, table_stride(size, SHARED), gap_open,
                                gap_extend, mode, border + k,
                 (long long)count, best, best_i, best_j, path);
    scores[k] = best;
    positions[4 * k] = PATHS ? path.column : -1;
    positions[4 * k + 1] = best_j - 1;
    positions[4 * k + 2] = PATHS ? path.row : -1;
    positions[4 * k + 3] = best_i - 1;
    if (!PATHS) return;
    counts[4 * k] = path.matches;
    counts[4 * k + 1] = path.similar;
    counts[4 * k + 2] = path.pairs;
    counts[4 * k + 3] = path.length;
}

// Traceback directions, one byte a cell (modes.py's mode_traceback): bits 0-1 where H came from (0 the diagonal,
// 1 the vertical gap F, 2 the horizontal gap E, 3 a local start), bit 2 F opened here, bit 3 E opened here.
#define FROM_DIAGONAL 0
#define FROM_F 1
#define FROM_E 2
#define STOP 3

// The CIGAR of one pair ending at cell (end_i, end_j): the DP again over rows 1..end_i and columns 1..end_j,
// storing each cell's direction byte (interleaved across the launch's pairs: ((i - 1) * width + j - 1) * count +
// k), then the walk back from the end, writing the CIGAR right to left into the pair's slot of text (so each run
// is written when it ends, in walk order). Horizontal gaps (a target letter against a gap, I) cost open_e +
// (L - 1) extend_e, vertical ones (D) open_f + (L - 1) extend_f. prefer_e: on a tie between the two gap states H
// takes E (the global NW engine's traceback, kernels.py's nw_traceback), else F (parasail's, modes.py's).
template <int R, bool SHARED>
__global__ void mode_traceback(const unsigned char* __restrict__ t_codes, const long long* __restrict__ t_off,
                               const unsigned char* __restrict__ q_codes, const long long* __restrict__ q_off,
                               const long long* __restrict__ pair_t, const long long* __restrict__ pair_q, int count,
                               const int* __restrict__ end_rows, const int* __restrict__ end_columns,
                               const int* __restrict__ table, int size, int open_e, int extend_e, int open_f,
                               int extend_f, int mode, int prefer_e, int* __restrict__ border,
                               unsigned char* __restrict__ ways, long long width, char* __restrict__ text,
                               const long long* __restrict__ text_end, int* __restrict__ text_length,
                               int* __restrict__ end_score, int* __restrict__ starts) {
    load_table<SHARED>(table, size);
    const int stride_of_table = table_stride(size, SHARED);
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const bool local = mode == 1;
    const bool free_target_start = mode == 1 || mode == 2 || mode == 3;
    const bool free_query_start = mode == 1 || mode == 2;
    const unsigned char* __restrict__ t = t_codes + t_off[pair_t[k]];
    const unsigned char* __restrict__ q = q_codes + q_off[pair_q[k]];
    const int m = end_rows[k], n = end_columns[k];
    const long long stride = count;
    int* __restrict__ own = border + k;
    for (int j = 0; j <= n; ++j) {
        own[(long long)j * 2 * stride] = j == 0 || free_target_start ? 0 : -(open_e + (j - 1) * extend_e);
        own[((long long)j * 2 + 1) * stride] = NEG;
    }
    for (int first = 0; first < m; first += R) {
        const int rows = min(R, m - first);
        int code[R], west[R], e[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int i = first + r + 1;
            code[r] = r < rows ? q[i - 1] : 0;
            west[r] = free_query_start ? 0 : -(open_f + (i - 1) * extend_f);
            e[r] = NEG;
        }
        int diag = own[0];
        own[0] = west[rows - 1];
        for (int j = 1; j <= n; ++j) {
            const long long at = (long long)j * 2 * stride;
            int north = own[at], f = own[at + stride];
            const int next_diag = north;
            const int a = t[j - 1];
            const int* scores = table_row<SHARED>(table, a, stride_of_table);
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (r < rows) {
                    const int i = first + r + 1;
                    int way = 0;
                    const int f_open = north - open_f, f_extend = f - extend_f;
                    if (f_open > f_extend) {
                        f = f_open;
                        way |= 4;
                    } else {
                        f = f_extend;
                    }
                    const int e_open = west[r] - open_e, e_extend = e[r] - extend_e;
                    if (e_open > e_extend) {
                        e[r] = e_open;
                        way |= 8;
                    } else {
                        e[r] = e_extend;
                    }
                    const int h_diag = diag + scores[code[r]];
                    int h = max(h_diag, max(e[r], f));
                    if (local && h < 0) h = 0;
                    if (local && h <= 0) {
                        way |= STOP;
                    } else if (h == h_diag) {
                        way |= FROM_DIAGONAL;
                    } else if (prefer_e ? h != e[r] : h == f) {
                        way |= FROM_F;
                    } else {
                        way |= FROM_E;
                    }
                    ways[((long long)(i - 1) * width + (j - 1)) * stride + k] = (unsigned char)way;
                    diag = west[r];
                    west[r] = h;
                    north = h;
                }
            }
            own[at] = north;
            own[at + stride] = f;
            diag = next_diag;
        }
    }
    end_score[k] = own[(long long)n * 2 * stride];
    // The walk back, the CIGAR written right to left from the end of the pair's slot.
    char* __restrict__ slot = text;
    long long at = text_end[k];
    const long long last = at;
    int i = m, j = n, state = 0, run_op = -1, run = 0;
    auto emit = [&](int op) {
        if (op != run_op && run > 0) {
            slot[--at] = "MID"[run_op];
            for (int left = run; left > 0; left /= 10) slot[--at] = (char)('0' + left % 10);
            run = 0;
        }
        run_op = op;
        ++run;
    };
    while (true) {
        if (state == 0) {
            if (i == 0 || j == 0) {
                if ((i == 0 && free_target_start) || (j == 0 && free_query_start)) break;
                for (; j > 0; --j) emit(1);
                for (; i > 0; --i) emit(2);
                break;
            }
            const int source = ways[((long long)(i - 1) * width + (j - 1)) * stride + k] & 3;
            if (source == STOP) break;
            if (source == FROM_DIAGONAL) {
                emit(0);
                --i;
                --j;
            } else {
                state = source == FROM_F ? 1 : 2;
            }
        } else if (state == 1) {
            emit(2);
            if (ways[((long long)(i - 1) * width + (j - 1)) * stride + k] & 4) state = 0;
            --i;
        } else {
            emit(1);
            if (ways[((long long)(i - 1) * width + (j - 1)) * stride + k] & 8) state = 0;
            --j;
        }
    }
    emit(-1);  // the last run
    text_length[k] = (int)(last - at);
    starts[2 * k] = i;
    starts[2 * k + 1] = j;
}

// ---------------------------------------------------------------------------------------------------------------
// Local scores and ends of many targets against one query, two targets a lane (local16). What a protein database
// search runs: scores only (no paths), every value provably within 16 bits (the host's test: the shorter side
// times the best substitution, plus a gap, below 2**13).
//
// A block of SEARCH_WARPS warps shares one query; each warp takes two targets, one in each 16-bit half of every
// register, so each instruction on packed halves (Hopper's VIADDMNMX: max(a + b, c); VIMNMX3: a three-way maximum;
// VIADD.16x2) serves two cells. The warp's 32 lanes own consecutive strips of R query rows (a chunk of 32 R rows;
// longer queries go chunk by chunk through a border row in global memory) and sweep the target columns as a
// wavefront: lane t at column j = s - t + 1 at step s, the cell above its strip arriving from lane t - 1 by a
// shuffle.
//
// The recurrence (Gotoh, maximised, local; a gap of L costs open + (L - 1) extend), each cell's gap states
// computed for its neighbours, so that the cell is one three-way maximum with 0 and each gap state one
// max(a + b, c) of the cell's H - open (one VIADD.16x2 a cell, shared by both):
//   H[i][j] = max(H[i-1][j-1] + s, E[i][j], F[i][j], 0)
//   E[i][j+1] = max(E[i][j] - extend, H[i][j] - open)      F[i+1][j] = max(F[i][j] - extend, H[i][j] - open)
// The maxima run on the ALU pipe at half the issue rate, the additions (VIADD.16x2) on another: on an H200
// (bench/dpx_rates.py) VIADDMNMX alone issues 16.3 T lane instructions a second, and 28.7 T beside VIADD.16x2.
// So a cell word is three maxima (VIMNMX3.RELU and two VIADDMNMX) and two additions. Row 0 and column 0 hold
// H = 0, and E = F = -open there stands for minus infinity (max(-open - extend, 0 - open) is what minus infinity
// gives).
//
// The block's query profile, rebuilt for each chunk in shared memory: s for every target letter (and a padding
// letter, `size`) against each of the chunk's rows, int16, one lane's R rows contiguous at a stride of
// profile_stride(R) words (an even count of 4-byte words, 2 mod 4, so the lanes' 8-byte loads of different
// letters fall in different banks). A lane loads its rows' scores for each half's letter and interleaves them
// (two PRMTs for two rows). Rows past the query and columns past a target score PAD16 against everything: such
// cells get values below some real cell's (a padding score or a gap penalty is subtracted on the way), or equal
// to one of a smaller row or column (zero gap costs), so they never hold the first maximum, and need no range
// tests.
//
// Ends as modes.py orders them: the highest score, then the smallest column, then the smallest row. A lane notes,
// per half and per chunk, the value and column of each column maximum that beats everything it has noted (so
// the first column of its best) and that could still be the pair's end: at least the best of the lane in
// earlier chunks and of the whole warp at its last exchange (every 32 steps), since a lower one never is. The
// lane holding the pair's maximum always notes it, as does any lane tying it. The note also keeps that column's
// R rows of the half in shared memory (R/2 PRMTs and stores); the first row holding the maximum is searched for
// once, after the chunk, in the last column kept. Searching at every note instead (a compare and a select a
// row and half) cost 15% of the kernel's time on CUDASW++'s queries (bench/RESULTS.md, session 26). Chunks
// and then lanes are merged in the order of ends.
#define PAD16 (-(1 << 13))
#define SEARCH_WARPS 4
// Registers capped for 5 blocks a multiprocessor up to R = 16 (96 at R = 16, where 111 gave 4): 1.4% faster on an
// H200, with 8 bytes spilled outside the loop (bench/local16_ablation.py, five_blocks); 4 for the taller strips
// (120 registers at R = 20), which then take the longest queries in fewer chunks: 1.3% faster on CUDASW++'s
// queries (strips_to_20).
#define SEARCH_BLOCKS_PER_SM(R) ((R) > 16 ? 4 : 5)
#ifndef FULL_MASK
#define FULL_MASK 0xffffffffu
#endif

__host__ __device__ constexpr int profile_stride(int R) {
    return ((R / 2 + 1) / 2 * 2) % 4 == 2 ? (R / 2 + 1) / 2 * 2 : (R / 2 + 1) / 2 * 2 + 2;
}

// 4-byte words between two threads' kept rows (after the profile): a half's R rows, 16 bits each, for both
// halves is R words; one more makes the stride odd, so that the lanes' stores fall in distinct banks.
__host__ __device__ constexpr int kept_stride(int R) { return R + 1; }

__device__ __forceinline__ int half16(unsigned x, int half) { return (int)(short)(x >> (16 * half)); }
__device__ __forceinline__ unsigned pack16(int low, int high) {
    return (unsigned)(low & 0xffff) | ((unsigned)high << 16);
}

// a + b in each signed 16-bit half (VIADD.16x2). Not __vadd2: its unsigned add.u16x2 cost a register copy (a PRMT)
// before each use as a signed operand in this kernel's SASS, 28 a step of 16 rows.
__device__ __forceinline__ unsigned add16x2(unsigned a, unsigned b) {
    unsigned sum;
    asm("add.s16x2 %0, %1, %2;" : "=r"(sum) : "r"(a), "r"(b));
    return sum;
}

// Two words of shared memory at a 32-bit shared address (one LDS.64 with the offset as its immediate).
__device__ __forceinline__ uint2 load_shared_pair(unsigned address) {
    uint2 words;
    asm("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(words.x), "=r"(words.y) : "r"(address));
    return words;
}

// Whether (value, column, row) comes before (best, best_column, best_row) in the order of ends above.
__device__ __forceinline__ bool earlier_end(int value, int column, int row, int best, int best_column, int best_row) {
    return value > best || (value == best && (column < best_column || (column == best_column && row < best_row)));
}

// Block unit u: query unit_query[u] against the targets of plan pairs sorted_pairs[unit_first[u] + 2 w + half]
// of its warps w, those before unit_end[u] (pair p aligns target plan[2 p] with the query); out[3 p ...] gets
// each pair's score, target end and query end (0-based; 0, 0 when no cell beats 0). Without ENDS (a search of
// scores alone) out[p] gets the score: each lane keeps a running maximum of its cells in the column maxima's
// chain (R/2 three-way maxima a step) and notes nothing, 12% faster on CUDASW++'s queries (bench/RESULTS.md,
// session 29). table[a * size + b] scores target code a against query code b; minus_open and minus_extend are
// -open and -extend in both halves. Blocks take units in turn (gridDim.x apart), so the border holds one row per
// resident warp; queries of one chunk (m <= 32 R) never touch it.
template <int R, bool ENDS>
__global__ void __launch_bounds__(32 * SEARCH_WARPS, SEARCH_BLOCKS_PER_SM(R)) local16(
    const unsigned char* __restrict__ t_codes, const long long* __restrict__ t_off,
    const unsigned char* __restrict__ q_codes, const long long* __restrict__ q_off,
    const long long* __restrict__ plan, const long long* __restrict__ sorted_pairs,
    const long long* __restrict__ unit_query, const long long* __restrict__ unit_first,
    const long long* __restrict__ unit_end, int n_units,
    const int* __restrict__ table, int size, unsigned minus_open, unsigned minus_extend,
    unsigned* __restrict__ border, long long border_stride, int* __restrict__ out) {
    static_assert(R % 2 == 0, "rows are kept two to a word");
    constexpr int STRIDE = profile_stride(R);
    constexpr int LOADS = (R + 3) / 4;  // 8-byte loads of a lane's rows
    extern __shared__ unsigned profile[];
    const int lane = threadIdx.x & 31;
    const int warp_in_block = threadIdx.x >> 5;
    // The border: the last chunk's bottom row, (H, F) of column j at entry j of the warp's row of border_stride
    // entries, written by lane 31 and read by lane 0; at step s both reach their own column j = s - lane + 1
    // through lane_border[s].
    uint2* lane_border = reinterpret_cast<uint2*>(border) +
                         ((long long)blockIdx.x * SEARCH_WARPS + warp_in_block) * border_stride + 1 - lane;
    const unsigned profile_at = (unsigned)__cvta_generic_to_shared(profile) + lane * STRIDE * 4u;
    // This thread's kept rows: half h's rows r and r + 1 in word h R/2 + r/2 (a PRMT of the two rows' words).
    unsigned* kept = profile + (size + 1) * 32 * STRIDE + threadIdx.x * kept_stride(R);
    for (int u = blockIdx.x; u < n_units; u += gridDim.x) {
        const long long query = unit_query[u];
        const unsigned char* __restrict__ q = q_codes + q_off[query];
        const int m = (int)(q_off[query + 1] - q_off[query]);
        const long long slot = unit_first[u] + 2 * warp_in_block, end = unit_end[u];
        const long long pair_a = slot < end ? sorted_pairs[slot] : -1;
        const long long pair_b = slot + 1 < end ? sorted_pairs[slot + 1] : -1;
        const long long id_a = pair_a >= 0 ? plan[2 * pair_a] : -1, id_b = pair_b >= 0 ? plan[2 * pair_b] : -1;
        const unsigned char* __restrict__ ta = id_a >= 0 ? t_codes + t_off[id_a] : t_codes;
        const unsigned char* __restrict__ tb = id_b >= 0 ? t_codes + t_off[id_b] : t_codes;
        const int n_a = id_a >= 0 ? (int)(t_off[id_a + 1] - t_off[id_a]) : 0;
        const int n_b = id_b >= 0 ? (int)(t_off[id_b + 1] - t_off[id_b]) : 0;
        const int n = max(n_a, n_b);
        // This lane's best end so far, per half: score, column, row (1-based); (0, 1, 1) when no cell beats 0.
        int best[2] = {0, 0}, best_column[2] = {1, 1}, best_row[2] = {1, 1};
        for (int row0 = 0; row0 < m; row0 += 32 * R) {
            __syncthreads();  // every warp is done reading the last chunk's profile
            short* profile16 = reinterpret_cast<short*>(profile);
            for (int at = threadIdx.x; at < (size + 1) * 32 * R; at += blockDim.x) {
                const int letter = at / (32 * R), row = at % (32 * R), i = row0 + row;
                const int value = letter < size && i < m ? table[letter * size + q[i]] : PAD16;
                profile16[((letter * 32 + row / R) * STRIDE) * 2 + row % R] = (short)value;
            }
            __syncthreads();
            if (n == 0) continue;
            const int first = row0 + lane * R;  // rows above this lane's strip
            const bool last_chunk = row0 + 32 * R >= m;
            unsigned h[R], e[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                h[r] = 0;
                e[r] = minus_open;
            }
            unsigned bottom = 0, bottom_f = minus_open, above_prev = 0;
            // What a lane's column maximum must beat to be noted: its own best of this chunk so far, and
            // one below the warp's best of earlier chunks and at its exchanges (a lower one can never be the
            // pair's end).
            // Without ENDS, bar is the lane's running maximum, from the warp's best of earlier chunks.
            unsigned bar = ENDS ? pack16(max(best[0] - 1, 0), max(best[1] - 1, 0)) : pack16(best[0], best[1]);
            for (int offset = 16; offset > 0; offset >>= 1)
                bar = __vmaxs2(bar, __shfl_xor_sync(FULL_MASK, bar, offset));
            int chunk_value[2] = {0, 0}, chunk_column[2] = {0, 0}, chunk_row[2] = {0, 0};
            const unsigned char* __restrict__ from_a = ta - lane;  // t[j - 1] = from_a[s]
            const unsigned char* __restrict__ from_b = tb - lane;
            // No step tests whether its lane is inside the target: outside (j < 1 before a lane starts, j > n
            // after it ends) the letters are the padding's, and a lane that has not started holds the state of
            // row and column 0 (H = 0, E = F = -open), which a padding column leaves as it is (H = max(0 + PAD16,
            // -open, -open, 0), the gap states max(-open - extend, 0 - open)), so it starts at column 1 as if from
            // column 0; after the end its cells are padding cells. Lane 0 takes the border only inside the
            // target, lane 31 writes it only there.
#pragma unroll 2
            for (int s = 0; s < n + 31; ++s) {
                const int j = s - lane + 1;
                unsigned above = __shfl_up_sync(FULL_MASK, bottom, 1);
                unsigned above_f = __shfl_up_sync(FULL_MASK, bottom_f, 1);
                const bool inside = (unsigned)(j - 1) < (unsigned)n;
                if (lane == 0) {
                    const uint2 cell = row0 > 0 && inside ? lane_border[s] : make_uint2(0, minus_open);
                    above = cell.x;
                    above_f = cell.y;
                }
                unsigned diag = above_prev;
                above_prev = above;
                const unsigned letter_a = (unsigned)(j - 1) < (unsigned)n_a ? from_a[s] : size;
                const unsigned letter_b = (unsigned)(j - 1) < (unsigned)n_b ? from_b[s] : size;
                const unsigned at_a = profile_at + letter_a * (128u * STRIDE);
                const unsigned at_b = profile_at + letter_b * (128u * STRIDE);
                unsigned f = above_f;
#pragma unroll
                for (int w = 0; w < LOADS; ++w) {
                    const uint2 a = load_shared_pair(at_a + 8 * w), b = load_shared_pair(at_b + 8 * w);
                    const unsigned words_a[2] = {a.x, a.y}, words_b[2] = {b.x, b.y};
#pragma unroll
                    for (int r = 4 * w; r < 4 * w + 4 && r < R; ++r) {
                        const unsigned wa = words_a[(r >> 1) & 1], wb = words_b[(r >> 1) & 1];
                        const unsigned score = (r & 1) ? __byte_perm(wa, wb, 0x7632) : __byte_perm(wa, wb, 0x5410);
                        // The sum last: with it first, ptxas fuses the addition into a maximum (VIADDMNMX.RELU,
                        // then VIMNMX), four maxima a word where VIADD + VIMNMX3 are three.
                        const unsigned value = __vimax3_s16x2_relu(e[r], f, add16x2(diag, score));
                        const unsigned gap = add16x2(value, minus_open);
                        e[r] = __viaddmax_s16x2(e[r], minus_extend, gap);
                        f = __viaddmax_s16x2(f, minus_extend, gap);
                        diag = h[r];
                        h[r] = value;
                    }
                }
                bottom = h[R - 1];
                bottom_f = f;
                if (!last_chunk && lane == 31 && inside) lane_border[s] = make_uint2(bottom, bottom_f);
                if constexpr (!ENDS) {
#pragma unroll
                    for (int r = 0; r < R; r += 2) bar = r + 1 < R ? __vimax3_s16x2(bar, h[r], h[r + 1])
                                                                  : __vmaxs2(bar, h[r]);
                } else {
                    unsigned column_max = h[0];
#pragma unroll
                    for (int r = 1; r < R; r += 2)
                        column_max = r + 1 < R ? __vimax3_s16x2(column_max, h[r], h[r + 1])
                                               : __vmaxs2(column_max, h[r]);
                    // One maximum and one comparison for both halves, which are told apart only in the branch.
                    // (Not __vibmax_s16x2's predicates: with them this kernel's ends came out wrong on an H200.)
                    const unsigned raised = __vmaxs2(column_max, bar);
                    if (raised != bar) {  // a new best that could be the pair's end: its rows kept, not searched
#pragma unroll
                        for (int half = 0; half < 2; ++half) {
                            const int wanted = half16(column_max, half);
                            if (wanted <= half16(bar, half)) continue;
                            chunk_value[half] = wanted;
                            chunk_column[half] = j;
#pragma unroll
                            for (int r = 0; r < R; r += 2)
                                kept[half * (R / 2) + r / 2] = __byte_perm(h[r], h[r + 1], half ? 0x7632 : 0x5410);
                        }
                    }
                    bar = raised;
                    if ((s & 31) == 31) {  // the warp's best so far raises what a lane's new best must reach
                        unsigned warp_best = bar;
#pragma unroll
                        for (int offset = 16; offset > 0; offset >>= 1)
                            warp_best = __vmaxs2(warp_best, __shfl_xor_sync(FULL_MASK, warp_best, offset));
                        bar = __vmaxs2(bar, add16x2(warp_best, 0xffffffffu));
                    }
                }
            }
            if (!last_chunk) __syncwarp();  // the border row is written before the next chunk reads it
            if constexpr (!ENDS) {
#pragma unroll
                for (int half = 0; half < 2; ++half) best[half] = half16(bar, half);
                continue;
            }
#pragma unroll
            for (int half = 0; half < 2; ++half) {  // the first row holding each noted maximum, in its kept column
                if (chunk_value[half] > 0) {
                    int row = R;
#pragma unroll
                    for (int r = R - 1; r >= 0; --r)
                        row = half16(kept[half * (R / 2) + r / 2], r & 1) == chunk_value[half] ? r : row;
                    chunk_row[half] = first + row + 1;
                }
            }
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int value = chunk_value[half];
                if (value > 0 &&
                    earlier_end(value, chunk_column[half], chunk_row[half], best[half], best_column[half],
                                best_row[half])) {
                    best[half] = value;
                    best_column[half] = chunk_column[half];
                    best_row[half] = chunk_row[half];
                }
            }
        }
        // The warp's best end per half, lanes merged in the same order.
#pragma unroll
        for (int half = 0; half < 2; ++half) {
#pragma unroll
            for (int offset = 16; offset > 0; offset >>= 1) {
                const int value = __shfl_xor_sync(FULL_MASK, best[half], offset);
                const int column = __shfl_xor_sync(FULL_MASK, best_column[half], offset);
                const int row = __shfl_xor_sync(FULL_MASK, best_row[half], offset);
                if (earlier_end(value, column, row, best[half], best_column[half], best_row[half])) {
                    best[half] = value;
                    best_column[half] = column;
                    best_row[half] = row;
                }
            }
        }
        if (lane == 0) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const long long pair = half == 0 ? pair_a : pair_b;
                if (pair < 0) continue;
                if constexpr (!ENDS) {
                    out[pair] = best[half];
                    continue;
                }
                out[3 * pair] = best[half];
                out[3 * pair + 1] = best_column[half] - 1;
                out[3 * pair + 2] = best_row[half] - 1;
            }
        }
    }
}
