/* Element type names, sizes and storage encoding sizes. */
#include "tosac/dtype.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *name, *short_name;
    unsigned bits;
    bool is_float;
} k_dtypes[TOSAC_DTYPE_COUNT] = {
    [TOSAC_DTYPE_UNKNOWN] = {"UNKNOWN", "unknown", 0, false},
    [TOSAC_DTYPE_BOOL] = {"BOOL", "bool", 8, false},
    [TOSAC_DTYPE_INT4] = {"INT4", "i4", 4, false},
    [TOSAC_DTYPE_INT8] = {"INT8", "i8", 8, false},
    [TOSAC_DTYPE_INT16] = {"INT16", "i16", 16, false},
    [TOSAC_DTYPE_INT32] = {"INT32", "i32", 32, false},
    [TOSAC_DTYPE_INT48] = {"INT48", "i48", 48, false},
    [TOSAC_DTYPE_FP32] = {"FP32", "fp32", 32, true},
    [TOSAC_DTYPE_FP16] = {"FP16", "fp16", 16, true},
    [TOSAC_DTYPE_BF16] = {"BF16", "bf16", 16, true},
    [TOSAC_DTYPE_SHAPE] = {"SHAPE", "shape", 64, false},
    [TOSAC_DTYPE_FP8E4M3] = {"FP8E4M3", "fp8e4m3", 8, true},
    [TOSAC_DTYPE_FP8E5M2] = {"FP8E5M2", "fp8e5m2", 8, true},
};

bool tosac_dtype_valid(uint32_t t) { return t > TOSAC_DTYPE_UNKNOWN && t < TOSAC_DTYPE_COUNT; }

const char *tosac_dtype_name(tosac_dtype t) { return (unsigned)t < TOSAC_DTYPE_COUNT ? k_dtypes[t].name : "?"; }

const char *tosac_dtype_short_name(tosac_dtype t)
{
    return (unsigned)t < TOSAC_DTYPE_COUNT ? k_dtypes[t].short_name : "?";
}

bool tosac_dtype_from_name(const char *name, tosac_dtype *out)
{
    for (int i = 1; i < TOSAC_DTYPE_COUNT; i++) {
        if (!strcasecmp(name, k_dtypes[i].name) || !strcasecmp(name, k_dtypes[i].short_name)) {
            *out = (tosac_dtype)i;
            return true;
        }
    }
    return false;
}

unsigned tosac_dtype_bits(tosac_dtype t) { return (unsigned)t < TOSAC_DTYPE_COUNT ? k_dtypes[t].bits : 0; }

bool tosac_dtype_is_float(tosac_dtype t) { return (unsigned)t < TOSAC_DTYPE_COUNT && k_dtypes[t].is_float; }

bool tosac_dtype_storage_bytes(tosac_dtype t, int64_t nelem, size_t *out)
{
    if (nelem < 0 || !tosac_dtype_valid((uint32_t)t)) return false;
    uint64_t n = (uint64_t)nelem;
    if (t == TOSAC_DTYPE_INT4) {
        *out = (size_t)((n + 1) / 2);
        return true;
    }
    uint64_t bytes = k_dtypes[t].bits / 8;
    if (n > (uint64_t)SIZE_MAX / bytes) return false;
    *out = (size_t)(n * bytes);
    return true;
}
