// SPDX-License-Identifier: Apache-2.0
/*
 * attnmeta — per-step attention metadata for LLM serving, built on the GPU
 * in one launch, with no host synchronisation, safe to record in CUDA/HIP
 * graphs, with identical results on CUDA, HIP and the CPU backend.
 *
 * This is the only header a user includes. It pulls in no vendor header:
 * streams are `void *` (a cudaStream_t or hipStream_t; ignored on the CPU).
 *
 * Semantics: docs/contract.md, the specification every backend meets.
 *
 * Conventions
 *  - Every call returns an attnmeta_status. On any error nothing is written
 *    to any output buffer and attnmeta_last_error() says what was wrong.
 *  - Pointers named "device" are memory the context's backend reads or
 *    writes: device memory for CUDA/HIP, host memory for the CPU backend.
 *  - No call allocates device memory, synchronises, or reads device memory
 *    back to the host; attnmeta_build_step() may be captured into a graph.
 *  - The library never aborts, exits or prints.
 */
#ifndef ATTNMETA_ATTNMETA_H
#define ATTNMETA_ATTNMETA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The release: the one place it is set (CMake, the soname and the wheel read it). */
#define ATTNMETA_VERSION_MAJOR 0
#define ATTNMETA_VERSION_MINOR 3
#define ATTNMETA_VERSION_PATCH 0
/* Single integer, comparable: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define ATTNMETA_VERSION \
  (ATTNMETA_VERSION_MAJOR * 10000 + ATTNMETA_VERSION_MINOR * 100 + ATTNMETA_VERSION_PATCH)

#if defined(ATTNMETA_BUILDING) && defined(__GNUC__)
#  define ATTNMETA_API __attribute__((visibility("default")))
#else
#  define ATTNMETA_API
#endif

/* Status codes. The numbers are fixed forever; new codes are appended. */
typedef enum attnmeta_status {
  ATTNMETA_OK = 0,
  ATTNMETA_ERR_INVALID_ARGUMENT = 1,  /* a value outside its documented range */
  ATTNMETA_ERR_NULL_POINTER = 2,      /* a required pointer is NULL */
  ATTNMETA_ERR_CAPACITY = 3,          /* capacity < num_tokens */
  ATTNMETA_ERR_STRIDE = 4,            /* a row stride smaller than the row */
  ATTNMETA_ERR_OVERFLOW = 5,          /* sizes whose byte offsets overflow */
  ATTNMETA_ERR_UNKNOWN_BACKEND = 6,   /* backend kind not known */
  ATTNMETA_ERR_BACKEND_UNAVAILABLE = 7, /* backend module not found or not loadable */
  ATTNMETA_ERR_NO_DEVICE = 8,         /* backend present, no usable device */
  ATTNMETA_ERR_UNSUPPORTED_ARCH = 9,  /* device architecture not built into the module */
  ATTNMETA_ERR_ABI_MISMATCH = 10,     /* backend module built for another ABI */
  ATTNMETA_ERR_LAUNCH = 11,           /* the device runtime refused the launch */
  ATTNMETA_ERR_NOT_SUPPORTED = 12,    /* valid request this backend does not do */
  ATTNMETA_ERR_OUT_OF_MEMORY = 13,    /* host allocation failed */
  ATTNMETA_ERR_INVALID_CONTEXT = 14,  /* NULL context */
  ATTNMETA_ERR_INTERNAL = 15
} attnmeta_status;

typedef enum attnmeta_backend {
  ATTNMETA_BACKEND_AUTO = 0, /* CUDA, then HIP, then CPU; env ATTNMETA_BACKEND overrides
                                (ignored in set-user-ID / set-group-ID programs) */
  ATTNMETA_BACKEND_CPU = 1,
  ATTNMETA_BACKEND_CUDA = 2,
  ATTNMETA_BACKEND_HIP = 3
} attnmeta_backend;

/* Bits OR-ed into the optional device error word by the kernels when they
 * meet hostile device data. Outputs stay in bounds whatever the data.
 * Flags 1-4 are checked whenever an error word is given; 8 and 16 when a
 * wanted product reads seq_lens (seq_lens_out, global_seq_lens_out,
 * positions, slot_mapping, the DeepSeek-V3.2/V4 products); 32, 64 and 128
 * only while a product computes slots (slot_mapping, a compressed group's
 * slot_mapping, SWA rows, global C128A rows; 128 also SWA lengths), whose
 * entry is then -1. */
enum attnmeta_error_flag {
  ATTNMETA_FLAG_QSL_FIRST_NONZERO = 1 << 0,  /* query_start_loc[0] != 0 */
  ATTNMETA_FLAG_QSL_DECREASING = 1 << 1,     /* query_start_loc[r+1] < query_start_loc[r] */
  ATTNMETA_FLAG_TOTAL_OUT_OF_RANGE = 1 << 2, /* query_start_loc[R] < 0 or > num_tokens */
  ATTNMETA_FLAG_SEQ_LEN_NEGATIVE = 1 << 3,   /* seq_lens[r] < 0 (a product reads seq_lens) */
  ATTNMETA_FLAG_SEQ_LEN_LT_QLEN = 1 << 4,    /* seq_lens[r] < query length of r (idem) */
  ATTNMETA_FLAG_BLOCK_OUT_OF_TABLE = 1 << 5, /* a slot's block index outside [0, cols) */
  ATTNMETA_FLAG_BLOCK_ID_NEGATIVE = 1 << 6,  /* the block-table entry of a slot is < 0 (in a
                                                DCP peer view: outside [0, peer_blocks)) */
  ATTNMETA_FLAG_POSITION_NEGATIVE = 1 << 7,  /* a valid token's position is < 0 where a slot
                                                or an SWA row needs it */
  ATTNMETA_FLAG_WORKSPACE_OUT_OF_RANGE = 1 << 8, /* top-k: a prefill_req entry >= num_prefill */
  ATTNMETA_FLAG_SLOT_OUT_OF_RANGE = 1 << 9,  /* an int32 slot output would be outside
                                                 [0, INT32_MAX] (the entry is -1) */
  ATTNMETA_FLAG_POOL_INDEX_OUT_OF_RANGE = 1 << 10, /* pool: a req_pool_indices entry outside
                                                      [0, pool_rows) (its entries are -1) */
  ATTNMETA_FLAG_SCAN_OVERFLOW = 1 << 11      /* pool: a prefix sum above INT32_MAX (stored as
                                                 INT32_MAX) */
};

/* Compressed KV-cache groups a step carries (DeepSeek-V4: ratio 4 and 128,
 * plus 32 on V4.1). */
#define ATTNMETA_MAX_COMPRESSED_GROUPS 4

/* Modes of the sliding-window rows (contract section 7). */
enum attnmeta_swa_mode {
  ATTNMETA_SWA_CAUSAL = 0,    /* each token sees the window ending at its position */
  ATTNMETA_SWA_NON_CAUSAL = 1 /* a draft block sees its whole block */
};

/* Modes of the heavily compressed (C128A) rows (contract section 8). */
enum attnmeta_c128a_mode {
  ATTNMETA_C128A_GLOBAL = 0, /* global KV slots through the group's block table */
  ATTNMETA_C128A_LOCAL = 1,  /* request-local compressed indices (prefill) */
  ATTNMETA_C128A_MIXED = 2   /* tokens before c128a_num_decode_tokens global (decode),
                                the rest request-local into c128a_prefill_rows */
};

/* Orders of the indexer's compressed lengths under DCP (contract section 5a);
 * without DCP both give the same lengths. */
enum attnmeta_indexer_mode {
  ATTNMETA_INDEXER_DECODE = 0, /* localise each token's length, then divide it */
  ATTNMETA_INDEXER_PREFILL = 1 /* divide, then localise the compressed length */
};

/*
 * One compressed KV-cache group of a step (contract section 5): every
 * `ratio` positions fold into one compressed row. Part of attnmeta_step
 * (compressed_groups[]); a group whose outputs are both NULL is not built.
 * The step's DCP settings apply; with dcp_world_size > 1, block_size must be
 * a multiple of dcp_interleave.
 */
typedef struct attnmeta_compressed_group {
  const int32_t *block_table;     /* [R][block_table_stride], the group's own table
                                     (may be NULL if cols == 0) */
  int32_t block_table_cols;       /* cols >= 0 */
  int32_t ratio;                  /* >= 1 positions per compressed row */
  int64_t block_table_stride;     /* >= cols */
  int32_t block_size;             /* >= 1 compressed rows per block (DSV4: 256 / ratio) */
  int32_t reserved;               /* padding, ignored */
  int64_t *slot_mapping;          /* [C]  compressed slot of the row a token completes, else -1;
                                     -1 in [T, C) */
  int32_t *seq_lens_out;          /* [R]  optional: max(seq_lens[r], 0) / ratio */
} attnmeta_compressed_group;


typedef struct attnmeta_context attnmeta_context;

/*
 * One decode step. Fill with attnmeta_step_init() and set what you need;
 * any output left NULL is not built. All pointers are device pointers.
 * The struct grows only at its end; struct_size tells the library which
 * members the caller has (docs/abi.md).
 * Sizes are element counts; strides are in elements.
 *
 * R = num_reqs, T = num_tokens (padded), C = capacity (>= T),
 * actual = query_start_loc[R], read on the device.
 */
typedef struct attnmeta_step {
  size_t struct_size; /* the caller's sizeof(attnmeta_step), set by attnmeta_step_init */

  /* ---- inputs ---- */
  const int32_t *query_start_loc; /* [R + 1], required */
  int32_t num_reqs;               /* R >= 0 */
  int32_t num_tokens;             /* T >= 0 */
  int32_t capacity;               /* C >= T; length of seq_lens_out and slot_mapping */
  const int32_t *seq_lens;        /* [R], KV length incl. new tokens; needed by
                                     seq_lens_out, global_seq_lens_out, positions, slot_mapping */
  const int32_t *block_table;     /* [R][block_table_stride], needed by
                                     block_table_out and slot_mapping (may be NULL if cols == 0) */
  int32_t block_table_cols;       /* cols >= 0 */
  int64_t block_table_stride;     /* >= cols */
  int32_t num_mapped;             /* token map: tokens to map; < 0 means `actual` */
  int32_t block_size;             /* slot mapping: KV block size >= 1; no default, must be set */
  int32_t dcp_world_size;         /* W >= 1 (1 = no decode context parallelism) */
  int32_t dcp_rank;               /* 0 <= k < W */
  int32_t dcp_interleave;         /* I >= 1 */

  /* ---- outputs (NULL = not wanted) ---- */
  int32_t *token_to_req;          /* [T]   contract section 1 */
  int32_t *seq_lens_out;          /* [C]   causal (DCP-local if W > 1) length; 0 in [T, C) */
  int32_t *global_seq_lens_out;   /* [T]   causal global length (section 2a) */
  int32_t *block_table_out;       /* [T][block_table_out_stride] */
  int64_t block_table_out_stride; /* >= cols */
  int32_t *decode_lens_out;       /* [T]   all 1 */
  int32_t *req_indices_out;       /* [T]   request, or R + (t - actual) for padding */
  int32_t *per_req_lens_out;      /* [R]   query length of each request */
  int64_t *positions;             /* [T]   0-based position, 0 for padding */
  int64_t *slot_mapping;          /* [C]   KV slot, -1 for padding, foreign DCP rank, [T, C) */
  int32_t *error_word;            /* [1]   optional; flags are OR-ed in, never cleared */

  /* ---- DeepSeek-V3.2/V4 products of the same launch (contract sections
   * 5, 7, 8); they read seq_lens; all zero (not built) after
   * attnmeta_step_init ---- */
  attnmeta_compressed_group compressed_groups[ATTNMETA_MAX_COMPRESSED_GROUPS];

  /* sliding-window attention rows (section 7), over the SWA group's table */
  const int32_t *swa_block_table; /* [R][swa_block_table_stride] (NULL if cols == 0) */
  int64_t swa_block_table_stride; /* >= cols */
  int32_t swa_block_table_cols;   /* >= 0 */
  int32_t swa_block_size;         /* >= 1 */
  int32_t swa_window;             /* >= 1 positions a token sees */
  int32_t swa_width;              /* >= swa_window: entries per row */
  int32_t swa_mode;               /* attnmeta_swa_mode */
  int32_t swa_reserved;           /* padding, ignored */
  int32_t *swa_indices;           /* [T][swa_indices_stride]: slots, then -1 up to swa_width */
  int64_t swa_indices_stride;     /* >= swa_width */
  int32_t *swa_lens;              /* [C]  entries of each row; 0 for padding and [T, C) */

  /* heavily compressed (C128A) attention rows (section 8) */
  const int32_t *c128a_block_table; /* [R][c128a_block_table_stride]; global mode only */
  int64_t c128a_block_table_stride; /* >= cols */
  int32_t c128a_block_table_cols;   /* >= 0 */
  int32_t c128a_ratio;              /* >= 1 */
  int32_t c128a_block_size;         /* >= 1 (2 for ratio 128); a multiple of dcp_interleave
                                       when dcp_world_size > 1 */
  int32_t c128a_width;              /* >= 0: the longest compressed length a row holds */
  int32_t c128a_mode;               /* attnmeta_c128a_mode */
  int32_t c128a_reserved;           /* padding, ignored */
  int32_t *c128a_rows;              /* [T][c128a_rows_stride] */
  int64_t c128a_rows_stride;        /* >= c128a_width */
  int32_t *c128a_lens;              /* [C]  valid entries of each row; 0 in [T, C) */

  /* ---- launch (appended: read only when struct_size covers it) ---- */
  uint32_t launch_flags;          /* ATTNMETA_LAUNCH_* bits; 0 = an ordinary launch */

  /* ---- appended in 0.3.0: read only when struct_size covers them ---- */
  /* the indexer's compressed lengths (section 5a) */
  int32_t *indexer_lens_out;      /* [C]  per token; 0 for padding and [T, C) */
  int32_t indexer_ratio;          /* >= 1 positions per compressed key */
  int32_t indexer_mode;           /* attnmeta_indexer_mode */
  /* SWA rows (section 7): the step's KV slot of each token, as the engine
   * holds it (its slot_mapping), or NULL (every token before `actual`
   * counts). A token whose slot is < 0 gets length 0 and a row of -1 */
  const int64_t *swa_token_slots; /* [T] or NULL */
  /* C128A rows (section 8), mixed mode: tokens [0, D) are decode tokens
   * (global rows into c128a_rows), tokens [D, T) prefill tokens, whose
   * request-local row goes to c128a_prefill_rows[t - D]; rows [T - D, T)
   * of c128a_prefill_rows and rows [D, T) of c128a_rows are -1 */
  int32_t *c128a_prefill_rows;       /* [T][c128a_prefill_rows_stride], mixed mode only */
  int64_t c128a_prefill_rows_stride; /* >= c128a_width */
  int32_t c128a_num_decode_tokens;   /* D, 0 <= D <= num_tokens; mixed mode only */

  /* ---- appended after 0.3: PCP compressed slots (docs/contract.md section 5b) ---- */
  /* [T] or NULL. Set: every compressed group's slot_mapping[t] comes from
   * these logical slots (vLLM's get_pcp_compressed_slot_mapping) instead of
   * from the group's block table; needs dcp_world_size 1. */
  const int64_t *pcp_logical_slots;
  const int64_t *pcp_positions;   /* [T], with pcp_logical_slots: each token's position */
  int32_t pcp_logical_block_size; /* >= 1, with pcp_logical_slots; each group's
                                     block_size must be it / ratio, a whole number */

  /* ---- appended after 0.3: SWA rows in causal mode (docs/contract.md section 7) ---- */
  /* In-image bidirectional visibility (the DeepSeek-V4 vision model): [T] or
   * NULL, both or neither. Token t sees left[t] positions of its image before
   * it beyond its window, and right[t] after it (the engine's per-token
   * counts); swa_width must hold window + the model's image tokens. */
  const int32_t *swa_left_visible;
  const int32_t *swa_right_visible;
  /* [R] or NULL: request r's rows start at no position below
   * swa_replay_start[r] (bounded SWA replay); not with the two above */
  const int32_t *swa_replay_start;

  /* ---- appended after 0.3: every SWA group of the step in one launch (section 7) ---- */
  /* 0 or 1: one group (as before). G >= 2: swa_block_table holds G tables
   * of R rows, swa_block_table_group_stride elements apart, and swa_indices
   * G blocks of T rows, swa_indices_group_stride elements apart; group g's
   * rows read its own table. swa_lens is written once (the same for every
   * group). Both group strides cover a group's rows: >= (rows - 1) x row
   * stride + columns. */
  int64_t swa_block_table_group_stride;
  int64_t swa_indices_group_stride;
  int32_t swa_groups;
} attnmeta_step;

/* attnmeta_step.launch_flags and attnmeta_topk.launch_flags. */
enum attnmeta_launch_flag {
  /* Early start: the step's kernel may begin while the kernel ahead of it
   * on the stream is still running, hiding its launch and its
   * input-independent work behind that kernel (CUDA programmatic dependent
   * launch, on GPUs of compute capability 9.0 and later; HIP, the CPU
   * backend and older GPUs ignore the flag and launch as usual). The
   * kernel reads no input, and writes nothing derived from one, before
   * the kernel ahead has finished and its writes are visible; but it
   * clears the tails [T, C) of seq_lens_out and slot_mapping at once, so
   * the kernel ahead must neither read nor write those two outputs (in a
   * serving step it is the kernel producing query_start_loc or seq_lens).
   * It also lets the kernel after it start early, where that kernel was
   * launched the same way (that kernel must wait likewise, e.g. with
   * cudaGridDependencySynchronize(), before reading this step's outputs).
   * Results are identical with and without the flag. The top-k
   * conversion's kernel (attnmeta_topk.launch_flags) waits before it
   * reads or writes anything at all, so any kernel may precede it: in a
   * sparse layer, the indexer's top-k ahead of it and the attention kernel
   * after it. */
  ATTNMETA_LAUNCH_EARLY_START = 1 << 0
};

/*
 * Per-layer sparse top-k conversion (docs/contract.md, "Top-k indices to
 * global KV slots"): each token's K request-local KV positions become
 * global cache slots through its request's block table. Fill with
 * attnmeta_topk_init() and set what you need. All pointers are device
 * pointers; sizes are element counts, strides in elements. The struct
 * grows only at its end, like attnmeta_step (docs/abi.md).
 *
 * T = num_tokens, K = topk_count, R = num_reqs, P = num_prefill.
 */
typedef struct attnmeta_topk {
  size_t struct_size; /* the caller's sizeof(attnmeta_topk), set by attnmeta_topk_init */

  /* ---- inputs ---- */
  const int32_t *topk;            /* [T][topk_stride] request-local positions, -1 = none */
  int64_t topk_stride;            /* >= K */
  int32_t num_tokens;             /* T >= 0 */
  int32_t topk_count;             /* K >= 1 */
  /* The token's request: exactly one of the two. */
  const int32_t *query_start_loc; /* [R + 1]: req(t) found on the device, as the step does;
                                     tokens at or past query_start_loc[R] are padding */
  const int32_t *req_id;          /* [T]: the request of each token, given */
  int32_t num_reqs;               /* R >= 0 */
  const int32_t *block_table;     /* [R][block_table_stride] (may be NULL if cols == 0) */
  int32_t block_table_cols;       /* cols >= 0 */
  int64_t block_table_stride;     /* >= cols */
  int32_t block_size;             /* bs >= 1: positions per block */
  int32_t stride_rows;            /* rows between consecutive blocks of a flat cache view;
                                     0 = block_size */
  int32_t dcp_world_size;         /* W >= 1 */
  int32_t dcp_rank;               /* 0 <= k < W */
  int32_t dcp_interleave;         /* I >= 1 */
  /* Optional prefill workspace: prefill tokens map into a workspace, not the cache. */
  const int32_t *prefill_req;     /* [T] or NULL: < 0 = decode token, else an index < P */
  const int32_t *workspace_starts; /* [P], needed with prefill_req when P > 0 */
  int32_t num_prefill;            /* P >= 0 */
  const int64_t *token_slot;      /* [T] or NULL: a token whose slot is < 0 counts 0 valid */

  /* ---- outputs ---- */
  int32_t *out;                   /* [T][out_stride], required */
  int64_t out_stride;             /* >= K */
  int32_t *valid_count;           /* [T] or NULL: valid entries of each row */
  int32_t compact;                /* 1: each row's valid slots first, in column order,
                                     then -1 (needs valid_count); 0: in place */
  int32_t *error_word;            /* [1] optional; flags are OR-ed in, never cleared */

  /* ---- DCP peer views (docs/contract.md 6c, 6d), appended after 0.3.0 ---- */
  int64_t peer_blocks;            /* S: blocks of one rank's segment of a rank-major peer view
                                     (padding included); 0 = no peer view. With S >= 1 decode
                                     entries of every rank become peer slots (6c) */
  const int32_t *peer_tables;     /* [W][R][peer_tables_stride]: rank o's table at
                                     o * peer_tables_owner_stride (6d) */
  int64_t peer_tables_stride;     /* >= peer_tables_cols */
  int64_t peer_tables_owner_stride; /* >= 0; 0 = one table for every rank */
  int32_t peer_tables_cols;       /* M >= 0: pages of each rank's table */
  int32_t peer_table_width;       /* >= 0: logical pages of each output row (W * M) */
  int32_t *peer_table_out;        /* [R][peer_table_out_stride] or NULL: the rotated peer
                                     table, built in the same launch (needs S >= 1) */
  int64_t peer_table_out_stride;  /* >= peer_table_width */

  /* ---- appended after 0.3.0 ---- */
  uint32_t launch_flags;          /* ATTNMETA_LAUNCH_* bits; 0 = an ordinary launch */
} attnmeta_topk;

/*
 * Index buffers of SGLang's attention backends built from its request pool
 * (docs/c_api.md, "SGLang's request pool"): each request row b < B reads
 * its pool row req_to_token[req_pool_indices[b]] from column kv_start_idx[b]
 * on, for lengths[b] tokens, into any subset of
 *  - kv_indices: the CSR slot list (create_flashinfer_kv_indices_triton):
 *    kv_indices[kv_indptr[b] + j] = row[s + j], j < lengths[b];
 *  - kv_indptr_out: kv_indptr_out[0] = 0, kv_indptr_out[b + 1] =
 *    kv_indptr_out[b] + max(lengths[b], 0), in the same launch (kv_indices
 *    is then placed by it, and kv_indptr must be NULL when kv_indices is
 *    given);
 *  - page_table: rows of pages (create_flashmla_kv_indices_triton):
 *    page_table[b][p] = row[s + p * page_size] / page_size for
 *    p < min(cdiv(lengths[b], page_size), page_table_width);
 *  - the members appended after 0.3.0 (below): lengths, their prefix sums
 *    clipped to a top-k, a token table and an SWA page table.
 * Nothing past those entries is written. Fill with attnmeta_pool_init()
 * and set what you need. All pointers are device pointers; sizes are
 * element counts, strides in elements. The struct grows only at its end.
 *
 * B = num_reqs, P = pool_rows, Wr = pool_cols, C = kv_indices_capacity.
 */
typedef struct attnmeta_pool {
  size_t struct_size; /* the caller's sizeof(attnmeta_pool), set by attnmeta_pool_init */

  /* ---- inputs ---- */
  const int32_t *req_to_token;      /* [P][req_to_token_stride] slot ids (SGLang's pool) */
  int64_t req_to_token_stride;      /* >= Wr */
  int32_t pool_rows;                /* P >= 0 */
  int32_t pool_cols;                /* Wr >= 0 */
  const int64_t *req_pool_indices;  /* [B]: the pool row of each request row */
  const int64_t *lengths;           /* [B]: tokens of each row (read as int32; < 0 = 0) */
  const int64_t *kv_start_idx;      /* [B] or NULL (0): the first column read (as int32) */
  int32_t num_reqs;                 /* B >= 0 */
  int32_t page_size;                /* ps >= 1: tokens per page of page_table */
  const int32_t *kv_indptr;         /* [B + 1]: where each row's slots go in kv_indices */

  /* ---- outputs (each optional) ---- */
  int32_t *kv_indices;              /* [C] the CSR slot list */
  int64_t kv_indices_capacity;      /* C >= 0: entries of kv_indices that may be written */
  int32_t *kv_indptr_out;           /* [B + 1] the prefix sum of max(lengths, 0) */
  int32_t *page_table;              /* [T][page_table_stride] (T = B unless rows_per_req) */
  int64_t page_table_stride;        /* >= page_table_width */
  int32_t page_table_width;         /* >= 0: pages a row holds */
  int32_t reserved;                 /* padding, ignored */
  int32_t *error_word;              /* [1] optional; flags are OR-ed in, never cleared */

  /* ---- appended after 0.3.0: page tables with cumulative lengths (FA3,
   * TRT-LLM MHA) and DSA metadata (docs/contract.md sections 12, 13).
   * Every length above is L = int32(lengths[b] + length_delta); L < 0
   * counts as 0 (flag 8). Rows of the tables and of the per-row outputs
   * are e = b * N + j, j < N (N = rows_per_req, 0 meaning 1), T = B * N,
   * or given by query_lens (below): each row of request b gets request
   * b's table. ---- */
  int32_t length_delta;             /* added to every length (SGLang's seq_len_delta) */
  int32_t rows_per_req;             /* N >= 0 (0: 1): the draft tokens of target verify */
  int32_t *cache_seqlens;           /* [B] max(L, 0) */
  int32_t *expanded_lens;           /* [T] max(L - N + j + 1, 0) */
  int32_t *topk_lens;               /* [T] expanded_lens clipped to topk (topk_pool) */
  int32_t *topk_indptr;             /* [T + 1] the prefix sum of topk_lens, leading 0 */
  int32_t topk;                     /* >= 1 with topk_lens or topk_indptr */
  int32_t topk_pool;                /* 0 or 1: min(x, topk); Q > 1: min(x/Q*Q, topk) + x%Q */
  int32_t *token_table;             /* [T][token_table_stride]: row[s + c], c < tokens */
  int64_t token_table_stride;       /* >= token_table_width */
  int32_t token_table_width;        /* >= 0: columns a row holds */
  int32_t length_cap;               /* >= 0: the tables read min(L, cap) tokens (0: L) */
  int32_t fill_to_width;            /* 0: live prefix only; 1: every table row to its width */
  int32_t reserved2;                /* padding, ignored */
  const int64_t *full_to_swa;       /* [swa_map_len] full slot -> SWA slot */
  int64_t swa_map_len;              /* >= 0 */
  int32_t *swa_page_table;          /* [T][swa_page_table_stride], page_table_width pages:
                                       full_to_swa[row[s + p * page_size]] / page_size */
  int64_t swa_page_table_stride;    /* >= page_table_width */
  /* draft-extend: request b has q_b = max(int32(query_lens[b]), 0) rows, from
   * row Q_b = q_0 + ... + q_(b-1); rows at or past T = num_rows are dropped
   * (flag 4), and row j of b sees max(L - q_b + j + 1, 0) tokens */
  const int64_t *query_lens;        /* [B] or NULL (rows_per_req rows a request) */
  int32_t *query_indptr_out;        /* [B + 1] 0, then the prefix sums of q_b */
  int32_t num_rows;                 /* T >= 0 when query_lens is given */
  int32_t reserved3;                /* padding, ignored */
  /* EAGLE's multi-step draft decode (docs/contract.md section 14; SGLang's
   * generate_draft_decode_kv_indices): for each step i < S, branch k < K of
   * request b: its L tokens, then i + 1 draft slots; built alone (no other
   * output with draft_steps >= 1); lengths as above, kv_start_idx unused */
  int32_t draft_steps;              /* S in [0, 1024]; 0: no draft lists */
  int32_t draft_topk;               /* K in [1, 1024] with draft_steps */
  const int64_t *draft_positions;   /* [B * K] (read as int32; < 0 = 0): draft_kv_indptr's */
  int32_t *draft_kv_indices;        /* [S][draft_kv_indices_stride]: each step's slot list */
  int64_t draft_kv_indices_width;   /* W >= 0: entries of a step row that may be written */
  int64_t draft_kv_indices_stride;  /* >= W */
  int32_t *draft_kv_indptr;         /* [S][draft_kv_indptr_stride]: B * K + 1 entries a step */
  int64_t draft_kv_indptr_stride;   /* >= B * K + 1 */
  /* Decode context parallel (docs/contract.md section 15; SGLang's
   * create_triton_kv_indices_for_dcp_triton, create_mla_kv_page_table_for_dcp):
   * rank k of W keeps the positions x of a row with (x / I) % W == k. The
   * lengths are then the rank's own counts (SGLang's get_dcp_lens); entry j
   * of kv_indices, token_table or page p * page_size of page_table reads the
   * j-th kept position from kv_start_idx on, and writes its slot v as the
   * rank-local slot (v / (W * I)) * I + v % I (v < 0: -1, flag 64). Not with
   * swa_page_table or the draft lists. */
  int32_t dcp_world_size;           /* W in [0, 65536] (0 or 1: off) */
  int32_t dcp_rank;                 /* k in [0, W) */
  int32_t dcp_interleave;           /* I in [0, 65536] (0: 1): positions a run */
  int32_t reserved4;                /* padding, ignored */
  /* 0: a table row per query row (above); 1: one table row per request
   * (T = B) while query_indptr_out still sums the query rows (query_lens,
   * or rows_per_req a request): SGLang's FA3 draft_extend_set_metadata,
   * TRT-LLM MHA's q_mode 1 and 2. Not with expanded_lens, topk_lens,
   * topk_indptr, num_rows. */
  int32_t query_rows;               /* 0 or 1 */
  int32_t reserved5;                /* padding, ignored */
} attnmeta_pool;

/* ---- version ---- */
ATTNMETA_API int attnmeta_version(void);                 /* ATTNMETA_VERSION of the library */
ATTNMETA_API const char *attnmeta_version_string(void);  /* "0.3.0" */
/* The source commit the library was built from: a short git id, with
 * "-dirty" when the checkout had changes, or "unknown" (built outside a git
 * checkout). Since 0.2.0. */
ATTNMETA_API const char *attnmeta_build_commit(void);

/* ---- status text ---- */
ATTNMETA_API const char *attnmeta_status_string(attnmeta_status status);
ATTNMETA_API const char *attnmeta_backend_name(attnmeta_backend kind);
/* Writes a ", "-separated description of `flags` into buf (always NUL-terminated
 * when size > 0) and returns the length the full text needs, like snprintf. */
ATTNMETA_API size_t attnmeta_error_flags_describe(int32_t flags, char *buf, size_t size);

/* ---- contexts ---- */
/* Opens a context on `device` of backend `kind`. On failure *out is NULL and
 * attnmeta_open_error() returns the message (thread-local). */
ATTNMETA_API attnmeta_status attnmeta_open(attnmeta_context **out, attnmeta_backend kind, int device);
ATTNMETA_API const char *attnmeta_open_error(void);
ATTNMETA_API attnmeta_status attnmeta_close(attnmeta_context *ctx); /* NULL is fine */
ATTNMETA_API attnmeta_backend attnmeta_context_backend(const attnmeta_context *ctx);
ATTNMETA_API int attnmeta_context_device(const attnmeta_context *ctx);
/* Device description, e.g. "NVIDIA H200 (sm_90, SASS sm_90)" (the CUDA backend
 * adds which code the driver runs: machine code, or "PTX JIT from compute_XY")
 * or "host CPU". */
ATTNMETA_API const char *attnmeta_context_device_name(const attnmeta_context *ctx);
/* Message of the last failed call on ctx made by the calling thread ("" after
 * a success). Kept per thread, so threads sharing a context never overwrite
 * each other's message; valid until the thread's next call on any context. */
ATTNMETA_API const char *attnmeta_last_error(const attnmeta_context *ctx);

/* Launch-shape overrides, for tests and tuning. Every kernel is correct for
 * any block >= 1 and grid >= 1; automatic choices are the fast ones. */
typedef struct attnmeta_launch_config {
  int block;  /* threads per block; 0 = automatic. The CPU backend runs one
                 thread per block: 0 or 1 there */
  int grid;   /* blocks; 0 = automatic. Reduced to at most 2^31 threads
                 in all (grid x block); the CPU backend runs no more blocks
                 than have work */
  int stage;  /* stage the boundaries in block-shared memory when they fit
                 (4095 requests on a GPU; 1 KiB on the CPU backend, whose
                 stage is on the calling thread's stack): -1 = automatic
                 (currently never: measured slower), 0 = never, 1 = whenever
                 they fit */
  int vector; /* 16-byte block-table copies: -1 = automatic (rows that all
                 start on 16 bytes; unaligned rows realigned in registers
                 when wider than 1024 columns), 0 = never, 1 = whenever
                 possible (unaligned rows of 11 columns and more realigned) */
  int lanes;  /* threads sharing one token's block-table row; 0 = automatic.
                 A block is lanes x (block / lanes) threads */
} attnmeta_launch_config;

/* {0, 0, -1, -1, 0}: every choice automatic. */
ATTNMETA_API attnmeta_launch_config attnmeta_launch_config_default(void);
/* Applies `config` to later calls on ctx; NULL restores the defaults. */
ATTNMETA_API attnmeta_status attnmeta_set_launch_config(attnmeta_context *ctx,
                                                        const attnmeta_launch_config *config);

/* ---- backends ---- */
/* Number of devices `kind` finds (0 with no device or no module). */
ATTNMETA_API attnmeta_status attnmeta_backend_device_count(attnmeta_backend kind, int *count);
/* Architectures the backend module was built for, e.g. "sm_90 sm_100 compute_100"
 * (sm_XY: machine code; compute_XY: PTX the driver compiles for newer GPUs). */
ATTNMETA_API attnmeta_status attnmeta_backend_targets(attnmeta_backend kind, const char **targets);
/* The file `kind`'s backend was loaded from, as the dynamic loader names it:
 * the module for a GPU backend (loaded if not yet), this library itself for
 * the CPU backend. *path stays valid while the process runs; "" when the
 * loader cannot tell. Fails as attnmeta_backend_targets does. Since 0.2.0. */
ATTNMETA_API attnmeta_status attnmeta_backend_module_path(attnmeta_backend kind, const char **path);
/* The GPU driver's and runtime's versions `kind`'s backend runs on, as its
 * runtime numbers them: CUDA 1000 * major + 10 * minor (13000 is 13.0), HIP
 * 10000000 * major + 100000 * minor + patch; 0 for one the runtime cannot
 * tell (the driver, where none is installed). Loads the module if not yet;
 * needs no device. ATTNMETA_ERR_NOT_SUPPORTED, both 0, for the CPU backend
 * and for a module built before this query; else fails as
 * attnmeta_backend_targets does, both 0. Since 0.3.0. */
ATTNMETA_API attnmeta_status attnmeta_backend_runtime_versions(attnmeta_backend kind, int *driver,
                                                               int *runtime);

/* ---- operations ---- */
/* Initialises a step of `size` bytes, the caller's sizeof(attnmeta_step):
 * zeroes it, sets struct_size = size and the defaults num_mapped = -1,
 * dcp_world_size = 1, dcp_rank = 0, dcp_interleave = 1. block_size stays 0:
 * a step that wants slot_mapping must set it.
 * Writes nothing past `size` (nothing at all for a NULL step). Returns
 * ATTNMETA_OK when attnmeta_build_step accepts that size,
 * ATTNMETA_ERR_NOT_SUPPORTED when it is larger than this library's (the
 * caller was built against a newer header), ATTNMETA_ERR_INVALID_ARGUMENT
 * for a size no release had, ATTNMETA_ERR_NULL_POINTER for a NULL step. */
ATTNMETA_API attnmeta_status attnmeta_step_init_size(attnmeta_step *step, size_t size);
/* The entry point of 0.1: initialises a step of 0.1's size. Kept for
 * programs built against 0.1; the macro below passes the caller's size. */
ATTNMETA_API void attnmeta_step_init(attnmeta_step *step);
#define attnmeta_step_init(step) ((void)attnmeta_step_init_size((step), sizeof(attnmeta_step)))

/* Builds every output the step names in ONE kernel launch on `stream`.
 * No output may share a byte with an input or another output: overlaps
 * are refused (ATTNMETA_ERR_INVALID_ARGUMENT). */
ATTNMETA_API attnmeta_status attnmeta_build_step(attnmeta_context *ctx, const attnmeta_step *step,
                                                 void *stream);

/* Token -> request map (contract section 1): out[0, num_tokens). A thin
 * wrapper over attnmeta_build_step with only token_to_req wanted. */
ATTNMETA_API attnmeta_status attnmeta_token_to_req(attnmeta_context *ctx,
                                                   const int32_t *query_start_loc, int32_t num_reqs,
                                                   int32_t num_mapped, int32_t num_tokens,
                                                   int32_t *out, void *stream);

/* Initialises an operation of `size` bytes, the caller's
 * sizeof(attnmeta_topk): zeroes it, sets struct_size = size and the
 * defaults block_size = 1, stride_rows = 0 (= block_size),
 * dcp_world_size = 1, dcp_rank = 0, dcp_interleave = 1, compact = 0.
 * Returns as attnmeta_step_init_size does. */
ATTNMETA_API attnmeta_status attnmeta_topk_init_size(attnmeta_topk *op, size_t size);
#define attnmeta_topk_init(op) ((void)attnmeta_topk_init_size((op), sizeof(attnmeta_topk)))

/* Converts one layer's top-k indices in ONE kernel launch on `stream`.
 * No output (out, valid_count, error_word) may share a byte with an input
 * or another output: overlaps are refused (ATTNMETA_ERR_INVALID_ARGUMENT).
 * Only the bytes a buffer covers count: K entries of each of the T rows of
 * topk and out, the table's cols entries of each of its R rows. */
ATTNMETA_API attnmeta_status attnmeta_convert_topk(attnmeta_context *ctx, const attnmeta_topk *op,
                                                   void *stream);

/* Initialises an operation of `size` bytes, the caller's
 * sizeof(attnmeta_pool): zeroes it, sets struct_size = size and the
 * default page_size = 1. Returns as attnmeta_step_init_size does. */
ATTNMETA_API attnmeta_status attnmeta_pool_init_size(attnmeta_pool *op, size_t size);
#define attnmeta_pool_init(op) ((void)attnmeta_pool_init_size((op), sizeof(attnmeta_pool)))

/* Builds the pool operation's outputs in ONE kernel launch on `stream`.
 * No output may share a byte with an input or another output (refused with
 * ATTNMETA_ERR_INVALID_ARGUMENT); nothing is written on any error. */
ATTNMETA_API attnmeta_status attnmeta_build_pool_indices(attnmeta_context *ctx,
                                                         const attnmeta_pool *op, void *stream);

/* ---- device memory utilities ----
 * For tools, tests and bindings that must run on any backend without linking
 * a GPU runtime. Not for the hot path: they allocate and synchronise.
 * On the CPU backend "device" memory is ordinary host memory. */
ATTNMETA_API attnmeta_status attnmeta_device_alloc(attnmeta_context *ctx, size_t bytes, void **ptr);
ATTNMETA_API attnmeta_status attnmeta_device_free(attnmeta_context *ctx, void *ptr);
ATTNMETA_API attnmeta_status attnmeta_copy_to_device(attnmeta_context *ctx, void *dst,
                                                     const void *src, size_t bytes);
ATTNMETA_API attnmeta_status attnmeta_copy_to_host(attnmeta_context *ctx, void *dst,
                                                   const void *src, size_t bytes);
/* Waits for all work queued on `stream` (NULL = the default stream). */
ATTNMETA_API attnmeta_status attnmeta_synchronize(attnmeta_context *ctx, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* ATTNMETA_ATTNMETA_H */
