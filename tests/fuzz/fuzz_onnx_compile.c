/*
 * libFuzzer target: arbitrary bytes through the ONNX reader, the converters and the pass pipeline
 * (every profile and extension, so integer, bf16 and control-flow lowerings are reached), and a
 * compiled graph through the TOSA writer. Any crash, sanitizer report, leak or runaway
 * allocation in the front end shows up here; a rejected model is the normal outcome.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tosac/compile.h"
#include "tosac/onnx.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    tosac_onnx_read_opts ro = {0};
    ro.max_file_bytes = 1u << 20;
    ro.max_nodes = 10000;
    if (tosac_onnx_read_mem(data, size, "fuzz.onnx", NULL, &ro, &m, d) == TOSAC_OK) {
        tosac_compile_opts co = {0};
        co.profiles = TOSAC_PROFILE_INT | TOSAC_PROFILE_FP;
        co.extensions = TOSAC_EXT_ALL & ~(uint32_t)TOSAC_EXT_DYNAMIC;
        co.io_nhwc = size & 1; /* both layouts, chosen by the input itself */
        tosac_graph *g = NULL;
        if (tosac_onnx_compile(m, &co, &g, d) == TOSAC_OK) {
            uint8_t *buf = NULL;
            size_t len = 0;
            if (tosac_tosa_write_mem(g, &buf, &len, d) == TOSAC_OK) tosac_buffer_free(buf, len);
            tosac_graph_destroy(g);
        }
        tosac_onnx_model_destroy(m);
    }
    tosac_diag_destroy(d);
    return 0;
}
