/* dce: remove operators whose results nothing uses (imports leave unused constants and shape
   helpers behind; other passes leave the operators they bypassed). */
#include "ir/rewrite.h"
#include "passes/pass.h"

tosac_status pass_dce(pass_ctx *pc)
{
    pc->changes += ir_dce(pc->b);
    return TOSAC_OK;
}
