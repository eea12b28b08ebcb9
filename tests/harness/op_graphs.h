/*
 * Example graphs for every TOSA operator and every one of its type-support rows: one region "main"
 * with one block "main" whose inputs are the op's non-constant operands, with constants (zero
 * points, shifts, shapes, weights where convenient) produced by CONST/CONST_SHAPE, and one
 * instance of the op whose result is the block output. Each graph is valid under
 * tosac_validate with all profiles and extensions and level 8K.
 */
#ifndef TOSAC_TEST_OP_GRAPHS_H
#define TOSAC_TEST_OP_GRAPHS_H

#include "tosac/graph.h"

/* variant = index into the op's type rows (tosac_op_type_rows); NULL when out of range. */
tosac_graph *test_op_graph(uint32_t op, unsigned variant);

/* Implemented per family group; return NULL for ops they do not own. */
tosac_graph *test_op_graph_a(uint32_t op, unsigned variant); /* op_graphs_a.c */
tosac_graph *test_op_graph_b(uint32_t op, unsigned variant); /* op_graphs_b.c */

#endif
