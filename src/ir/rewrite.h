/*
 * Graph rewriting for the compiler passes (src/passes/): use counts, use replacement, fresh
 * names, renaming and compaction. A pass marks operators dead and appends new ones anywhere;
 * ir_compact() then drops the dead operators and every value nothing refers to, and restores a
 * topological operator order, so passes never have to insert "at the right place".
 * Constant data is immutable once in the graph: passes make new constants (they may share bytes,
 * e.g. a folded RESHAPE of a constant) and never write into an existing one.
 */
#ifndef TOSAC_IR_REWRITE_H
#define TOSAC_IR_REWRITE_H

#include "ir/graph.h"

/* value->n_uses = operator inputs of live operators + block output slots; value->producer = its
   live producer (NULL for block inputs). */
void ir_count_uses(tosac_block *b);
/* Every use of `from` (live operator inputs, block outputs) becomes `to`; n_uses follow. */
void ir_replace_uses(tosac_block *b, tosac_value *from, tosac_value *to);
/* A new tensor named "<prefix><n>" with the first free n. */
tosac_value *ir_new_tensor(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape);
/* A new CONST tensor (data TOSA-encoded, copied) and its producer. */
tosac_value *ir_new_const(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape,
                          const void *data, size_t nbytes);
/* Same, adopting `data`, which must come from the graph's arena (tosac_arena_alloc_uninit). */
tosac_value *ir_new_const_adopt(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape,
                                const void *data, size_t nbytes);
/* A new CONST_SHAPE value and its producer. */
tosac_value *ir_new_shape(tosac_block *b, const int64_t *values, uint32_t count);
/* Appends op(in) -> out carrying `like`'s location (NULL: none). */
tosac_node *ir_add_op(tosac_block *b, tosac_op op, uint32_t n_in, tosac_value *const *in, tosac_value *out,
                      const tosac_node *like);
/* Renames a value (TOSAC_ERR_INVALID_ARG when another value has that name). */
/* Copies every attribute set on `src` to `dst` (same operator: a node rebuilt with other operands). */
tosac_status ir_copy_attrs(tosac_node *dst, const tosac_node *src);
tosac_status ir_rename(tosac_block *b, tosac_value *v, const char *name);
/* Drops dead operators and values that are neither block inputs/outputs nor referenced by a live
   operator, orders the operators topologically (stable), reindexes and rehashes.
   TOSAC_ERR_INTERNAL when the operators form a cycle. */
tosac_status ir_compact(tosac_block *b);
/* Marks dead every operator none of whose outputs is used (transitively); returns how many. */
uint32_t ir_dce(tosac_block *b);
/* True when the value is produced by CONST (or CONST_SHAPE) and carries its data. */
bool ir_is_const(const tosac_value *v);

#endif
