/*
 * Formatting pieces shared by the text printer (print.c) and `inspect` (src/tosa/inspect.c), so
 * that names, types, attributes and constant values look the same everywhere and are written once.
 * Every function appends to a tosac_strbuf (failure is sticky there) and tolerates hostile graphs:
 * unknown op numbers, out-of-range enum values, short constant data, undeclared values.
 */
#ifndef TOSAC_IR_PRINT_H
#define TOSAC_IR_PRINT_H

#include "core/strbuf.h"
#include "ir/graph.h"

/* Constants with at most this many elements have their values printed. */
#define TOSAC_PRINT_MAX_ELEMS 16

typedef enum tosac_fmt_style {
    TOSAC_FMT_TEXT, /* MLIR-like text: enums bare (INT32), non-finite floats as nan/inf/-inf */
    TOSAC_FMT_JSON  /* JSON values: enums as strings, non-finite floats as "NaN"/"Infinity"/"-Infinity" */
} tosac_fmt_style;

/* A name as written in text output: bare if it only has [A-Za-z0-9_.:/$@-], else JSON-quoted. */
void tosac_fmt_name(tosac_strbuf *sb, const char *name);
/* A value reference: "%name" (quoted as above); an undeclared value gets the marker
   " <undeclared>" after it. */
void tosac_fmt_value_ref(tosac_strbuf *sb, const tosac_value *v);
/* Dimensions "[1,16,16,3]" ("[]" for rank 0, "[*]" for unranked tensors). */
void tosac_fmt_dims(tosac_strbuf *sb, const tosac_value *v);
/* fmt(v) for each of vals[0..n), separated by ", ". */
void tosac_fmt_list(tosac_strbuf *sb, tosac_value *const *vals, uint32_t n,
                    void (*fmt)(tosac_strbuf *, const tosac_value *));
/* Type "INT8[1,16,16,3]", "shape[4]" for shape values, "?" for undeclared values, plus the tensor
   flags (" variable", " variable_name(\"x\")", " offset(N) size(M)") when set. */
void tosac_fmt_type(tosac_strbuf *sb, const tosac_value *v);

/* Spelling of enum-valued attributes; NULL for values outside the enum. */
const char *tosac_nan_mode_name(int64_t v);
const char *tosac_resize_mode_name(int64_t v);
const char *tosac_rounding_mode_name(int64_t v);

/*
 * Appends attribute field `id` of node `n` (nothing, returning false, if it is absent or the op has
 * no such field). Enums by name; BYTES8 fields of CLAMP decoded as one value of the input's
 * element type (raw byte list if that is impossible); strings quoted; BYTES as a byte list when
 * short, else "<N bytes>" (text) / {"bytes": N} (JSON).
 */
bool tosac_fmt_attr_value(tosac_strbuf *sb, const tosac_node *n, unsigned id, tosac_fmt_style st);
/*
 * All present attribute fields in field-id order. TEXT: "{pad = [1,1,1,1], acc_type = INT32}" and
 * nothing at all when none is present; JSON: an object, "{}" when none is present.
 */
void tosac_fmt_attrs(tosac_strbuf *sb, const tosac_node *n, tosac_fmt_style st);

/* Number of elements of the constant data of v if it can be decoded (data present, known element
   type, enough bytes), else -1. Shape values count their elements. */
int64_t tosac_const_elem_count(const tosac_value *v);
/*
 * Appends the constant values of v as a flat list "[1,2,3]" (BOOL as true/false, floats with enough
 * digits to round-trip) if tosac_const_elem_count(v) is in 0..max_elems; otherwise appends nothing
 * and returns false.
 */
bool tosac_fmt_const_values(tosac_strbuf *sb, const tosac_value *v, int64_t max_elems, tosac_fmt_style st);

#endif
