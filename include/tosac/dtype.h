/* Element types: numbered exactly as the TOSA 1.0 (final) flatbuffer DType enum. */
#ifndef TOSAC_DTYPE_H
#define TOSAC_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tosac_dtype {
    TOSAC_DTYPE_UNKNOWN = 0,
    TOSAC_DTYPE_BOOL = 1,
    TOSAC_DTYPE_INT4 = 2,
    TOSAC_DTYPE_INT8 = 3,
    TOSAC_DTYPE_INT16 = 4,
    TOSAC_DTYPE_INT32 = 5,
    TOSAC_DTYPE_INT48 = 6,
    TOSAC_DTYPE_FP32 = 7,
    TOSAC_DTYPE_FP16 = 8,
    TOSAC_DTYPE_BF16 = 9,
    TOSAC_DTYPE_SHAPE = 10,
    TOSAC_DTYPE_FP8E4M3 = 11,
    TOSAC_DTYPE_FP8E5M2 = 12,
    TOSAC_DTYPE_COUNT
} tosac_dtype;

/** Schema spelling ("INT8", "FP32", ...); "?" for out-of-range values. */
const char *tosac_dtype_name(tosac_dtype t);
/** Short spec spelling ("i8", "fp32", "shape", ...). */
const char *tosac_dtype_short_name(tosac_dtype t);
/** Parses either spelling, case-insensitively. Returns false if unknown. */
bool tosac_dtype_from_name(const char *name, tosac_dtype *out);
/** Bits of one element as the spec counts them (INT4 4, INT48 48, SHAPE 64, BOOL 8); 0 if unknown. */
unsigned tosac_dtype_bits(tosac_dtype t);
/** True for the floating-point types. */
bool tosac_dtype_is_float(tosac_dtype t);
/** True for a known dtype number (1..12). */
bool tosac_dtype_valid(uint32_t t);
/**
 * Bytes that `nelem` elements occupy in a TosaTensor.data payload (before the 8-byte padding):
 * INT4 packs two per byte, INT48 uses 6 bytes, SHAPE 8. Returns false on overflow or unknown type.
 */
bool tosac_dtype_storage_bytes(tosac_dtype t, int64_t nelem, size_t *out);

#ifdef __cplusplus
}
#endif
#endif
