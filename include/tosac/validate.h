/* Static validation of a TOSA graph against the specification's ERROR_IF rules, profiles and levels. */
#ifndef TOSAC_VALIDATE_H
#define TOSAC_VALIDATE_H

#include <stdint.h>

#include "tosac/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Profiles (bit mask). */
enum { TOSAC_PROFILE_INT = 1u << 0, TOSAC_PROFILE_FP = 1u << 1 };

/** Extensions (bit mask); names as in the spec without "EXT-", lower case on the command line. */
#define TOSAC_EXTENSIONS(X) \
    X(INT16, "int16") X(INT4, "int4") X(BF16, "bf16") X(FP8E4M3, "fp8e4m3") X(FP8E5M2, "fp8e5m2") \
    X(FFT, "fft") X(VARIABLE, "variable") X(CONTROLFLOW, "controlflow") X(DYNAMIC, "dynamic")     \
    X(DOUBLEROUND, "doubleround") X(INEXACTROUND, "inexactround")

enum tosac_ext_bit {
#define TOSAC_X(E, s) TOSAC_EXT_BIT_##E,
    TOSAC_EXTENSIONS(TOSAC_X)
#undef TOSAC_X
    TOSAC_EXT_COUNT
};
enum {
#define TOSAC_X(E, s) TOSAC_EXT_##E = 1u << TOSAC_EXT_BIT_##E,
    TOSAC_EXTENSIONS(TOSAC_X)
#undef TOSAC_X
    TOSAC_EXT_ALL = (1u << TOSAC_EXT_COUNT) - 1
};

/** Level limits (TOSA.md §C.1). */
typedef enum tosac_level { TOSAC_LEVEL_NONE = 0, TOSAC_LEVEL_8K = 1 } tosac_level;

typedef struct tosac_validate_opts {
    uint32_t profiles;   /**< TOSAC_PROFILE_* mask */
    uint32_t extensions; /**< TOSAC_EXT_* mask */
    tosac_level level;
} tosac_validate_opts;

/** Both profiles, every extension except EXT-DYNAMIC, level 8K. */
tosac_validate_opts tosac_validate_opts_default(void);
/** Lower-case extension name ("int16") of bit `bit`; parse a name into its mask bit. */
const char *tosac_ext_name(unsigned bit);
uint32_t tosac_ext_from_name(const char *name);

/**
 * Checks every statically checkable rule of the spec and reports each violation to `d` as
 * "block 'main' op 3 (CONV2D) [in: a, w, b, izp, wzp -> out: y]: <rule>".
 * Returns TOSAC_OK if valid, TOSAC_ERR_TOSA_ERROR if any ERROR_IF-class rule fails (structural
 * errors included), else TOSAC_ERR_UNPREDICTABLE if only level checks fail.
 */
tosac_status tosac_validate(const tosac_graph *g, const tosac_validate_opts *opts, tosac_diag *d);

#ifdef __cplusplus
}
#endif
#endif
