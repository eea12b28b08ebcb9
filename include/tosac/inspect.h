/* Human- and machine-readable summaries of a graph (what `tosac inspect` prints). */
#ifndef TOSAC_INSPECT_H
#define TOSAC_INSPECT_H

#include "tosac/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Text summary: version, then per region and block the inputs, outputs, tensors (type, constant
 * byte count, small constant values, variable flags), shape values, operators (operands and
 * attributes), then totals (operators, tensors, shapes, parameter bytes, op counts by type sorted by
 * count descending, then name). Deterministic. Caller frees with tosac_string_free; NULL if `g` is
 * NULL or memory runs out.
 */
char *tosac_inspect_text(const tosac_graph *g);

/**
 * The same as one JSON document (RFC 8259; strings escaped, invalid UTF-8 replaced by U+FFFD,
 * non-finite floats as the strings "NaN", "Infinity", "-Infinity"). Keys, always present, in this
 * order:
 *
 *   "version":  {"major", "minor", "patch", "draft"}
 *   "regions":  [{"name", "blocks": [{
 *       "name", "inputs": [names], "outputs": [names],
 *       "tensors":   [{"name", "type" (DType name), "shape" ([dims]; null if unranked),
 *                      "const_bytes" (bytes of data, 0 if none), "variable" (bool),
 *                      "variable_name" (string|null), "values" (flat list if a constant of at
 *                      most 16 elements, else null)}],
 *       "shapes":    [{"name", "rank" (element count), "const_bytes", "values" (list|null)}],
 *       "operators": [{"index", "op" (name, "UNKNOWN" for unknown numbers), "opcode" (number),
 *                      "inputs": [names], "outputs": [names],
 *                      "attributes": {field: value} (present fields; enums as names),
 *                      "location" (string|null)}],
 *       "undeclared": [names used by operators but not declared in the block]}]}]
 *   "totals":   {"regions", "blocks", "operators", "tensors", "shapes",
 *                "parameter_bytes" (sum of tensor data bytes), "ops_by_type": {"NAME": count}
 *                (count descending, then name)}
 *
 * Caller frees with tosac_string_free; NULL if `g` is NULL or memory runs out.
 */
char *tosac_inspect_json(const tosac_graph *g);

#ifdef __cplusplus
}
#endif
#endif
