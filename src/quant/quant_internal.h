/* Shared pieces of the quantizer's steps (src/quant/). */
#ifndef TOSAC_QUANT_INTERNAL_H
#define TOSAC_QUANT_INTERNAL_H

#include "core/diag.h"
#include "ir/graph.h"
#include "tosac/quant.h"

/* Observed range of every tensor of the FP main block, by tosac_value.index. */
typedef struct quant_stats {
    uint32_t n;
    double *min, *max;
    bool *seen;
} quant_stats;

void quant_stats_free(quant_stats *st);
/* Runs the FP program over the calibration samples (or seeded random ones) and records ranges. */
tosac_status quant_calibrate(const tosac_block *b, const tosac_graph *g, const tosac_quant_opts *o, quant_stats *st,
                             tosac_diag *d);
/* The main block of a graph, or NULL. */
tosac_block *quant_main_block(const tosac_graph *g);
/* FP32 constant value k (TOSA encoding is little-endian float). */
float quant_const_f32(const tosac_value *v, int64_t k);
/* Copies the attributes of `src` onto `dst` (same op), into dst's graph. */
tosac_status quant_copy_attrs(tosac_node *dst, const tosac_node *src);
/* " (ONNX node 'X')" or "" for messages. */
const char *quant_where(const tosac_node *n, char *buf, size_t size);

/* TABLE of the elementwise subgraph `ops` (n_ops, topological) from x to y of block b. */
tosac_status quant_cluster_table(const tosac_value *x, const tosac_value *y, tosac_node *const *ops, uint32_t n_ops,
                                 tosac_qparams in, tosac_qparams out, int8_t table[256], tosac_diag *d);

#endif
