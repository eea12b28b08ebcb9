#include "passes/pass.h"

tosac_status pass_fold_conv_affine(pass_ctx *pc)
{
    (void)pc;
    return TOSAC_OK;
}
