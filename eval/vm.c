/* eval/vm.c — the interpreter: a register machine with heap frames.
 *
 * State: a growable value stack (registers of every active frame, each frame
 * a window [base, base + code->nregs)) and a growable frame array. A call
 * pushes a frame whose window starts right after the caller's; a tail call
 * releases the current window's clear list and reuses it (TSELF, a self
 * tail call, just resets the parameters and jumps to word 0); a return
 * releases the clear list and stores the result into the caller's
 * destination register. The loop keeps `R` (the current window), `ip` and
 * the top frame in locals and refreshes them after anything that may grow
 * the stack or the frame array. Dispatch is direct threading through a
 * table of label addresses (GNU C `&&label`), one indirect jump per handler.
 *
 * Invariants: registers own their values; an instruction reads all its
 * operands (moving those flagged ARG_MOVE) before it releases and replaces
 * its destination, so `a` may equal an operand. No slot above the running
 * frame holds a heap object (eval/code.h, clear lists), so calls copy their
 * arguments in without releasing anything and only empty memo registers.
 *
 * Scalar fast paths: the typed instructions (eval/code.h) compute int32 and
 * float32 immediates after one tag check per operand, compare-and-branch in
 * one dispatch, and fall back to the operator call; the generic ADD..NE
 * handle int32/float32 pairs inline; other immediate dtypes go through
 * kscalar_binary (ops/kernels/k_elemwise.c); anything else builds a KernelCtx and
 * calls the registry's kernel (timed per operator under --profile). Fused
 * pairs (F<T><op1><op2>) do two typed steps in one dispatch, float32 ones in
 * single precision (each step correctly rounded, as the unfused pair would);
 * TSELFM copies only the self-call arguments not already in place. FX
 * evaluates a float32 expression tree in one instruction (fx_eval, in
 * registers; fx_generic node by node when a leaf is not an immediate).
 * FXB runs a trace (fxb_eval): tag checks once, then the instructions' work
 * in order with side exits; a trace that restarts into itself loops inside
 * fxb_eval. Its typed copies go field by field so the next loads forward
 * from the stores (a whole-Value copy of fields just stored stalls).
 */
#include "eval/vm.h"
#include "eval/profile.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ops/kernels/kernel.h"
#include "ops/op_ids.h"
#include "ops/registry.h"

typedef struct Frame {
  const Code *code;
  const uint32_t *ip; /* resume point (saved while a callee runs) */
  uint32_t base;      /* first register in the value stack */
  uint32_t ret;       /* absolute stack index of the caller's destination register */
  bool tail;          /* entered by a tail call: the frames it replaced are gone */
} Frame;

typedef struct VM {
  const Program *prog;
  Diag *d;
  Value *stack;
  size_t cap;          /* Values */
  size_t max_values;
  Frame *frames;
  size_t nframes, capf; /* nframes is kept up to date only outside run() and on errors */
  Frame *flimit;        /* frames + min(capf, max_frames) */
  uint64_t max_frames;
  uint64_t steps_left;  /* VmLimits.max_steps counting down (UINT64_MAX: no budget) */
  uint64_t max_steps;
} VM;

static VmLimits default_limits;

void vm_set_default_limits(const VmLimits *limits) {
  default_limits = limits ? *limits : (VmLimits){0, 0, 0};
}

/* ------------------------------------------------------------ errors */

static void print_loc(VM *vm, Span sp, char *buf, size_t cap) {
  Source *src = vm->d->src ? diag_span_source(vm->d, &sp) : NULL;
  if (!src) {
    snprintf(buf, cap, "?");
    return;
  }
  uint32_t line = 0, col = 0;
  source_line_col(src, sp.lo, &line, &col);
  snprintf(buf, cap, "%s:%u:%u", src->name, line, col);
}

/* Frame k's line: "in @f called from @g at file:l:c" (k == 0: "in @main"). */
static void frame_line(VM *vm, size_t k, char *buf, size_t cap) {
  const Frame *fr = &vm->frames[k];
  if (k == 0) {
    snprintf(buf, cap, "in %s", fr->code->name);
    return;
  }
  const Frame *caller = &vm->frames[k - 1];
  uint32_t pc = (uint32_t)(caller->ip - caller->code->ins);
  char loc[400];
  print_loc(vm, code_span_at(caller->code, pc ? pc - 1 : 0), loc, sizeof loc);
  snprintf(buf, cap, "in %s called from %s at %s", fr->code->name, caller->code->name, loc);
}

/* The Relay backtrace, innermost first; runs of identical lines (deep
 * recursion) print once with a count, and at most 16 lines are shown. */
static void backtrace(VM *vm) {
  FILE *out = vm->d->out;
  if (!out) return;
  char line[512], next[512];
  size_t k = vm->nframes, shown = 0, skipped = 0;
  while (k-- > 0) {
    frame_line(vm, k, line, sizeof line);
    size_t run = 1;
    while (k > 1 && vm->frames[k - 1].code == vm->frames[k].code &&
           vm->frames[k - 2].code == vm->frames[k - 1].code &&
           vm->frames[k - 2].ip == vm->frames[k - 1].ip) {
      run++;
      k--;
    }
    if (k == 1) {
      frame_line(vm, 0, next, sizeof next);
      if (strcmp(next, line) == 0) {
        run++;
        k--;
      }
    }
    if (shown >= 12 && k >= 4) {
      skipped += run;
      continue;
    }
    if (skipped) {
      fprintf(out, "  ... %zu more frames ...\n", skipped);
      skipped = 0;
    }
    if (run > 1) fprintf(out, "  %s (%zu times)\n", line, run);
    else fprintf(out, "  %s\n", line);
    if (vm->frames[k].tail) fputs("  (... tail calls ...)\n", out); /* callers it replaced */
    shown++;
  }
}

static void vm_report(VM *vm, Span sp, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void vm_report(VM *vm, Span sp, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vreport(vm->d, DIAG_ERROR, sp, fmt, ap);
  va_end(ap);
  backtrace(vm);
}

/* Releases every register of every frame. */
static void unwind(VM *vm) {
  if (!vm->nframes) return;
  const Frame *top = &vm->frames[vm->nframes - 1];
  size_t end = top->base + top->code->nregs;
  for (size_t i = 0; i < end; i++) value_release(vm->stack[i]);
  vm->nframes = 0;
}

/* ------------------------------------------------------------ stack */

/* Makes room for `need` registers; false when over the limit. New slots are
 * empty. No slot above the top frame's window holds a heap object (returns
 * and tail calls release their clear lists, eval/code.h), so a call writes
 * its callee's registers without releasing anything and only empties the
 * memo registers. */
static bool ensure_stack(VM *vm, size_t need) {
  if (need <= vm->cap) return true;
  if (need > vm->max_values) return false;
  size_t cap = vm->cap ? vm->cap : 1024;
  while (cap < need) cap *= 2;
  if (cap > vm->max_values) cap = vm->max_values;
  vm->stack = mem_realloc(vm->stack, cap * sizeof(Value));
  memset(vm->stack + vm->cap, 0, (cap - vm->cap) * sizeof(Value));
  vm->cap = cap;
  return true;
}

static bool push_frame_slot(VM *vm) {
  if (vm->nframes >= vm->max_frames) return false;
  if (vm->nframes == vm->capf) {
    vm->capf = vm->capf ? vm->capf * 2 : 256;
    vm->frames = mem_realloc(vm->frames, vm->capf * sizeof(Frame));
  }
  vm->nframes++;
  return true;
}

/* ------------------------------------------------------------ operators */

/* cast of an immediate (spec/ops.md §2: float → int truncates and
 * saturates, → bool is x != 0 with NaN False). */
static Value scalar_cast(Value v, DType from, DType to) {
  if (dtype_is_bool(to)) return value_bool(dtype_is_float(from) ? (v.f < 0 || v.f > 0) : v.i != 0);
  if (dtype_is_float(to)) {
    double d = dtype_is_float(from) ? v.f
               : (from.code == DT_UINT && from.bits == 64) ? (double)(uint64_t)v.i : (double)v.i;
    return value_float(to, d);
  }
  if (!dtype_is_float(from)) return value_int(to, v.i);
  return value_int(to, tensor_f64_to_int(to, v.f));
}

/* Runs operator call `oc` on args (consumed). */
static int op_call_run(const OpCall *oc, Value *args, uint32_t n, Value *out, char *err) {
  bool all_scalar = true;
  for (uint32_t i = 0; i < n; i++) all_scalar &= value_kind(args[i]) == VK_SCALAR;
  if (all_scalar && n == 2 && args[0].tag == args[1].tag) {
    int rc = kscalar_binary(oc->op, args[0], args[1], out, err);
    if (rc >= 0) return rc;
  } else if (all_scalar && n == 1 && oc->op == OP_CAST) {
    if (oc->cast_imm) { /* target dtype parsed once by the lowering */
      *out = scalar_cast(args[0], value_scalar_dtype(args[0]), oc->cast_to);
      return KERNEL_OK;
    }
  } else if (all_scalar && n == 1) {
    int rc = kscalar_unary(oc->op, args[0], out, err);
    if (rc >= 0) return rc;
  }
  const OpDef *def = op_get(oc->op);
  if (!def || !def->kernel) {
    for (uint32_t i = 0; i < n; i++) value_release(args[i]);
    snprintf(err, KERNEL_ERR_SIZE, "operator %s has no kernel in this build", def ? def->name : "?");
    return KERNEL_ERROR;
  }
  /* inputs as tensors; a single tuple argument is flattened into the inputs */
  Value *src = args;
  uint32_t nin = n;
  Value tuple = value_none();
  if (n == 1 && value_kind(args[0]) == VK_TUPLE) {
    tuple = args[0];
    src = value_tuple(tuple)->f;
    nin = value_tuple(tuple)->n;
  }
  Tensor *small[8];
  Tensor **ins = nin <= 8 ? small : mem_malloc(nin * sizeof *ins);
  int rc = KERNEL_OK;
  for (uint32_t i = 0; i < nin; i++) {
    if (value_kind(tuple) == VK_NONE && value_kind(src[i]) == VK_TENSOR) {
      ins[i] = src[i].t; /* ownership moves into the context */
      src[i] = value_none();
    } else {
      ins[i] = value_to_tensor(&src[i]);
      if (value_kind(tuple) == VK_NONE) value_release(src[i]);
      if (!ins[i]) {
        snprintf(err, KERNEL_ERR_SIZE, "%s: input %u is not a tensor", def->name, i);
        rc = KERNEL_ERROR;
      }
    }
  }
  value_release(tuple);
  KernelCtx c;
  kernel_ctx_init(&c, oc->op, ins, nin, oc->attrs, oc->out_type);
  if (rc == KERNEL_OK) {
    rc = def->kernel(&c);
    if (rc != KERNEL_OK) {
      snprintf(err, KERNEL_ERR_SIZE, "%s", c.err[0] ? c.err : "operator failed");
    } else if (c.is_tuple) {
      Value t = value_tuple_new(c.nouts);
      for (uint32_t i = 0; i < c.nouts; i++) {
        value_tuple(t)->f[i] = value_from_tensor(c.outs[i]);
        c.outs[i] = NULL;
      }
      *out = t;
    } else if (c.out) {
      *out = value_from_tensor(c.out);
      c.out = NULL;
    } else {
      snprintf(err, KERNEL_ERR_SIZE, "%s: kernel produced no result", def->name);
      rc = KERNEL_ERROR;
    }
  }
  kernel_ctx_clear(&c);
  if (ins != small) mem_free(ins);
  return rc;
}

/* op_call_run, timed per operator under --profile (eval/profile.h). */
static int op_call(const OpCall *oc, Value *args, uint32_t n, Value *out, char *err) {
  if (!profile_on) return op_call_run(oc, args, n, out, err);
  uint64_t t0 = profile_now_ns();
  int rc = op_call_run(oc, args, n, out, err);
  profile_add(oc->op, profile_now_ns() - t0);
  return rc;
}

/* ------------------------------------------------------------ the loop */

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

#define TAKE(wd)                                                                                   \
  (((wd) & ARG_MOVE) ? take_reg(&R[ARG_REG(wd)]) : value_retain(R[(wd)]))

static inline Value take_reg(Value *r) {
  Value v = *r;
  r->tag = VK_NONE;
  return v;
}

static inline void set_reg(Value *r, Value v) {
  uint32_t k = r->tag & 0xff;
  if (UNLIKELY(k >= VK_TENSOR)) value_release(*r);
  *r = v;
}

/* set_reg of a float32 immediate, stored field by field (value_set_f32). */
static inline void set_f32(Value *r, float x) {
  if (UNLIKELY((r->tag & 0xff) >= VK_TENSOR)) value_release(*r);
  value_set_f32(r, x);
}

static inline void drop_if_moved(Value *R, uint32_t wd) {
  if (wd & ARG_MOVE) set_reg(&R[ARG_REG(wd)], value_none());
}

/* Releases the registers of clear list `cl` (eval/code.h) and empties them. */
static inline void clear_list(Value *R, const uint32_t *cl) {
  for (uint32_t i = 1; i <= cl[0]; i++) {
    Value *r = &R[cl[i]];
    if ((r->tag & 0xff) >= VK_TENSOR) value_release(*r);
    r->tag = VK_NONE;
  }
}

/* Empties the memo registers of a frame being entered (they may hold stale
 * immediates; JSET tests them before anything writes them). */
static inline void clear_memo(Value *R, const Code *c) {
  for (uint32_t i = 0; i < c->nmemo; i++) R[c->memo_lo + i].tag = VK_NONE;
}

static inline bool ord_ne(float a, float b) { return a < b || a > b; }

static inline float imm_f32(uint32_t w) {
  float x;
  memcpy(&x, &w, sizeof x);
  return x;
}

/* Position of a typed opcode within its block of 4 (II IK FF FK), or -1. */
static inline int typed_variant(Opcode o) {
  if (o < I_ADDII) return -1;
  return (int)(o < I_LTII ? (o - I_ADDII) % 4 : (o - I_LTII) % 4);
}

/* Operand word `wd` of a binary instruction as a value: K[i], or the register (moved or copied). */
static inline Value bin_operand(const Code *code, Value *R, uint32_t wd) {
  if (wd & ARG_K) return value_retain(code->consts[ARG_REG(wd)]);
  return TAKE(wd);
}

/* Register at byte offset `off` of the window (typed instructions). */
#define ROFF(R, off) ((Value *)((char *)(R) + (off)))

/* The generic path of every binary instruction (ADD..BIN and the typed
 * variants, whose immediate is rebuilt from the word): the operator call,
 * its result stored into the destination. */
static int binop_generic(const Code *code, Value *R, const uint32_t *ip, char *err) {
  Opcode o = (Opcode)ip[0];
  int v = typed_variant(o);
  Value args[2], r = value_none();
  Value *dst;
  if (v < 0) {
    args[0] = bin_operand(code, R, ip[3]);
    args[1] = bin_operand(code, R, ip[4]);
    dst = &R[ip[1]];
  } else {
    args[0] = value_retain(*ROFF(R, ip[3]));
    if (v == 1) args[1] = value_i32((int32_t)ip[4]);
    else if (v == 3) args[1] = value_f32(imm_f32(ip[4]));
    else args[1] = value_retain(*ROFF(R, ip[4]));
    dst = ROFF(R, ip[1]);
  }
  int rc = op_call(&code->ops[ip[2]], args, 2, &r, err);
  if (rc == KERNEL_OK) set_reg(dst, r);
  return rc;
}

/* Operand word of a fused instruction (eval/code.h): a byte offset into the
 * frame, or (bit 0 set) offset + 1 into the constants. */
static inline const Value *fused_operand(const Code *code, const Value *R, uint32_t wd) {
  const char *base = (wd & 1) ? (const char *)code->consts - 1 : (const char *)R;
  return (const Value *)(base + wd);
}

/* The generic path of a fused pair: the two operator calls. Returns the
 * failing part's pc offset (0 or 5) through *at. */
static int fused_generic(const Code *code, Value *R, const uint32_t *ip, char *err, uint32_t *at) {
  uint32_t v = (uint32_t)(ip[0] < I_FFADDADD ? ip[0] - I_FIADDADD : ip[0] - I_FFADDADD) % 4;
  Value args[2] = {value_retain(*fused_operand(code, R, ip[4])), value_retain(*fused_operand(code, R, ip[5]))};
  Value t = value_none(), r = value_none();
  *at = 0;
  int rc = op_call(&code->ops[ip[2]], args, 2, &t, err);
  if (rc != KERNEL_OK) return rc;
  Value z = value_retain(*fused_operand(code, R, ip[6]));
  args[0] = v == 2 ? z : t; /* RSUB: z - t */
  args[1] = v == 2 ? t : z;
  *at = 5;
  rc = op_call(&code->ops[ip[3]], args, 2, &r, err);
  if (rc == KERNEL_OK) set_reg(ROFF(R, ip[1]), r);
  return rc;
}

/* ------------------------------------------------------------ float32 trees */

/* What the two float32 evaluators (fx_eval, fxb_eval) share about a step:
 * FX_FORMS(X) names every (form, push) pair of a step program; FX_NINE_OPS
 * the nine operators of one, arithmetic then comparisons; FX_TABLE_ROW their
 * dispatch entries, to labels PFX<form><push>_<op>; FX_OPERANDS_<form> the
 * operands x and y, LEAF(dst, at) reading the float32 in register p[at]
 * (checked or not: the evaluator's choice), `st`/`sp` the pushed values;
 * FX_ARITH_STEP an arithmetic step, the same in both (a comparison is not:
 * fx_eval returns its outcome, fxb_eval branches on it). */
#define FX_FORMS(X)                                                                                \
  X(LL, 0) X(LK, 0) X(KL, 0) X(AL, 0) X(LA, 0) X(AK, 0) X(KA, 0) X(SA, 0) X(LL, 0x100) X(LK, 0x100) X(KL, 0x100)
#define FX_NINE_OPS(ARITH, CMP, FORM, P)                                                           \
  ARITH(FORM, P, ADD, +)                                                                           \
  ARITH(FORM, P, SUB, -)                                                                           \
  ARITH(FORM, P, MUL, *)                                                                           \
  CMP(FORM, P, LT, x < y)                                                                          \
  CMP(FORM, P, LE, x <= y)                                                                         \
  CMP(FORM, P, GT, x > y)                                                                          \
  CMP(FORM, P, GE, x >= y)                                                                         \
  CMP(FORM, P, EQ, x == y)                                                                         \
  CMP(FORM, P, NE, ord_ne(x, y))
#define FX_TABLE_ROW(PFX, FORM, P)                                                                 \
  [FX_##FORM | FXO_ADD << 4 | P] = &&PFX##FORM##P##_ADD, [FX_##FORM | FXO_SUB << 4 | P] = &&PFX##FORM##P##_SUB, \
  [FX_##FORM | FXO_MUL << 4 | P] = &&PFX##FORM##P##_MUL, [FX_##FORM | FXO_LT << 4 | P] = &&PFX##FORM##P##_LT,    \
  [FX_##FORM | FXO_LE << 4 | P] = &&PFX##FORM##P##_LE, [FX_##FORM | FXO_GT << 4 | P] = &&PFX##FORM##P##_GT,      \
  [FX_##FORM | FXO_GE << 4 | P] = &&PFX##FORM##P##_GE, [FX_##FORM | FXO_EQ << 4 | P] = &&PFX##FORM##P##_EQ,      \
  [FX_##FORM | FXO_NE << 4 | P] = &&PFX##FORM##P##_NE,
#define FX_OPERANDS_LL(LEAF) LEAF(x, 2); LEAF(y, 3)
#define FX_OPERANDS_LK(LEAF) LEAF(x, 2); y = imm_f32(p[3])
#define FX_OPERANDS_KL(LEAF) x = imm_f32(p[2]); LEAF(y, 3)
#define FX_OPERANDS_AL(LEAF) x = acc; LEAF(y, 2)
#define FX_OPERANDS_LA(LEAF) LEAF(x, 2); y = acc
#define FX_OPERANDS_AK(LEAF) x = acc; y = imm_f32(p[2])
#define FX_OPERANDS_KA(LEAF) x = imm_f32(p[2]); y = acc
#define FX_OPERANDS_SA(LEAF) x = st[--sp]; y = acc
#define FX_PUSH_0
#define FX_PUSH_0x100 st[sp++] = acc;
#define FX_ARITH_STEP(PFX, LEAF, FORM, P, NAME, OP)                                                \
  PFX##FORM##P##_##NAME : {                                                                        \
    float x, y;                                                                                    \
    FX_PUSH_##P FX_OPERANDS_##FORM(LEAF);                                                          \
    acc = x OP y;                                                                                  \
    p += fx_step_words(FX_##FORM);                                                                 \
    goto *tab[p[0] & 0x1ff];                                                                       \
  }

/* Runs FX step program p (eval/code.h) over the window R in single
 * precision, the running value in a machine register (a function of its
 * own: inside run() the compiler keeps it in memory). Returns -1 when a
 * leaf is not a float32 immediate (nothing written), else the comparison's
 * outcome (0/1) of an FXC/FXJ program, or 1 after storing an FX program's
 * value into *dst (which holds no heap object). One indirect jump per step. */
static int fx_eval(const uint32_t *p, const Value *R, Value *dst) {
#define FX_T(FORM, P) FX_TABLE_ROW(fx_, FORM, P)
  static const void *const tab[0x200] = {FX_FORMS(FX_T)[FX_END] = &&fx_end};
#undef FX_T
  float acc = 0, st[FX_STACK];
  uint32_t sp = 0;
  goto *tab[p[0] & 0x1ff];
#define FX_LEAF(dst_, at)                                                                          \
  do {                                                                                             \
    const Value *v_ = ROFF(R, p[at]);                                                              \
    if (UNLIKELY(v_->tag != TAG_F32)) return -1;                                                   \
    dst_ = value_f32_of(v_);                                                                       \
  } while (0)
#define FX_ARITH(FORM, P, NAME, OP) FX_ARITH_STEP(fx_, FX_LEAF, FORM, P, NAME, OP)
#define FX_CMP(FORM, P, NAME, COND)                                                                \
  fx_##FORM##P##_##NAME : {                                                                        \
    float x, y;                                                                                    \
    FX_PUSH_##P FX_OPERANDS_##FORM(FX_LEAF);                                                       \
    return (COND) ? 1 : 0;                                                                         \
  }
#define FX_FORM(FORM, P) FX_NINE_OPS(FX_ARITH, FX_CMP, FORM, P)
  FX_FORMS(FX_FORM)
fx_end:
  set_f32(dst, acc);
  return 1;
#undef FX_LEAF
#undef FX_ARITH
#undef FX_CMP
#undef FX_FORM
}

/* The generic path of an FX instruction at ip: the tree node by node
 * through the operator calls (leaves copied). On failure *sp is the span
 * of the failing node. */
static int fx_generic(const Code *code, const Value *R, const uint32_t *ip, Value *out, char *err, Span *sp) {
  const uint32_t *p = code->xprog + ip[2];
  Value acc = value_none(), st[FX_STACK];
  uint32_t depth = 0;
  for (;;) {
    uint32_t wd = p[0], form = wd & 15, o = (wd >> 4) & 15, at = 2;
    if (form == FX_END) break;
    const OpCall *oc = &code->ops[p[1]];
    Value args[2];
    if (wd & FX_PUSH) {
      st[depth++] = acc;
      acc = value_none();
    }
    for (int i = 0; i < 2; i++) {
      char kind = i ? fx_y_kind(form) : fx_x_kind(form);
      if (kind == 'L') args[i] = value_retain(*ROFF(R, p[at++]));
      else if (kind == 'K') args[i] = value_f32(imm_f32(p[at++]));
      else if (i == 0 && form == FX_SA) args[i] = st[--depth];
      else args[i] = acc, acc = value_none();
    }
    int rc = op_call(oc, args, 2, &acc, err);
    if (rc != KERNEL_OK) {
      while (depth) value_release(st[--depth]);
      *sp = oc->span;
      return rc;
    }
    if (o >= FXO_LT) break;
    p += at;
  }
  *out = acc;
  return KERNEL_OK;
}

/* Runs FXB trace p (eval/code.h) over the window R: -1 when a checked
 * register is not the expected immediate (nothing written), else the pc to
 * continue at. The running value stays in a machine register; leaves are
 * read without tag checks (checked on entry, or written by the trace). */
static int64_t fxb_eval(const uint32_t *p, Value *R, uint64_t *steps_left) {
#define FXB_T(FORM, P) FX_TABLE_ROW(fb_, FORM, P)
#define FXB_I(FORM)                                                                                \
  [FXT_##FORM | FXO_ADD << 4] = &&fb_##FORM##_ADD, [FXT_##FORM | FXO_SUB << 4] = &&fb_##FORM##_SUB,  \
  [FXT_##FORM | FXO_MUL << 4] = &&fb_##FORM##_MUL, [FXT_##FORM | FXO_LT << 4] = &&fb_##FORM##_LT,    \
  [FXT_##FORM | FXO_LE << 4] = &&fb_##FORM##_LE, [FXT_##FORM | FXO_GT << 4] = &&fb_##FORM##_GT,      \
  [FXT_##FORM | FXO_GE << 4] = &&fb_##FORM##_GE, [FXT_##FORM | FXO_EQ << 4] = &&fb_##FORM##_EQ,      \
  [FXT_##FORM | FXO_NE << 4] = &&fb_##FORM##_NE
  static const void *const tab[0x200] = {
      FX_FORMS(FXB_T) FXB_I(IRR), FXB_I(IRK),
      [FXT_OUT] = &&fb_out, [FXT_COPY] = &&fb_copy, [FXT_COPY | 1 << 4] = &&fb_copyf,
      [FXT_COPY | 2 << 4] = &&fb_copyi, [FXT_END] = &&fb_end, [FXT_LOOP] = &&fb_loop,
  };
#undef FXB_T
#undef FXB_I
  p++;
  uint32_t n = *p++;
  for (uint32_t i = 0; i < n; i++)
    if (UNLIKELY(ROFF(R, p[i])->tag != TAG_F32)) return -1;
  p += n;
  n = *p++;
  for (uint32_t i = 0; i < n; i++)
    if (UNLIKELY(ROFF(R, p[i])->tag != TAG_I32)) return -1;
  p += n;
  float acc = 0, st[FX_STACK];
  uint32_t sp = 0;
  const uint32_t *const steps = p;
  goto *tab[p[0] & 0x1ff];
#define FB_LEAF(dst_, at) dst_ = value_f32_of(ROFF(R, p[at]))
#define FB_ARITH(FORM, P, NAME, OP) FX_ARITH_STEP(fb_, FB_LEAF, FORM, P, NAME, OP)
#define FB_CMP(FORM, P, NAME, COND)                                                                \
  fb_##FORM##P##_##NAME : {                                                                        \
    float x, y;                                                                                    \
    FX_PUSH_##P FX_OPERANDS_##FORM(FB_LEAF);                                                       \
    p += fx_step_words(FX_##FORM);                                                                 \
    if ((uint32_t)(COND) == p[0]) return p[1];                                                     \
    p += 2;                                                                                        \
    goto *tab[p[0] & 0x1ff];                                                                       \
  }
#define FB_FORM(FORM, P) FX_NINE_OPS(FB_ARITH, FB_CMP, FORM, P)
  FX_FORMS(FB_FORM)
  /* int32: arithmetic wraps (as the typed instructions) */
#define FB_IARITH(FORM, NAME, OP, Y)                                                               \
  fb_##FORM##_##NAME : {                                                                           \
    uint32_t u = (uint32_t)ROFF(R, p[2])->i, v = (Y);                                              \
    set_reg(ROFF(R, p[1]), value_i32((int32_t)(u OP v)));                                          \
    p += 4;                                                                                        \
    goto *tab[p[0] & 0x1ff];                                                                       \
  }
#define FB_ICMP(FORM, NAME, OP, Y)                                                                 \
  fb_##FORM##_##NAME : {                                                                           \
    int32_t s = (int32_t)ROFF(R, p[1])->i, t = (int32_t)(Y);                                       \
    if ((uint32_t)(s OP t) == p[3]) return p[4];                                                   \
    p += 5;                                                                                        \
    goto *tab[p[0] & 0x1ff];                                                                       \
  }
#define FB_IFORM(FORM, YA, YC)                                                                     \
  FB_IARITH(FORM, ADD, +, YA)                                                                      \
  FB_IARITH(FORM, SUB, -, YA)                                                                      \
  FB_IARITH(FORM, MUL, *, YA)                                                                      \
  FB_ICMP(FORM, LT, <, YC)                                                                         \
  FB_ICMP(FORM, LE, <=, YC)                                                                        \
  FB_ICMP(FORM, GT, >, YC)                                                                         \
  FB_ICMP(FORM, GE, >=, YC)                                                                        \
  FB_ICMP(FORM, EQ, ==, YC)                                                                        \
  FB_ICMP(FORM, NE, !=, YC)
  FB_IFORM(IRR, (uint32_t)ROFF(R, p[3])->i, ROFF(R, p[2])->i)
  FB_IFORM(IRK, p[3], p[2])
fb_out:
  set_f32(ROFF(R, p[1]), acc);
  p += 2;
  goto *tab[p[0] & 0x1ff];
fb_copy:
  *ROFF(R, p[1]) = *ROFF(R, p[2]);
  p += 3;
  goto *tab[p[0] & 0x1ff];
fb_copyf: /* field by field: the loads forward from the stores that wrote R[s] */
  set_f32(ROFF(R, p[1]), value_f32_of(ROFF(R, p[2])));
  p += 3;
  goto *tab[p[0] & 0x1ff];
fb_copyi:
  set_reg(ROFF(R, p[1]), value_i32((int32_t)ROFF(R, p[2])->i));
  p += 3;
  goto *tab[p[0] & 0x1ff];
fb_end:
  return p[1];
fb_loop:
  if (UNLIKELY((*steps_left)-- == 0)) return -2; /* the step budget (VmLimits.max_steps) */
  p = steps;
  goto *tab[p[0] & 0x1ff];
#undef FB_LEAF
#undef FB_ARITH
#undef FB_CMP
#undef FB_FORM
#undef FB_IARITH
#undef FB_ICMP
#undef FB_IFORM
}
#undef FX_FORMS
#undef FX_NINE_OPS
#undef FX_TABLE_ROW
#undef FX_OPERANDS_LL
#undef FX_OPERANDS_LK
#undef FX_OPERANDS_KL
#undef FX_OPERANDS_AL
#undef FX_OPERANDS_LA
#undef FX_OPERANDS_AK
#undef FX_OPERANDS_KA
#undef FX_OPERANDS_SA
#undef FX_PUSH_0
#undef FX_PUSH_0x100
#undef FX_ARITH_STEP

/* Room for one more frame whose registers end at stack index `top`. False on
 * overflow (depth or memory limit). May move vm->frames and vm->stack. */
static bool call_room(VM *vm, size_t nframes, size_t top) {
  if (nframes >= vm->max_frames) return false;
  if (nframes == vm->capf) {
    vm->capf = vm->capf ? vm->capf * 2 : 256;
    vm->frames = mem_realloc(vm->frames, vm->capf * sizeof(Frame));
  }
  vm->flimit = vm->frames + (vm->capf < vm->max_frames ? vm->capf : vm->max_frames);
  return ensure_stack(vm, top);
}

__attribute__((optimize("no-crossjumping", "no-gcse"))) static int run(VM *vm, Value *result) {
  static const void *const labels[I_COUNT] = {
#define X(name, layout) [I_##name] = &&L_##name,
      EVAL_OPCODES(X)
#undef X
  };
  const Program *prog = vm->prog;
  Frame *fr = &vm->frames[vm->nframes - 1];
  const Code *code = fr->code;
  const uint32_t *ins = code->ins;
  const uint32_t *ip = ins;
  Value *R = vm->stack + fr->base;
  char err[KERNEL_ERR_SIZE];
  Span fail_span;

#define SPAN_HERE() code_span_at(code, (uint32_t)(ip - ins))
#define DISPATCH() goto *labels[*ip]
#define STEP_BUDGET_MSG "step budget exhausted: more than %" PRIu64 " calls and loop iterations"
/* one step of the budget, at every call, tail call and self loop */
#define STEP()                                                                                     \
  do {                                                                                             \
    if (UNLIKELY(vm->steps_left-- == 0)) FAIL(STEP_BUDGET_MSG, vm->max_steps);                     \
  } while (0)
#define FAIL(...)                                                                                  \
  do {                                                                                             \
    fail_span = SPAN_HERE();                                                                       \
    snprintf(err, sizeof err, __VA_ARGS__);                                                        \
    goto error;                                                                                    \
  } while (0)
/* The three steps the call instructions share. Macros, like STEP and FAIL, because they
 * fail out of the loop and re-point its registers: as inline functions taking &fr and &R
 * they changed the loop's code enough to cost 1-2% more instructions on call-heavy
 * programs (callgrind, bench/interp tak, closures). */
/* The code a call runs: with a closure operand (closure true), the closure's, taken from
 * operand wd into fv (the call then owns it); otherwise the global code numbered wd. */
#define CALL_TARGET(closure, wd)                                                                   \
  do {                                                                                             \
    if (closure) {                                                                                 \
      fv = TAKE(wd);                                                                               \
      if (UNLIKELY(value_kind(fv) != VK_CLOSURE)) {                                                \
        value_release(fv);                                                                         \
        FAIL("call of a value that is not a function");                                            \
      }                                                                                            \
      callee = value_closure(fv)->code;                                                            \
    } else {                                                                                       \
      callee = prog->codes[wd];                                                                    \
    }                                                                                              \
  } while (0)
/* NR = the callee's registers, after the caller's window; grows the frame array and the
 * register stack first when either is full (re-pointing fr and R); on overflow releases
 * fv and fails. */
#define CALL_ROOM()                                                                                \
  do {                                                                                             \
    NR = R + code->nregs;                                                                          \
    if (UNLIKELY(fr + 1 >= vm->flimit || NR + callee->nregs > vm->stack + vm->cap)) {              \
      size_t k = (size_t)(fr - vm->frames);                                                        \
      if (!call_room(vm, k + 1, fr->base + code->nregs + callee->nregs)) {                         \
        value_release(fv);                                                                         \
        FAIL("stack overflow: recursion deeper than %" PRIu64 " calls", vm->max_frames);           \
      }                                                                                            \
      fr = vm->frames + k;                                                                         \
      R = vm->stack + fr->base;                                                                    \
      NR = R + code->nregs;                                                                        \
    }                                                                                              \
  } while (0)
/* Enters callee with registers NR; its result goes to the caller's register ret_reg, the
 * caller resumes at resume_ip. */
#define ENTER_CALL(ret_reg, resume_ip)                                                             \
  do {                                                                                             \
    Frame *nf = fr + 1;                                                                            \
    nf->code = callee;                                                                             \
    nf->base = fr->base + code->nregs;                                                             \
    nf->ret = fr->base + (ret_reg);                                                                \
    nf->tail = false;                                                                              \
    fr->ip = (resume_ip);                                                                          \
    fr = nf;                                                                                       \
    code = callee;                                                                                 \
    ins = ip = callee->ins;                                                                        \
    R = NR;                                                                                        \
  } while (0)

  DISPATCH();

L_MOVE: {
  Value v = TAKE(ip[2]);
  set_reg(&R[ip[1]], v);
  ip += 3;
  DISPATCH();
}
L_LOADK:
  set_reg(&R[ip[1]], value_retain(code->consts[ip[2]]));
  ip += 3;
  DISPATCH();
L_JMP:
  ip = ins + ip[1];
  DISPATCH();
L_JMPF: {
  const Value *c = &R[ARG_REG(ip[1])];
  bool b = false;
  if (LIKELY(c->tag == TAG_BOOL)) b = c->i != 0;
  else if (!value_truthy(c, &b)) FAIL("if condition is not a scalar");
  drop_if_moved(R, ip[1]);
  ip = b ? ip + 3 : ins + ip[2];
  DISPATCH();
}
L_JSET:
  ip = (R[ip[1]].tag & 0xff) != VK_NONE ? ins + ip[2] : ip + 3;
  DISPATCH();
L_TUPLE: {
  uint32_t n = ip[2];
  Value t = value_tuple_new(n);
  for (uint32_t i = 0; i < n; i++) value_tuple(t)->f[i] = TAKE(ip[3 + i]);
  set_reg(&R[ip[1]], t);
  ip += 3 + n;
  DISPATCH();
}
L_PROJ:
L_FIELD: {
  Value s = R[ARG_REG(ip[2])];
  Value v;
  if (value_kind(s) == VK_ADT) v = value_retain(value_adt(s)->f[ip[3]]);
  else if (value_kind(s) == VK_TUPLE) v = value_retain(value_tuple(s)->f[ip[3]]);
  else FAIL("projection from a value that is not a tuple");
  drop_if_moved(R, ip[2]);
  set_reg(&R[ip[1]], v);
  ip += 4;
  DISPATCH();
}
L_ADT: {
  const Ctor *ctor = code->ctors[ip[2]];
  uint32_t n = ip[3];
  Value a = value_adt_new(ctor);
  for (uint32_t i = 0; i < n; i++) value_adt(a)->f[i] = TAKE(ip[4 + i]);
  set_reg(&R[ip[1]], a);
  ip += 4 + n;
  DISPATCH();
}
L_CLOSURE: {
  uint32_t n = ip[3];
  Value c = value_closure_new(prog->codes[ip[2]], n);
  for (uint32_t i = 0; i < n; i++) value_closure(c)->cap[i] = TAKE(ip[4 + i]);
  set_reg(&R[ip[1]], c);
  ip += 4 + n;
  DISPATCH();
}
L_REFNEW: {
  Value v = TAKE(ip[2]);
  set_reg(&R[ip[1]], value_ref_new(v));
  ip += 3;
  DISPATCH();
}
L_REFREAD: {
  Value r = R[ARG_REG(ip[2])];
  Value v = value_retain(value_ref(r)->v);
  drop_if_moved(R, ip[2]);
  set_reg(&R[ip[1]], v);
  ip += 3;
  DISPATCH();
}
L_REFWRITE: {
  Value r = TAKE(ip[2]);
  Value v = TAKE(ip[3]);
  set_reg(&value_ref(r)->v, v);
  value_release(r);
  set_reg(&R[ip[1]], value_unit());
  ip += 4;
  DISPATCH();
}
L_TESTCTOR: {
  Value s = R[ARG_REG(ip[1])];
  bool ok = value_kind(s) == VK_ADT && value_adt(s)->ctor == code->ctors[ip[2]];
  drop_if_moved(R, ip[1]);
  ip = ok ? ip + 4 : ins + ip[3];
  DISPATCH();
}
L_MATCHFAIL:
  FAIL("no clause of the match matches the value");

  /* Calls. The callee's window starts right after the caller's; its
   * registers hold no heap objects (at most stale immediates). */
L_CALL:
L_CALLG: {
  STEP();
  uint32_t n = ip[3];
  Value fv = value_none(), *NR;
  const Code *callee;
  CALL_TARGET(*ip == I_CALL, ip[2]);
  CALL_ROOM();
  for (uint32_t i = 0; i < n; i++) NR[i] = TAKE(ip[4 + i]);
  if (UNLIKELY(callee->nmemo)) clear_memo(NR, callee);
  if (*ip == I_CALL) {
    ClosureObj *clo = value_closure(fv);
    for (uint32_t i = 0; i < clo->n; i++) NR[n + i] = value_retain(clo->cap[i]);
    if (callee->self_reg >= 0) NR[callee->self_reg] = fv;
    else value_release(fv);
  }
  ENTER_CALL(ip[1], ip + 4 + n);
  DISPATCH();
}
L_CALLGI: {
  STEP();
  /* arguments hold no heap objects (lower.c): plain copies */
  const Code *callee = prog->codes[ip[2]];
  uint32_t n = ip[3];
  Value fv = value_none(), *NR; /* no closure here: releasing fv on overflow does nothing */
  CALL_ROOM();
  for (uint32_t i = 0; i < n; i++) NR[i] = R[ARG_REG(ip[4 + i])];
  if (UNLIKELY(callee->nmemo)) clear_memo(NR, callee);
  ENTER_CALL(ip[1], ip + 4 + n);
  DISPATCH();
}
L_TCALL:
L_TCALLG: {
  STEP();
  uint32_t n = ip[3];
  Value fv = value_none();
  const Code *callee;
  CALL_TARGET(*ip == I_TCALL, ip[1]);
  uint32_t nregs = code->nregs;
  size_t need = nregs + n > callee->nregs ? nregs + n : callee->nregs;
  if (UNLIKELY(R + need > vm->stack + vm->cap)) {
    if (!ensure_stack(vm, fr->base + need)) {
      value_release(fv);
      FAIL("stack overflow: recursion deeper than %" PRIu64 " calls", vm->max_frames);
    }
    R = vm->stack + fr->base;
  }
  Value *S = R + nregs; /* scratch above the window: no heap values there */
  for (uint32_t i = 0; i < n; i++) S[i] = TAKE(ip[4 + i]);
  clear_list(R, code->clears + ip[2]);
  for (uint32_t i = 0; i < n; i++) {
    Value v = S[i];
    S[i].tag = VK_NONE;
    R[i] = v;
  }
  if (UNLIKELY(callee->nmemo)) clear_memo(R, callee);
  if (*ip == I_TCALL) {
    ClosureObj *clo = value_closure(fv);
    for (uint32_t i = 0; i < clo->n; i++) R[n + i] = value_retain(clo->cap[i]);
    if (callee->self_reg >= 0) R[callee->self_reg] = fv;
    else value_release(fv);
  }
  fr->tail |= callee != code; /* a self tail call is a loop, not a lost caller */
  fr->code = callee;
  code = callee;
  ins = ip = callee->ins;
  DISPATCH();
}
L_TSELF: {
  STEP();
  /* plain moves (lower.c checked): no argument reads a parameter another overwrites */
  uint32_t n = ip[3];
  for (uint32_t i = 0; i < n; i++) {
    uint32_t wd = ip[4 + i];
    if (ARG_REG(wd) != i) set_reg(&R[i], TAKE(wd));
  }
  clear_list(R, code->clears + ip[2]); /* includes the memo registers */
  ip = ins;
  DISPATCH();
}
L_TSELFI: {
  STEP();
  /* no heap objects among the arguments and the params they replace */
  uint32_t n = ip[3];
  for (uint32_t i = 0; i < n; i++) R[i] = R[ARG_REG(ip[4 + i])];
  clear_list(R, code->clears + ip[2]);
  ip = ins;
  DISPATCH();
}
L_TSELFM: {
  STEP();
  /* TSELFI with the moving arguments only, as byte-offset pairs */
  uint32_t n = ip[2];
  for (uint32_t i = 0; i < n; i++) *ROFF(R, ip[3 + 2 * i]) = *ROFF(R, ip[4 + 2 * i]);
  clear_list(R, code->clears + ip[1]);
  ip = ins;
  DISPATCH();
}
L_TSELF1:
  STEP();
  *ROFF(R, ip[3]) = *ROFF(R, ip[4]);
  ip = ins;
  DISPATCH();
L_NOP:
  ip++;
  DISPATCH();
L_RET: {
  Value v = TAKE(ip[1]);
  clear_list(R, code->clears + ip[2]);
  if (UNLIKELY(fr == vm->frames)) {
    vm->nframes = 0;
    *result = v;
    return VM_OK;
  }
  Value *dst = vm->stack + fr->ret;
  fr--;
  code = fr->code;
  ins = code->ins;
  ip = fr->ip;
  R = vm->stack + fr->base;
  set_reg(dst, v);
  DISPATCH();
}

  /* Binary operators. Generic forms: int32/float32 pairs inline, else the
   * operator call. Typed forms (eval/code.h): one tag check per operand. */
#define GEN_BIN(NAME, IRES, FRES)                                                                  \
  L_##NAME: {                                                                                      \
    const Value *xp = (ip[3] & ARG_K) ? &code->consts[ARG_REG(ip[3])] : &R[ARG_REG(ip[3])];       \
    const Value *yp = (ip[4] & ARG_K) ? &code->consts[ARG_REG(ip[4])] : &R[ARG_REG(ip[4])];       \
    Value r;                                                                                       \
    if (xp->tag == TAG_I32 && yp->tag == TAG_I32) {                                                \
      uint32_t p = (uint32_t)xp->i, q = (uint32_t)yp->i;                                           \
      int32_t s = (int32_t)xp->i, t = (int32_t)yp->i;                                              \
      (void)p, (void)q, (void)s, (void)t;                                                          \
      r = IRES;                                                                                    \
    } else if (xp->tag == TAG_F32 && yp->tag == TAG_F32) {                                         \
      float s = value_f32_of(xp), t = value_f32_of(yp);                                            \
      r = FRES;                                                                                    \
    } else {                                                                                       \
      goto binop_slow;                                                                             \
    }                                                                                              \
    set_reg(&R[ip[1]], r);                                                                         \
    ip += 5;                                                                                       \
    DISPATCH();                                                                                    \
  }
#define INT_OPERANDS(YTAG, YI)                                                                     \
  const Value *xp = ROFF(R, ip[3]);                                                                \
  if (UNLIKELY(xp->tag != TAG_I32 || (YTAG))) goto binop_slow;                                     \
  uint32_t p = (uint32_t)xp->i, q = (uint32_t)(YI);                                                \
  int32_t s = (int32_t)p, t = (int32_t)q;                                                          \
  (void)p, (void)q, (void)s, (void)t
/* float32 operands as floats (runtime/value.h: kept in `aux`), computed in
 * single precision: each operation correctly rounded to float32. */
#define FLT_OPERANDS(YTAG, YF)                                                                     \
  const Value *xp = ROFF(R, ip[3]);                                                                \
  if (UNLIKELY(xp->tag != TAG_F32 || (YTAG))) goto binop_slow;                                     \
  float s = value_f32_of(xp), t = (YF)
#define OPS_II INT_OPERANDS(ROFF(R, ip[4])->tag != TAG_I32, ROFF(R, ip[4])->i)
#define OPS_IK INT_OPERANDS(false, ip[4])
#define OPS_FF FLT_OPERANDS(ROFF(R, ip[4])->tag != TAG_F32, value_f32_of(ROFF(R, ip[4])))
#define OPS_FK FLT_OPERANDS(false, imm_f32(ip[4]))
#define TYPED_VAL(LABEL, OPS, RES)                                                                 \
  LABEL: {                                                                                         \
    OPS;                                                                                           \
    set_reg(ROFF(R, ip[1]), RES);                                                                  \
    ip += 5;                                                                                       \
    DISPATCH();                                                                                    \
  }
#define TYPED_F32(LABEL, OPS, RES)                                                                 \
  LABEL: {                                                                                         \
    OPS;                                                                                           \
    set_f32(ROFF(R, ip[1]), RES);                                                                  \
    ip += 5;                                                                                       \
    DISPATCH();                                                                                    \
  }
#define TYPED_JMP(LABEL, OPS, COND)                                                                \
  LABEL: {                                                                                         \
    OPS;                                                                                           \
    ip = (COND) ? ip + 8 : ins + ip[7];                                                            \
    DISPATCH();                                                                                    \
  }
#define ARITH(NAME, OP, IRES, FRES)                                                                    \
  GEN_BIN(NAME, IRES, FRES)                                                                        \
  TYPED_VAL(L_##NAME##II, OPS_II, IRES)                                                            \
  TYPED_VAL(L_##NAME##IK, OPS_IK, IRES)                                                            \
  TYPED_F32(L_##NAME##FF, OPS_FF, s OP t)                                                          \
  TYPED_F32(L_##NAME##FK, OPS_FK, s OP t)
#define CMP(NAME, ICOND, FCOND)                                                                    \
  GEN_BIN(NAME, value_bool(ICOND), value_bool(FCOND))                                              \
  TYPED_VAL(L_##NAME##II, OPS_II, value_bool(ICOND))                                               \
  TYPED_VAL(L_##NAME##IK, OPS_IK, value_bool(ICOND))                                               \
  TYPED_VAL(L_##NAME##FF, OPS_FF, value_bool(FCOND))                                               \
  TYPED_VAL(L_##NAME##FK, OPS_FK, value_bool(FCOND))                                               \
  TYPED_JMP(L_J##NAME##II, OPS_II, ICOND)                                                          \
  TYPED_JMP(L_J##NAME##IK, OPS_IK, ICOND)                                                          \
  TYPED_JMP(L_J##NAME##FF, OPS_FF, FCOND)                                                          \
  TYPED_JMP(L_J##NAME##FK, OPS_FK, FCOND)

  ARITH(ADD, +, value_i32((int32_t)(p + q)), value_f32(s + t))
  ARITH(SUB, -, value_i32((int32_t)(p - q)), value_f32(s - t))
  ARITH(MUL, *, value_i32((int32_t)(p * q)), value_f32(s * t))
  CMP(LT, s < t, s < t)
  CMP(LE, s <= t, s <= t)
  CMP(GT, s > t, s > t)
  CMP(GE, s >= t, s >= t)
  CMP(EQ, s == t, s == t)
  CMP(NE, s != t, ord_ne(s, t))
#undef GEN_BIN
#undef INT_OPERANDS
#undef FLT_OPERANDS
#undef OPS_II
#undef OPS_IK
#undef OPS_FF
#undef OPS_FK
#undef TYPED_VAL
#undef TYPED_JMP
#undef TYPED_F32
#undef ARITH
#undef CMP

  /* Fused pairs (eval/code.h): op2(op1(x, y), z), each step rounded to the type. */
#define FUSED_IN(TAG)                                                                              \
  const Value *xp = fused_operand(code, R, ip[4]), *yp = fused_operand(code, R, ip[5]);            \
  const Value *zp = fused_operand(code, R, ip[6]);                                                 \
  if (UNLIKELY(xp->tag != (TAG) || yp->tag != (TAG) || zp->tag != (TAG))) goto fused_slow
#define FUSED_I(NAME, OP1, OP2)                                                                    \
  L_FI##NAME: {                                                                                    \
    FUSED_IN(TAG_I32);                                                                             \
    uint32_t p = (uint32_t)xp->i, q = (uint32_t)yp->i, z = (uint32_t)zp->i;                        \
    uint32_t u = p OP1 q;                                                                          \
    set_reg(ROFF(R, ip[1]), value_i32((int32_t)(OP2)));                                            \
    ip += 10;                                                                                      \
    DISPATCH();                                                                                    \
  }
#define FUSED_F(NAME, OP1, OP2)                                                                    \
  L_FF##NAME: {                                                                                    \
    FUSED_IN(TAG_F32);                                                                             \
    float p = value_f32_of(xp), q = value_f32_of(yp), z = value_f32_of(zp);                        \
    float u = p OP1 q;                                                                             \
    set_f32(ROFF(R, ip[1]), OP2);                                                                  \
    ip += 10;                                                                                      \
    DISPATCH();                                                                                    \
  }
#define FUSED_OP2(T, NAME1, OP1)                                                                   \
  FUSED_##T(NAME1##ADD, OP1, u + z)                                                                \
  FUSED_##T(NAME1##SUB, OP1, u - z)                                                                \
  FUSED_##T(NAME1##RSUB, OP1, z - u)                                                               \
  FUSED_##T(NAME1##MUL, OP1, u * z)
  FUSED_OP2(I, ADD, +)
  FUSED_OP2(I, SUB, -)
  FUSED_OP2(I, MUL, *)
  FUSED_OP2(F, ADD, +)
  FUSED_OP2(F, SUB, -)
  FUSED_OP2(F, MUL, *)
#undef FUSED_IN
#undef FUSED_I
#undef FUSED_F
#undef FUSED_OP2
fused_slow: {
  uint32_t at;
  if (fused_generic(code, R, ip, err, &at) != KERNEL_OK) {
    fail_span = code_span_at(code, (uint32_t)(ip - ins) + at);
    goto error;
  }
  ip += 10;
  DISPATCH();
}

  /* Float32 trees (eval/code.h). */
L_FX: {
  if (UNLIKELY(fx_eval(code->xprog + ip[2], R, ROFF(R, ip[1])) < 0)) goto fx_slow;
  ip += 4 + ip[3];
  DISPATCH();
}
L_FXC: {
  int c = fx_eval(code->xprog + ip[2], R, NULL);
  if (UNLIKELY(c < 0)) goto fx_slow;
  set_reg(ROFF(R, ip[1]), value_bool(c));
  ip += 4 + ip[3];
  DISPATCH();
}
L_FXJ: {
  int c = fx_eval(code->xprog + ip[2], R, NULL);
  if (UNLIKELY(c < 0)) goto fx_slow;
  uint32_t n = ip[3]; /* the JMPF: ip[4 + n], its target at ip[4 + n + 2] */
  ip = c ? ip + 4 + n + 3 : ins + ip[4 + n + 2];
  DISPATCH();
}
fx_slow: {
  /* FXJ: the result lands in R[a] and the JMPF that follows runs */
  Value r = value_none();
  if (fx_generic(code, R, ip, &r, err, &fail_span) != KERNEL_OK) goto error;
  set_reg(ROFF(R, ip[1]), r);
  ip += 4 + ip[3];
  DISPATCH();
}

L_FXB: {
  int64_t to = fxb_eval(code->xprog + ip[1], R, &vm->steps_left);
  if (UNLIKELY(to == -2)) FAIL(STEP_BUDGET_MSG, vm->max_steps);
  if (UNLIKELY(to < 0)) goto fxb_slow;
  if (to == 0) STEP(); /* the trace ended in its function's restart (a self tail call): a loop iteration */
  ip = ins + to;
  DISPATCH();
}
fxb_slow: {
  /* the replaced instruction through its generic path, then the original code */
  const uint32_t *p = code->xprog + ip[1];
  const uint32_t *w = p + p[0] + 1;
  uint32_t len = *w++, pc = (uint32_t)(ip - ins);
  if (w[0] == I_FX || w[0] == I_FXJ) {
    Value r = value_none();
    if (fx_generic(code, R, w, &r, err, &fail_span) != KERNEL_OK) goto error;
    set_reg(ROFF(R, w[1]), r);
  } else if (binop_generic(code, R, w, err) != KERNEL_OK) {
    fail_span = code_span_at(code, pc);
    goto error;
  }
  ip = ins + pc + len;
  DISPATCH();
}

L_BIN:
binop_slow: {
  /* a fused comparison runs unfused here; its JMPF follows at ip + 5 */
  if (binop_generic(code, R, ip, err) != KERNEL_OK) {
    fail_span = SPAN_HERE();
    goto error;
  }
  ip += 5;
  DISPATCH();
}
L_KOP: {
  uint32_t n = ip[3];
  Value small[8];
  Value *args = n <= 8 ? small : mem_malloc(n * sizeof *args);
  for (uint32_t i = 0; i < n; i++) args[i] = TAKE(ip[4 + i]);
  Value r = value_none();
  int rc = op_call(&code->ops[ip[2]], args, n, &r, err);
  if (args != small) mem_free(args);
  if (rc != KERNEL_OK) {
    fail_span = SPAN_HERE();
    goto error;
  }
  set_reg(&R[ip[1]], r);
  ip += 4 + n;
  DISPATCH();
}

error:
  vm->nframes = (size_t)(fr - vm->frames) + 1;
  fr->ip = ip + 1; /* backtrace looks at ip - 1 of callers */
  vm_report(vm, fail_span, "%s", err);
  unwind(vm);
  return VM_ERROR;
#undef SPAN_HERE
#undef DISPATCH
#undef FAIL
#undef STEP
#undef STEP_BUDGET_MSG
#undef CALL_TARGET
#undef CALL_ROOM
#undef ENTER_CALL
}

static int start(const Program *p, const Code *entry, Value *args, uint32_t nargs, Value extra,
                 Value *result, Diag *d, const VmLimits *limits) {
  VM vm = {.prog = p, .d = d};
  const VmLimits *dl = &default_limits;
  vm.max_frames = limits && limits->max_frames ? limits->max_frames
                  : dl->max_frames                ? dl->max_frames
                                                  : VM_DEFAULT_MAX_FRAMES;
  uint64_t bytes = limits && limits->max_stack_bytes ? limits->max_stack_bytes
                   : dl->max_stack_bytes                ? dl->max_stack_bytes
                                                        : VM_DEFAULT_MAX_STACK_BYTES;
  vm.max_steps = limits && limits->max_steps ? limits->max_steps : dl->max_steps;
  vm.steps_left = vm.max_steps ? vm.max_steps : UINT64_MAX;
  vm.max_values = bytes / sizeof(Value);
  if (vm.max_values < entry->nregs + 16) vm.max_values = entry->nregs + 16;
  ensure_stack(&vm, entry->nregs + 16);
  push_frame_slot(&vm);
  vm.flimit = vm.frames + (vm.capf < vm.max_frames ? vm.capf : vm.max_frames);
  vm.frames[0] = (Frame){entry, entry->ins, 0, 0, false};
  for (uint32_t i = 0; i < nargs && i < entry->nregs; i++) vm.stack[i] = args[i];
  if (value_kind(extra) == VK_CLOSURE) {
    ClosureObj *clo = value_closure(extra);
    for (uint32_t i = 0; i < clo->n; i++) vm.stack[nargs + i] = value_retain(clo->cap[i]);
    if (entry->self_reg >= 0) vm.stack[entry->self_reg] = value_retain(extra);
  }
  *result = value_none();
  int rc = run(&vm, result);
  mem_free(vm.stack);
  mem_free(vm.frames);
  return rc;
}

int vm_run(const Program *p, const Code *entry, Value *args, uint32_t nargs, Value *result, Diag *d,
           const VmLimits *limits) {
  return start(p, entry, args, nargs, value_none(), result, d, limits);
}

int vm_call_closure(const Program *p, const Value *closure, Value *args, uint32_t nargs, Value *result,
                    Diag *d, const VmLimits *limits) {
  const Code *code = value_closure(*closure)->code;
  return start(p, code, args, nargs, *closure, result, d, limits);
}
