/*
 * NumPy .npy files: reading (format 1.0, 2.0 and 3.0 headers), writing (format 1.0) and the
 * conversions between .npy element types and the TOSA tensor data encoding (TOSA.md A.6 / D.3).
 *
 * Input files are untrusted: every header field and size is checked, every problem is reported to
 * the diagnostics sink as "<name>: <what is wrong>", and no more memory is allocated than the
 * file's own size accounts for.
 */
#ifndef TOSAC_NPY_H
#define TOSAC_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "tosac/alloc.h"
#include "tosac/dtype.h"
#include "tosac/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOSAC_NPY_MAX_RANK 32

/** Largest header accepted when reading (the dict text, after the length field). */
#define TOSAC_NPY_MAX_HEADER (1u << 20)

typedef struct tosac_npy {
    /**
     * Normalised descr: "|" for 1-byte types ("|b1", "|i1", "|u1", "|V1"), "<" for wider ones
     * ("<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8", "<V2".."<V8").
     * Big-endian files are converted to little-endian data on reading; "=" and a missing byte-order
     * character are taken as little-endian; void types have no byte order ("|V2" reads as "<V2").
     */
    char descr[8];
    int rank;                           /**< 0..TOSAC_NPY_MAX_RANK */
    int64_t shape[TOSAC_NPY_MAX_RANK];  /**< C order */
    int64_t count;                      /**< product of shape (1 for rank 0) */
    size_t elem_size;                   /**< bytes per element */
    void *data;                         /**< count * elem_size little-endian bytes; NULL if 0 bytes */
    size_t nbytes;                      /**< count * elem_size */
} tosac_npy;

/**
 * Parses a whole .npy file held in memory. `name` names the file in messages (NULL: "<npy>").
 * Rejects: bad magic, versions other than 1.0/2.0/3.0 (UNSUPPORTED), header longer than
 * TOSAC_NPY_MAX_HEADER or past the end, malformed dict, missing/duplicate/unknown keys,
 * fortran_order True (UNSUPPORTED), structured or unknown descrs (UNSUPPORTED), rank > 32
 * (UNSUPPORTED), negative dims, a shape whose size overflows, and data shorter or longer than the
 * shape needs. `*out` is written only on success; release it with tosac_npy_free.
 */
tosac_status tosac_npy_read_mem(const void *buf, size_t len, const char *name, tosac_npy *out, tosac_diag *d);

/** Reads and parses a .npy file (same checks as tosac_npy_read_mem; IO for OS errors). */
tosac_status tosac_npy_read_file(const char *path, tosac_npy *out, tosac_diag *d);

/**
 * Writes a format 1.0 .npy file: `descr` is written as given (it must be a known descr as listed
 * for tosac_npy.descr, any byte-order character), `data` holds exactly
 * product(shape) * element size == `nbytes` bytes, already in the byte order of `descr`.
 * The header is padded with spaces so that the data starts at a multiple of 64 bytes.
 * The file is written to a temporary file in the same directory and renamed over `path`, so a
 * failure leaves no partial file behind (a character device such as /dev/null is written in
 * place; directories and other non-regular files are refused).
 */
tosac_status tosac_npy_write_file(const char *path, const char *descr, int rank, const int64_t *shape,
                                  const void *data, size_t nbytes, tosac_diag *d);

/** Frees the data of a tosac_npy filled by a read function and zeroes it (NULL-safe). */
void tosac_npy_free(tosac_npy *n);

/**
 * Converts a parsed .npy array into TosaTensor.data encoding for TOSA type `t` (TOSA.md A.6; no
 * trailing 8-byte padding): INT4 packed two per byte (low nibble first), INT48 6 bytes LE, SHAPE
 * int64, BF16 upper half of fp32, BOOL 1 byte 0/1, FP8 raw bits. Accepted descrs (TOSA.md D.3):
 *   FP32 <f4;  FP16 <f2 or <f4 (rounded to nearest even);  BF16 <V2 or <f4 (RNE);
 *   FP8E4M3 <V1/|V1 or |u1 (raw bits);  FP8E5M2 |u1 or |V1 (raw bits);
 *   BOOL |b1 or |u1 (any nonzero byte -> 1);
 *   INT4/INT8/INT16/INT32: |i1 |u1 <i2 <u2 <i4, widened to int32 and then reinterpreted as the
 *     tensor type keeping the low bits (INT4: low 4 bits);
 *   INT48 and SHAPE: <i8 (INT48 keeps the low 48 bits).
 * `name` names the tensor/file in messages. On success `*bytes` is allocated with tosac_malloc
 * (free with tosac_free(*bytes, *nbytes)); it is NULL when *nbytes is 0.
 */
tosac_status tosac_npy_to_tosa(const tosac_npy *n, tosac_dtype t, const char *name, uint8_t **bytes,
                               size_t *nbytes, tosac_diag *d);

/**
 * Writes TosaTensor.data-encoded `bytes` of type `t` and shape `shape` as a .npy file with the
 * output descr for that type: INT8/INT4 |i1, INT16 <i2, INT32 <i4, INT48/SHAPE <i8 (INT48
 * sign-extended from bit 47), BOOL |b1 (nonzero -> 1), FP32 <f4, FP16 <f2, BF16 <V2,
 * FP8E4M3 <V1, FP8E5M2 |u1 (FP8 raw bits). `nbytes` may include the zero padding up to a
 * multiple of 8 bytes; the padding is ignored.
 */
tosac_status tosac_npy_write_tosa(const char *path, tosac_dtype t, int rank, const int64_t *shape,
                                  const uint8_t *bytes, size_t nbytes, tosac_diag *d);

#ifdef __cplusplus
}
#endif
#endif
