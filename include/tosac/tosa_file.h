/* Reading and writing TOSA 1.0 flatbuffer files (.tosa) to and from the graph IR. */
#ifndef TOSAC_TOSA_FILE_H
#define TOSAC_TOSA_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "tosac/graph.h"
#include "tosac/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Limits for the reader; a zero field selects its default. */
typedef struct tosac_read_opts {
    /** Largest input accepted, in bytes (0 = 4 GiB; the flatbuffer format itself stops below 2 GiB). */
    size_t max_file_bytes;
    /**
     * Most flatbuffer objects (tables, vectors, strings) the reader may visit (0 = file size / 4
     * + 64, which every file without shared sub-tables fits in). Bounds the work a file that
     * references the same sub-table many times can cause.
     */
    size_t max_objects;
} tosac_read_opts;

/**
 * Decodes a TOSA flatbuffer held in memory into a new graph.
 *
 * Requires the file identifier "TOSA" and a Version table with major version 1 (1.0.x final or
 * draft, 1.1 drafts); the version is kept in the graph. Every region, block, tensor, shape value
 * and operator is kept in file order; operand names that a block does not declare become
 * placeholder values. Unknown operator numbers are kept for the validator; unknown DType numbers,
 * unknown attribute union tags and ranks above TOSAC_MAX_RANK are format errors. Tensor data is
 * copied (the zero padding up to a multiple of 8 bytes is dropped when the length is exactly the
 * padded size of the tensor's elements). The reader never trusts the bytes: every error appends one
 * message naming `name` and the object path ("m.tosa: regions[0].blocks[0].operators[3].inputs[1]:
 * ...") and returns TOSAC_ERR_FORMAT (malformed), TOSAC_ERR_UNSUPPORTED (version) or
 * TOSAC_ERR_NOMEM (a limit or an allocation). Memory use is bounded by a small multiple of `len`.
 *
 * @param[in]  buf   the file bytes (not kept after the call)
 * @param[in]  len   their number
 * @param[in]  name  label for messages (NULL = "<memory>")
 * @param[in]  opts  limits, or NULL for the defaults
 * @param[out] out   the new graph (free with tosac_graph_destroy); untouched on failure
 * @param[in]  d     diagnostics sink, or NULL
 */
tosac_status tosac_tosa_read_mem(const void *buf, size_t len, const char *name, const tosac_read_opts *opts,
                                 tosac_graph **out, tosac_diag *d);

/** Reads the file at `path` (checked against max_file_bytes before it is loaded) and decodes it. */
tosac_status tosac_tosa_read_file(const char *path, const tosac_read_opts *opts, tosac_graph **out,
                                  tosac_diag *d);

/**
 * Encodes a graph as a TOSA 1.0 flatbuffer. The output is a pure function of the graph (same graph,
 * same bytes). Written: the Version table with all four fields (from the graph, 1.0.0 final by
 * default); every region, block, tensor, shape value and operator in IR order; tensor data
 * zero-padded to a multiple of 8 bytes with 8-byte aligned payload (TosaShape.data and CLAMP
 * min_val/max_val are 8-byte aligned too); the attribute table of every operator (tag =
 * node->attr_type, or the op number when that is 0) with exactly the fields marked present.
 * Placeholder values are written only as operand names.
 * Fails with TOSAC_ERR_INVALID_ARG for an operator number outside 1..75 (or a bad tag), with
 * TOSAC_ERR_UNSUPPORTED for values the format cannot hold (a dimension outside int32, an
 * attribute out of its field's range), with TOSAC_ERR_NOMEM past the 2 GiB flatbuffer limit.
 *
 * @param[out] out  the bytes, allocated with tosac's allocator: free with tosac_buffer_free(*out, *len)
 * @param[out] len  their number
 */
tosac_status tosac_tosa_write_mem(const tosac_graph *g, uint8_t **out, size_t *len, tosac_diag *d);

/**
 * Encodes `g` and stores it at `path` through a temporary file in the same directory that is
 * renamed over `path` once complete: `path` never holds a partial file. A directory or an
 * existing file other than a regular file is refused; a character device (/dev/null) is written
 * in place. TOSAC_ERR_IO on OS errors (the message gives the OS reason).
 */
tosac_status tosac_tosa_write_file(const tosac_graph *g, const char *path, tosac_diag *d);

/** Frees a buffer returned by tosac_tosa_write_mem (NULL is allowed). */
void tosac_buffer_free(uint8_t *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
