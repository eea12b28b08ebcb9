/* Internal pieces of the compile driver (src/driver/). */
#ifndef TOSAC_DRIVER_INTERNAL_H
#define TOSAC_DRIVER_INTERNAL_H

#include "ir/graph.h"
#include "tosac/driver.h"

/* Calibration samples of every graph input of the FP program, laid out as tosac_quant_opts.data
   wants them: data[s * n_inputs + i] points at sample s of input i. */
typedef struct drv_calib_input {
    float *buf;       /* n samples of nelem floats */
    size_t n, cap;    /* samples held, samples allocated */
    int64_t nelem;
} drv_calib_input;

typedef struct drv_calib {
    uint32_t n_inputs, n_samples;
    drv_calib_input *in;
    const float **data;
    const tosac_driver_opts *opts; /* on_input: told of every file before it is read */
} drv_calib;

/* Loads the arrays and .npy sources of `o` for the inputs of block `b` (nothing when there are
   none: n_samples stays 0). */
tosac_status drv_calib_load(const tosac_block *b, const tosac_driver_opts *o, drv_calib *c, tosac_diag *d);
void drv_calib_free(drv_calib *c);

#endif
