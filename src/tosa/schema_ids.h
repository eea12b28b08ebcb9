/*
 * Field ids (vtable slots) of the core tables of schema/tosa.fbs (TOSA.md §A.3), shared by the
 * reader and the writer so the two cannot drift apart. Attribute tables are described by
 * op_table.h instead.
 */
#ifndef TOSAC_TOSA_SCHEMA_IDS_H
#define TOSAC_TOSA_SCHEMA_IDS_H

enum { GRAPH_VERSION = 0, GRAPH_REGIONS = 1 };
enum { VER_MAJOR = 0, VER_MINOR = 1, VER_PATCH = 2, VER_DRAFT = 3 };
enum { REGION_NAME = 0, REGION_BLOCKS = 1 };
enum { BLOCK_NAME = 0, BLOCK_OPERATORS = 1, BLOCK_TENSORS = 2, BLOCK_INPUTS = 3, BLOCK_OUTPUTS = 4, BLOCK_SHAPES = 5 };
enum { OPR_OP = 0, OPR_ATTR_TYPE = 1, OPR_ATTR = 2, OPR_INPUTS = 3, OPR_OUTPUTS = 4, OPR_LOCATION = 5 };
enum { LOC_TEXT = 0 };
enum {
    TENSOR_NAME = 0, TENSOR_SHAPE = 1, TENSOR_TYPE = 2, TENSOR_DATA = 3, TENSOR_VARIABLE = 4,
    TENSOR_UNRANKED = 5, TENSOR_VARNAME = 6, TENSOR_OFFSET = 7, TENSOR_SIZE = 8
};
enum { SHAPE_NAME = 0, SHAPE_RANK = 1, SHAPE_DATA = 2 };

#endif
