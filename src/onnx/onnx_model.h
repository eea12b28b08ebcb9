/* Internal side of the ONNX model view (include/tosac/onnx.h): ownership. */
#ifndef TOSAC_ONNX_MODEL_H
#define TOSAC_ONNX_MODEL_H

#include "core/arena.h"
#include "tosac/onnx.h"

/* A model and the arena that owns every graph, node, name and tensor buffer reachable from it. */
/* A raw_data buffer taken over from protobuf-c's decoded message (freed with the model). */
typedef struct onnx_kept_buffer {
    void *block; /* as allocated (the protobuf-c allocator's header included) */
    size_t bytes;
    struct onnx_kept_buffer *next;
} onnx_kept_buffer;

typedef struct onnx_model_impl {
    tosac_onnx_model pub; /* first member: a tosac_onnx_model * points here */
    tosac_arena arena;
    onnx_kept_buffer *kept;
} onnx_model_impl;

/* Default-domain opset versions and IR versions the reader accepts. */
#define TOSAC_ONNX_MIN_IR 3
#define TOSAC_ONNX_MAX_IR 10
#define TOSAC_ONNX_MIN_OPSET 1
#define TOSAC_ONNX_MAX_OPSET 21

#endif
