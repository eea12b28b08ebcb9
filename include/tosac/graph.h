/*
 * The graph IR: a graph owns regions, a region owns basic blocks, a block owns its tensors, shape
 * values and operators (as in the TOSA flatbuffer). Everything is allocated from the graph's arena
 * and lives until tosac_graph_destroy. Builder calls return NULL/status on allocation failure.
 */
#ifndef TOSAC_GRAPH_H
#define TOSAC_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tosac/dtype.h"
#include "tosac/ops.h"
#include "tosac/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tosac_graph tosac_graph;
typedef struct tosac_region tosac_region;
typedef struct tosac_block tosac_block;
typedef struct tosac_value tosac_value;
typedef struct tosac_node tosac_node;

/** Hard limit on ranks anywhere in tosac (the TOSA level "none" maximum). */
#define TOSAC_MAX_RANK 32

/** Creates an empty graph with version 1.0.0 final. */
tosac_graph *tosac_graph_create(void);
void tosac_graph_destroy(tosac_graph *g);
void tosac_graph_set_version(tosac_graph *g, int32_t major, int32_t minor, int32_t patch, bool draft);

tosac_region *tosac_graph_add_region(tosac_graph *g, const char *name);
tosac_block *tosac_region_add_block(tosac_region *r, const char *name);

/** A tensor (TosaTensor) of the block; rank 0 allowed. Names must be unique in the block. */
tosac_value *tosac_block_add_tensor(tosac_block *b, const char *name, tosac_dtype t, int rank,
                                    const int64_t *shape);
/** A constant tensor plus the CONST operator producing it; `data` is copied, TOSA-encoded (§A.6). */
tosac_value *tosac_block_add_const(tosac_block *b, const char *name, tosac_dtype t, int rank,
                                   const int64_t *shape, const void *data, size_t nbytes);
/** A constant shape value (TosaShape) plus the CONST_SHAPE operator producing it. */
tosac_value *tosac_block_add_const_shape(tosac_block *b, const char *name, const int64_t *values,
                                         uint32_t count);
/** Appends an operator. Inputs/outputs are values of the same block; NULL if one is NULL. */
tosac_node *tosac_block_add_node(tosac_block *b, tosac_op op, uint32_t n_in, tosac_value *const *in,
                                 uint32_t n_out, tosac_value *const *out);
tosac_status tosac_block_add_input(tosac_block *b, tosac_value *v);
tosac_status tosac_block_add_output(tosac_block *b, tosac_value *v);

/* Attribute setters: `id` is a TOSAC_ATTR_<OP>_<field> value of the node's op. */
tosac_status tosac_node_set_int(tosac_node *n, unsigned id, int64_t v); /* I32/BOOL/DTYPE/enums */
tosac_status tosac_node_set_ints(tosac_node *n, unsigned id, const int32_t *v, uint32_t count);
tosac_status tosac_node_set_bytes(tosac_node *n, unsigned id, const void *v, uint32_t len);
tosac_status tosac_node_set_str(tosac_node *n, unsigned id, const char *s);
tosac_status tosac_node_set_location(tosac_node *n, const char *text);

/** Text form of the whole graph (see docs/FORMAT.md); caller frees with tosac_string_free. */
char *tosac_graph_print(const tosac_graph *g);
void tosac_string_free(char *s);

#ifdef __cplusplus
}
#endif
#endif
