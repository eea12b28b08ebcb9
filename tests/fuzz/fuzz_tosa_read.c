/*
 * libFuzzer target: arbitrary bytes through the TOSA reader, and whatever it accepts through the
 * validator, the printer and the writer (a read-back of the written bytes must succeed).
 */
#include <stdint.h>
#include <stdlib.h>

#include "tosac/graph.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tosac_diag *d = tosac_diag_create();
    tosac_graph *g = NULL;
    tosac_read_opts opts = {0};
    opts.max_file_bytes = 1u << 20;
    if (tosac_tosa_read_mem(data, size, "fuzz.tosa", &opts, &g, d) == TOSAC_OK) {
        tosac_validate_opts vo = tosac_validate_opts_default();
        (void)tosac_validate(g, &vo, d);
        tosac_string_free(tosac_graph_print(g));
        uint8_t *out = NULL;
        size_t len = 0;
        if (tosac_tosa_write_mem(g, &out, &len, d) == TOSAC_OK) {
            tosac_graph *g2 = NULL;
            /* what we write we must be able to read */
            if (tosac_tosa_read_mem(out, len, "fuzz-rewrite.tosa", NULL, &g2, d) != TOSAC_OK) abort();
            tosac_graph_destroy(g2);
            tosac_buffer_free(out, len);
        }
        tosac_graph_destroy(g);
    }
    tosac_diag_destroy(d);
    return 0;
}
