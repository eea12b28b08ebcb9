/* Status codes and diagnostics shared by every tosac module. */
#ifndef TOSAC_STATUS_H
#define TOSAC_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Result of every fallible tosac call. Out-parameters are left untouched on failure. */
typedef enum tosac_status {
    TOSAC_OK = 0,
    TOSAC_ERR_INVALID_ARG,   /**< caller passed something unusable (NULL, bad option) */
    TOSAC_ERR_UNSUPPORTED,   /**< valid input that tosac does not handle */
    TOSAC_ERR_NOMEM,         /**< an allocation failed or a configured size limit was hit */
    TOSAC_ERR_FORMAT,        /**< malformed file (truncated, bad offsets, bad header) */
    TOSAC_ERR_TOSA_ERROR,    /**< a TOSA ERROR_IF condition holds (graph result ERROR) */
    TOSAC_ERR_UNPREDICTABLE, /**< a TOSA REQUIRE or level check fails (graph result UNPREDICTABLE) */
    TOSAC_ERR_IO,            /**< the operating system refused a file operation */
    TOSAC_ERR_INTERNAL       /**< a bug in tosac */
} tosac_status;

/** Short constant description of a status ("ok", "malformed file", ...). */
const char *tosac_status_str(tosac_status s);

/**
 * A diagnostics sink: host-side functions append one message per problem found, each naming the
 * file, operator or tensor and the rule. The library never prints; the caller decides what to do.
 * Every function taking a `tosac_diag *` accepts NULL (messages are then dropped).
 */
typedef struct tosac_diag tosac_diag;

tosac_diag *tosac_diag_create(void);
void tosac_diag_destroy(tosac_diag *d);
void tosac_diag_clear(tosac_diag *d);
/** Number of messages recorded (capped messages are counted in tosac_diag_dropped). */
size_t tosac_diag_count(const tosac_diag *d);
/** Message i (0-based): text without trailing newline; its status kind in *code if non-NULL. */
const char *tosac_diag_message(const tosac_diag *d, size_t i, tosac_status *code);
/** Messages not stored because the sink reached its cap (protects against hostile inputs). */
size_t tosac_diag_dropped(const tosac_diag *d);

#ifdef __cplusplus
}
#endif
#endif
