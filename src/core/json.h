/* A small strict JSON reader (RFC 8259) for desc.json and similar inputs: untrusted text in,
   a tree in an arena out. Depth and size are bounded; errors name the line and column. */
#ifndef TOSAC_CORE_JSON_H
#define TOSAC_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "tosac/status.h"

typedef enum tosac_json_kind {
    TOSAC_JSON_NULL,
    TOSAC_JSON_BOOL,
    TOSAC_JSON_NUMBER,
    TOSAC_JSON_STRING,
    TOSAC_JSON_ARRAY,
    TOSAC_JSON_OBJECT
} tosac_json_kind;

typedef struct tosac_json tosac_json;
struct tosac_json {
    tosac_json_kind kind;
    bool b;
    double num;
    const char *str;     /* STRING: NUL-terminated UTF-8 (escapes decoded; embedded NUL rejected) */
    uint32_t n;          /* ARRAY/OBJECT: number of items */
    tosac_json **items;  /* ARRAY/OBJECT values */
    const char **keys;   /* OBJECT keys (parallel to items) */
};

#define TOSAC_JSON_MAX_DEPTH 64

tosac_status tosac_json_parse(const char *text, size_t len, const char *name, tosac_arena *a, tosac_json **out,
                              tosac_diag *d);
/* Object member by key (first match), or NULL. */
const tosac_json *tosac_json_get(const tosac_json *obj, const char *key);

#endif
