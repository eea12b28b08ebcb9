/* Dispatches to the per-group example graph builders. */
#include "harness/op_graphs.h"

#include <stddef.h>

tosac_graph *test_op_graph(uint32_t op, unsigned variant)
{
    tosac_graph *g = test_op_graph_a(op, variant);
    return g ? g : test_op_graph_b(op, variant);
}
