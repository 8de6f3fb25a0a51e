/* eval/fold.h — inference-time rewrites run before lowering (`relayc --run`).
 *
 * fold_module rewrites the typed module in place so the interpreter does
 * fewer passes over memory. Every rewrite keeps the results equal up to
 * float rounding, applies to float32 NCHW/OIHW convolutions only, and only
 * where the intermediate values have no other use:
 *
 *  1. nn.batch_norm(conv(x, W) [+ bias const], γ, β, μ, σ²).0 with all four
 *     vectors constant  →  conv(x, W·s) + b' with s = γ/√(σ²+ε) and
 *     b' = (bias − μ)·s + β (scale/center honoured). W is rescaled in place
 *     when no other expression uses that constant, else copied.
 *  2. add(conv, C) / nn.bias_add(conv, C) with a per-channel constant C
 *     →  a conv bias.
 *  3. add(conv, r) with r of the result's type  →  conv with residual r.
 *  4. nn.relu(conv ...)  →  conv with a ReLU epilogue;
 *     nn.relu(nn.batch_norm(...).0)  →  batch_norm with a ReLU epilogue.
 * The fused conv is an nn.conv2d call with extra inputs (bias, residual) and
 * the attribute relayc.epilogue = "b" / "a" / "r" flags (ops/kernels/k_conv.c reads
 * them; ops/kernels/k_batchnorm.c reads "r"). Nothing is printed after this pass.
 *
 * RELAYC_NO_FOLD=1 disables the pass (for comparisons). fold_module also
 * tunes glibc malloc for the run that follows (freed tensors stay in the
 * heap for reuse instead of being unmapped; RELAYC_MALLOC_DEFAULT=1 keeps
 * the defaults).
 */
#ifndef RELAYC_EVAL_FOLD_H
#define RELAYC_EVAL_FOLD_H

#include "ir/ast.h"

/* Returns the number of rewrites made. Never fails: patterns it cannot
 * prove safe are left alone. */
int fold_module(Module *m);

#endif
