#include "passes/pass.h"

tosac_status pass_fold_constants(pass_ctx *pc)
{
    (void)pc;
    return TOSAC_OK;
}
