/* Shared pieces of src/target/: the placement context the rules read and the partitioner updates. */
#ifndef TOSAC_TARGET_INTERNAL_H
#define TOSAC_TARGET_INTERNAL_H

#include "core/arena.h"
#include "ir/graph.h"
#include "tosac/target.h"

/* Rule-set bits of rules.def's SETS column. */
enum { RS_U55 = 1u << 0, RS_U85 = 1u << 1 };

enum target_rule_id {
#define TARGET_RULE(ID, SETS, KIND, TEXT) RULE_##ID,
#include "target/rules.def"
#undef TARGET_RULE
    RULE_COUNT
};

/* One block's operators and who reads what, plus the current placement. */
typedef struct place_ctx {
    const tosac_block *b;
    unsigned set;           /* RS_U55 or RS_U85 */
    int8_t *where;          /* by node index: 1 NPU, 0 CPU, -1 a constant */
    uint32_t *reader_off;   /* by tensor index: readers[reader_off[i] .. reader_off[i+1]) */
    tosac_node **readers;
    bool *is_output;        /* by tensor index: a block output */
    tosac_node **producer;  /* by tensor index (CONST included), NULL for block inputs */
} place_ctx;

/* Builds the reader lists of block b (where[] all NPU, constants -1). false: out of memory. */
bool place_ctx_init(place_ctx *c, const tosac_block *b, unsigned set);
void place_ctx_free(place_ctx *c);
uint32_t place_readers(const place_ctx *c, const tosac_value *v);
/* The operator producing tensor v (NULL: a block input or a shape value). */
tosac_node *place_producer(const place_ctx *c, const tosac_value *v);
/* The first rule of the set that refuses operator n in the current placement, or TOSAC_RULE_NONE;
   neighbours_only: only the rules that depend on the neighbours' placement. */
int target_rule_check(const place_ctx *c, const tosac_node *n, bool neighbours_only);
/* What the report says of an NPU operator: how Vela handles a RESCALE (ETHOS_U.md §2: fused into
   its producer or reader, or standalone), whether an int16 TABLE on U55 is a native LUT or
   emulated, or the cost of a two-sided broadcast on U55; NULL for nothing. */
const char *target_op_note(const place_ctx *c, const tosac_node *n);
/* How the note of an int16 TABLE that Vela emulates on U55 begins (the report counts them). */
#define TABLE16_EMULATED "int16 TABLE emulated"
/* The rule-set bits of a target. */
unsigned target_rule_bits(tosac_rule_set s);

/* What is known of a tensor's q-params (qinfer.c). */
typedef struct target_q {
    tosac_qparams q;
    bool has_zp, has_scale;
} target_q;
/* The q-params of every int8/int16 tensor of c->b that the program and the model I/O (io, may be
   NULL) determine; q has b->n_tensors entries. */
void target_infer_q(const place_ctx *c, const tosac_quant_iomap *io, target_q *q);

/* The artifact (artifact.c owns the layout; partition.c fills it). */
struct tosac_artifact {
    tosac_arena arena;
    tosac_target_info target;
    uint32_t n_inputs, n_outputs, n_segments, n_ops;
    tosac_artifact_tensor *inputs, *outputs;
    tosac_artifact_segment *segs;
    tosac_artifact_op *ops;
};
tosac_artifact *artifact_new(void);
/* Fills arena_bytes / const_bytes of every segment from a runtime plan. */
tosac_status artifact_measure(tosac_artifact *a, tosac_diag *d);

#endif
