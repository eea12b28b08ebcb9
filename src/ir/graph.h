/* Internal definition of the graph IR (see include/tosac/graph.h for the public side). */
#ifndef TOSAC_IR_GRAPH_H
#define TOSAC_IR_GRAPH_H

#include "core/arena.h"
#include "tosac/graph.h"


struct tosac_value {
    const char *name;
    tosac_block *block;
    tosac_dtype dtype;   /* SHAPE for shape values */
    bool is_shape;       /* a TosaShape (block.shapes) rather than a TosaTensor */
    bool declared;       /* false: referenced by an operator but absent from the block's lists */
    bool is_unranked;
    bool variable;
    const char *variable_name; /* NULL if absent */
    int32_t rank;              /* shape values: 1 (shape[0] = element count) */
    int64_t *shape;
    const uint8_t *data;       /* TOSA-encoded constant bytes (shape values: int64 LE), or NULL */
    size_t data_len;
    uint64_t ext_offset, ext_size; /* TosaTensor.offset/size, carried through unchanged */
    tosac_node *producer;          /* set by tosac_graph_link */
    uint32_t index;                /* position in the block's tensor or shape list */
    uint32_t n_uses;               /* scratch for rewrites: operator inputs + block outputs (ir_count_uses) */
};

struct tosac_node {
    uint32_t op;        /* tosac_op; unknown numbers are kept for the validator to report */
    uint8_t attr_type;  /* union tag read from the file (equals op when consistent; 0 = NONE) */
    uint32_t n_inputs, n_outputs;
    tosac_value **inputs, **outputs;
    tosac_attr_val attr[TOSAC_ATTR_MAX_FIELDS];
    const char *location; /* OpLocation.text, or NULL */
    tosac_block *block;
    uint32_t index; /* position in the block */
    bool dead;      /* removed by a rewrite; dropped by ir_compact */
};

struct tosac_block {
    const char *name;
    tosac_region *region;
    tosac_graph *graph;
    tosac_node **nodes;
    uint32_t n_nodes, cap_nodes;
    tosac_value **tensors; /* TosaBasicBlock.tensors order */
    uint32_t n_tensors, cap_tensors;
    tosac_value **shapes; /* TosaBasicBlock.shapes order */
    uint32_t n_shapes, cap_shapes;
    tosac_value **undeclared; /* names used by operators but never declared */
    uint32_t n_undeclared, cap_undeclared;
    tosac_value **inputs, **outputs;
    uint32_t n_inputs, cap_inputs, n_outputs, cap_outputs;
    /* name -> value hash (open addressing over all values of the block) */
    tosac_value **hash;
    uint32_t hash_cap, hash_n;
};

struct tosac_region {
    const char *name;
    tosac_graph *graph;
    tosac_block **blocks;
    uint32_t n_blocks, cap_blocks;
};

struct tosac_graph {
    tosac_arena arena;
    int32_t ver_major, ver_minor, ver_patch;
    bool ver_draft;
    tosac_region **regions;
    uint32_t n_regions, cap_regions;
};

/* Looks a name up among the block's tensors, shapes and undeclared placeholders. */
tosac_value *tosac_block_find(const tosac_block *b, const char *name);
/* Returns the value named `name`, creating an undeclared placeholder if it does not exist. */
tosac_value *tosac_block_get_or_placeholder(tosac_block *b, const char *name);
/* Adds a shape value (TosaShape) without a producer. */
tosac_value *tosac_block_add_shape(tosac_block *b, const char *name, uint32_t count);
/* Region / block lookup by name (NULL if none). */
tosac_region *tosac_graph_find_region(const tosac_graph *g, const char *name);
tosac_block *tosac_region_find_block(const tosac_region *r, const char *name);
/* tosac_block_add_const without the copy: `data` must come from the graph's own arena (weights
   computed at compile time are written there once instead of twice). */
tosac_value *tosac_block_add_const_adopt(tosac_block *b, const char *name, tosac_dtype t, int rank,
                                         const int64_t *shape, const void *data, size_t nbytes);
/* Rebuilds the name index after values were renamed or dropped from the lists (false: out of memory). */
bool tosac_block_rehash(tosac_block *b);
/* Sets value->producer for every operator output (first producer wins). */
void tosac_graph_link(tosac_graph *g);
/* Element count of a value (product of dims; 1 for rank 0); -1 on overflow or negative dims. */
int64_t tosac_value_nelem(const tosac_value *v);
/* Arena-backed array growth used by the builders. */
bool tosac_arena_grow(tosac_arena *a, void **p, uint32_t *cap, uint32_t need, size_t elem);

#endif
