/* Internal side of the diagnostics sink. */
#ifndef TOSAC_CORE_DIAG_H
#define TOSAC_CORE_DIAG_H

#include <stdarg.h>

#include "tosac/status.h"

#if defined(__GNUC__)
#define TOSAC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TOSAC_PRINTF(f, a)
#endif

/* Appends one formatted message; returns `code` so callers can `return tosac_diag_add(...)`. */
tosac_status tosac_diag_add(tosac_diag *d, tosac_status code, const char *fmt, ...) TOSAC_PRINTF(3, 4);
tosac_status tosac_diag_vadd(tosac_diag *d, tosac_status code, const char *fmt, va_list ap);

/* At most this many messages are kept; the rest are counted. */
#define TOSAC_DIAG_MAX 10000

#endif
