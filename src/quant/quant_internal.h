/* Shared pieces of the quantizer's steps (src/quant/). */
#ifndef TOSAC_QUANT_INTERNAL_H
#define TOSAC_QUANT_INTERNAL_H

#include "core/diag.h"
#include "core/strbuf.h"
#include "ir/graph.h"
#include "quant/build.h"
#include "tosac/quant.h"

/* Observed range of every tensor of the FP main block, by tosac_value.index, and (percentile,
   mse) its histogram: hist + index * TOSAC_QUANT_HIST_BINS, or NULL for minmax. */
typedef struct quant_stats {
    uint32_t n;
    double *min, *max;
    bool *seen;
    uint64_t *hist;
    /* calibrate.c's per-worker accumulators, the histogram bin of each raw class, the values whose
       statistics follow from their input's (borrowed), and which of them got theirs this sample */
    struct quant_obs_worker *w;
    uint32_t n_w;
    uint32_t *raw_bin;
    const struct quant_derive *dv;
    bool *derived;
} quant_stats;
#define QUANT_RAW_BINS (1u << 14)

/* The calibration samples in order: the caller's arrays, or the seeded random stream (which must
   be read in order: sample by sample, input by input). */
typedef struct quant_samples {
    const tosac_quant_opts *o;
    uint64_t seed;
    float *rnd;
    size_t rnd_n;
} quant_samples;
uint32_t quant_sample_count(const tosac_quant_opts *o);
void quant_samples_init(quant_samples *qs, const tosac_quant_opts *o);
/* Writes sample x into a program input of type t: FP32 as it is, INT32 (an integer input the
   quantizer keeps, token ids) rounded to the nearest integer. */
void quant_put_sample(void *dst, tosac_dtype t, const float *x, int64_t n);
const float *quant_sample(quant_samples *qs, uint32_t sample, uint32_t input, uint32_t n_in, int64_t nelem,
                          tosac_diag *d);
void quant_samples_free(quant_samples *qs);

/* An FP value's integer form in the final INT graph, for the SQNR report: int8 at q, or int32 at
   real scales sc[c] over the last dimension (nsc of them, zero point 0). */
typedef struct quant_map_entry {
    uint32_t fp;    /* FP value index */
    tosac_value *t; /* INT value (still valid after compaction when it survived) */
    bool i32;
    tosac_qparams q;
    const double *sc;
    uint32_t nsc;
} quant_map_entry;
/* Samples run side by side on at most this many threads (calibration and report). */
#define QUANT_MAX_WORKERS 64

/* The FP values of the report's first samples, stored by the calibration run that computes them
   anyway, so that the report runs only the INT program on those samples. Value v (want[v], an
   FP32 value the report may compare) of stored sample k is clamp(buf[k] + off[v], lo[v], hi[v])
   when had[k][v]: a CLAMP (nan_mode PROPAGATE) of a stored value is not stored again, it reads
   its input's elements with its bounds (+-infinity for the others). The program's FP32 output j
   is at buf[k] + out_off[j]. The memory is bounded (tosac_quant_opts.report_keep_bytes, default
   QUANT_KEEP_BYTES): the samples beyond n_samples (and the report's lanes for them) run the FP
   program again. */
typedef struct quant_fp_values {
    uint32_t n_values, n_out;
    size_t *off, *out_off; /* in floats; QUANT_NOT_KEPT: not stored */
    int64_t *nelem;        /* by value */
    uint32_t *from;        /* by value: the value holding its elements (itself, or a CLAMP's input) */
    float *lo, *hi;        /* by value */
    size_t per;            /* floats per sample */
    uint32_t n_samples;
    float **buf;
    bool **had;
} quant_fp_values;
#define QUANT_NOT_KEPT SIZE_MAX
#define QUANT_KEEP_BYTES ((size_t)256 << 20)
/* The layout for the values want[] (by FP value index; each one an op callback is given) and p's
   outputs, and n_samples buffers (fewer when they would exceed `bound` bytes). */
tosac_status quant_fp_values_init(quant_fp_values *fv, const tosac_block *b, const tosac_program *p, const bool *want,
                                  uint32_t n_samples, size_t bound);
/* Stores FP value v of one sample into buf (per floats; had: n_values flags) when fv keeps it
   (info, data: the program's view of it). */
void quant_fp_values_put(const quant_fp_values *fv, float *buf, bool *had, uint32_t v, const tosac_tensor_info *info,
                         const void *data);
/* Stores p's FP32 outputs after its run of a sample. */
void quant_fp_values_put_outputs(const quant_fp_values *fv, float *buf, const tosac_program *p);
void quant_fp_values_free(quant_fp_values *fv);
/* The samples the report runs on. */
uint32_t quant_report_sample_count(const tosac_quant_opts *o);

/* The calibration's FP programs, kept for the report: the program itself (its threads) and, when
   the samples ran side by side, each worker's single-threaded one (sharing p's prepared constants,
   so destroyed before p), and the FP values of the report's first samples. The arenas are in use
   already: the report's FP runs (samples beyond the stored ones) fault no new pages and create no
   program. */
typedef struct quant_fp_programs {
    tosac_program *p;
    tosac_program *lane[QUANT_MAX_WORKERS];
    uint32_t n_lanes;
    const uint32_t *observe; /* their observe list (tosac_program_opts.observe: the FP values read) */
    uint32_t n_observe;
    quant_fp_values vals;
} quant_fp_programs;
void quant_fp_programs_free(quant_fp_programs *f);

/* pf: the FP programs of the calibration (taken over: *pf is left empty), or NULL. */
tosac_status quant_report(const tosac_graph *fp, quant_fp_programs *pf, const tosac_graph *q, const tosac_quant_opts *o,
                          const tosac_quant_iomap *io, quant_map_entry *map, uint32_t n_map, tosac_quant_report **out,
                          tosac_diag *d);

void quant_stats_free(quant_stats *st);
/* Runs the FP program over the calibration samples (or seeded random ones) and records the ranges
   of the values observe lists (FP value indices: the program runs fused wherever none of them is
   an intermediate); keep (optional) receives the programs for the report instead of their being
   destroyed, and the values want[] (by FP value index) of the report's first samples. */
tosac_status quant_calibrate(const tosac_block *b, const tosac_graph *g, const tosac_quant_opts *o, const uint32_t *observe,
                             uint32_t n_observe, quant_stats *st, quant_fp_programs *keep, const bool *want,
                             tosac_diag *d);

/* TABLE of the elementwise subgraph `ops` (n_ops, topological) from x to y of block b. */
tosac_status quant_cluster_table(const tosac_value *x, const tosac_value *y, tosac_node *const *ops, uint32_t n_ops,
                                 tosac_qparams in, tosac_qparams out, int8_t table[256], tosac_diag *d);
/* Its 513-entry int16 TABLE (--a16w8; *ok: TOSA's slope limit holds). */
tosac_status quant_cluster_table16(const tosac_value *x, const tosac_value *y, tosac_node *const *ops, uint32_t n_ops,
                                   tosac_qparams in, tosac_qparams out, double lo, double hi, int16_t table[513],
                                   bool *ok, tosac_diag *d);
/* The same subgraph evaluated (FP, tosac's runtime) on n arbitrary inputs. */
tosac_status quant_cluster_eval(const tosac_value *x, const tosac_value *y, tosac_node *const *ops, uint32_t n_ops,
                                const float *xv, float *yv, uint32_t n, tosac_diag *d);

/* Q/DQ chains of a pre-quantized model in the FP block (qdq.c): by FP value index, q-params fixed
   by the model; by FP node index, whether the node is inside a chain (no operator of its own) and,
   for a chain's last node, the value index of the chain's input (else -1). */
typedef struct quant_fixed {
    bool *has;
    tosac_qparams *q;
    bool *in_chain;
    int32_t *chain_in;
    uint32_t n_chains;
} quant_fixed;
tosac_status quant_qdq_find(const tosac_block *b, quant_fixed *f, tosac_diag *d);
void quant_fixed_free(quant_fixed *f);

/* What --emit-qdq needs of the lowering. By FP value index: whether the INT program holds the
   value in int8 at its own q-params q. */
typedef struct quant_qdq_value {
    bool i8;
    tosac_qparams q;
} quant_qdq_value;
/* By FP node index: inside a TABLE subgraph; wide bit k: input k was read in its int32 form; ksc:
   the scales its constant operand was made integer at (conv/MATMUL weights per output channel,
   a MUL operand's symmetric int8 scale, a constant added to an int32 result at that result's
   per-channel scales), nksc of them, or NULL. */
typedef struct quant_qdq_node {
    bool in_table;
    uint32_t wide;
    const double *ksc;
    uint32_t nksc;
} quant_qdq_node;
/* Writes the FP block as an ONNX model with QuantizeLinear/DequantizeLinear where the INT program
   has int8 values (emit_qdq.c). Atomic: no file on error. */
tosac_status quant_emit_qdq(const tosac_block *fb, const tosac_quant_iomap *io, const quant_qdq_value *v,
                            const quant_qdq_node *nodes, const char *path, tosac_diag *d);

/* Rewrites the default integer block into the forms the TOSAC_LOWER_* bits ask for (target.c). */
tosac_status quant_lower_target(tosac_block *b, uint32_t bits, tosac_diag *d);
/* Gives the INT8 graph inputs/outputs of block b the I/O type `type` (boundary.c) and records it in io. */
tosac_status quant_boundary(tosac_block *b, tosac_quant_iomap *io, tosac_quant_io_type type, tosac_diag *d);

/* Writes the buffer's text to path (taking the text); `what` names it in the error. */
tosac_status quant_write_text(tosac_strbuf *sb, const char *path, const char *what, tosac_diag *d);

#endif
