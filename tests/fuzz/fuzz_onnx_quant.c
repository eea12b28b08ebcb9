/*
 * libFuzzer target: arbitrary bytes through the ONNX front end and then the INT8 quantizer
 * (calibration on one seeded random sample, lowering in int8 or --a16w8, the I/O boundary chosen
 * by the input itself, validation), and the integer program through the TOSA writer. Programs above 2^18
 * tensor elements in total are skipped: calibration runs them, and a mutated shape must not turn
 * an input into a long inference (a timeout would be noise, not a finding).
 */
#include <stdint.h>
#include <stdlib.h>

#include "ir/graph.h"
#include "tosac/compile.h"
#include "tosac/onnx.h"
#include "tosac/quant.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t total_elements(const tosac_graph *g)
{
    int64_t n = 0;
    for (uint32_t r = 0; r < g->n_regions; r++)
        for (uint32_t b = 0; b < g->regions[r]->n_blocks; b++) {
            const tosac_block *bl = g->regions[r]->blocks[b];
            for (uint32_t t = 0; t < bl->n_tensors; t++) {
                int64_t e = tosac_value_nelem(bl->tensors[t]);
                if (e < 0 || e > (1 << 18)) return INT64_MAX;
                n += e;
            }
        }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    tosac_onnx_read_opts ro = {0};
    ro.max_file_bytes = 1u << 20;
    ro.max_nodes = 2000;
    if (tosac_onnx_read_mem(data, size, "fuzz.onnx", NULL, &ro, &m, d) == TOSAC_OK) {
        tosac_compile_opts co = {0};
        co.profiles = TOSAC_PROFILE_INT | TOSAC_PROFILE_FP;
        tosac_graph *g = NULL;
        if (tosac_onnx_compile(m, &co, &g, d) == TOSAC_OK && total_elements(g) <= (1 << 18)) {
            tosac_quant_opts qo = {0};
            qo.n_random = 1;
            qo.seed = size;
            qo.method = (tosac_quant_calib_method)(size % 3);
            qo.per_tensor = (size >> 2) & 1;
            qo.io = (tosac_quant_io_type)((size >> 3) % 3);
            qo.a16w8 = qo.io == TOSAC_QUANT_IO_INT8 && ((size >> 5) & 1); /* int16 activations, INT48 */
            tosac_graph *q = NULL;
            tosac_quant_iomap *io = NULL;
            if (tosac_quantize(g, &qo, &q, &io, d) == TOSAC_OK) {
                uint8_t *buf = NULL;
                size_t len = 0;
                if (tosac_tosa_write_mem(q, &buf, &len, d) == TOSAC_OK) tosac_buffer_free(buf, len);
                tosac_graph_destroy(q);
                tosac_quant_iomap_free(io);
            }
        }
        tosac_graph_destroy(g);
        tosac_onnx_model_destroy(m);
    }
    tosac_diag_destroy(d);
    return 0;
}
