#include "passes/pass.h"

tosac_status pass_io_layout(pass_ctx *pc)
{
    (void)pc;
    return TOSAC_OK;
}
