/* eval/vm.c — the interpreter: a register machine with heap frames.
 *
 * State: a growable value stack (registers of every active frame, each frame
 * a window [base, base + code->nregs)) and a growable frame array. A call
 * pushes a frame whose window starts right after the caller's; a tail call
 * releases the current window and reuses it; a return releases the window
 * and stores the result into the caller's destination register. The loop
 * keeps `R` (the current window) in a local and refreshes it after anything
 * that may grow the stack.
 *
 * Invariant: registers own their values; an instruction reads all its
 * operands (moving those flagged ARG_MOVE) before it releases and replaces
 * its destination, so `a` may equal an operand.
 *
 * Scalar fast paths: ADD/SUB/MUL and the comparisons compute int32 and
 * float32 immediates inline; other immediate dtypes go through
 * kscalar_binary (ops/k_elemwise.c); anything else builds a KernelCtx and
 * calls the registry's kernel.
 */
#include "eval/vm.h"
#include "eval/profile.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ir/attrs.h"
#include "ir/mem.h"
#include "ops/kernel.h"
#include "ops/op_ids.h"
#include "ops/registry.h"

typedef struct Frame {
  const Code *code;
  uint32_t pc;   /* resume word index (saved while a callee runs) */
  uint32_t base; /* first register in the value stack */
  uint32_t ret;  /* absolute stack index of the caller's destination register */
} Frame;

typedef struct VM {
  const Program *prog;
  Diag *d;
  Value *stack;
  size_t cap;          /* Values */
  size_t max_values;
  Frame *frames;
  size_t nframes, capf;
  uint64_t max_frames;
} VM;

/* ------------------------------------------------------------ errors */

static void print_loc(VM *vm, Span sp, char *buf, size_t cap) {
  Source *src = vm->d->src;
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
  char loc[400];
  print_loc(vm, code_span_at(caller->code, caller->pc ? caller->pc - 1 : 0), loc, sizeof loc);
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
           vm->frames[k - 2].pc == vm->frames[k - 1].pc) {
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

/* Makes room for `need` registers; false when over the limit. */
static bool ensure_stack(VM *vm, size_t need) {
  if (need <= vm->cap) return true;
  if (need > vm->max_values) return false;
  size_t cap = vm->cap ? vm->cap : 1024;
  while (cap < need) cap *= 2;
  if (cap > vm->max_values) cap = vm->max_values;
  vm->stack = mem_realloc(vm->stack, cap * sizeof(Value));
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
  double d = trunc(v.f);
  double lo = to.code == DT_INT ? -ldexp(1, to.bits - 1) : 0;
  double hi = to.code == DT_INT ? ldexp(1, to.bits - 1) - 1 : ldexp(1, to.bits) - 1;
  if (isnan(d)) d = 0;
  if (d < lo) d = lo;
  if (d > hi) d = hi;
  if (to.code == DT_UINT && to.bits == 64 && d >= 9223372036854775808.0) return value_int(to, (int64_t)(uint64_t)d);
  return value_int(to, (int64_t)d);
}

/* Runs operator call `oc` on args (consumed). */
static int op_call_run(const OpCall *oc, Value *args, uint32_t n, Value *out, char *err) {
  bool all_scalar = true;
  for (uint32_t i = 0; i < n; i++) all_scalar &= value_kind(args[i]) == VK_SCALAR;
  if (all_scalar && n == 2 && args[0].tag == args[1].tag) {
    int rc = kscalar_binary(oc->op, args[0], args[1], out, err);
    if (rc >= 0) return rc;
  } else if (all_scalar && n == 1 && oc->op == OP_CAST) {
    const AttrValue *a = oc->attrs ? attrs_get(oc->attrs, "dtype") : NULL;
    DType to;
    if (a && a->kind == AV_STRING && dtype_parse(a->s.chars, a->s.len, &to) && value_dtype_is_immediate(to)) {
      DType from = value_scalar_dtype(args[0]);
      *out = scalar_cast(args[0], from, to);
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

#define TAKE(wd)                                                                                   \
  (((wd) & ARG_MOVE) ? take_reg(&R[ARG_REG(wd)]) : value_retain(R[(wd)]))

static inline Value take_reg(Value *r) {
  Value v = *r;
  *r = value_none();
  return v;
}

static inline void set_reg(Value *r, Value v) {
  uint32_t k = r->tag & 0xff;
  if (k >= VK_TENSOR) value_release(*r);
  *r = v;
}

static inline void drop_if_moved(Value *R, uint32_t wd) {
  if (wd & ARG_MOVE) set_reg(&R[ARG_REG(wd)], value_none());
}

static inline bool ord_ne(double a, double b) { return a < b || a > b; }

static int run(VM *vm, Value *result) {
  const Program *prog = vm->prog;
  Frame *fr = &vm->frames[vm->nframes - 1];
  const Code *code = fr->code;
  const uint32_t *ins = code->ins;
  uint32_t pc = 0;
  Value *R = vm->stack + fr->base;
  char err[KERNEL_ERR_SIZE];
  Span fail_span;

#define SPAN_HERE() code_span_at(code, pc)
#define REFRESH() (R = vm->stack + fr->base)

  for (;;) {
    const uint32_t *ip = ins + pc;
    switch ((Opcode)ip[0]) {
    case I_MOVE: {
      Value v = TAKE(ip[2]);
      set_reg(&R[ip[1]], v);
      pc += 3;
      break;
    }
    case I_LOADK:
      set_reg(&R[ip[1]], value_retain(code->consts[ip[2]]));
      pc += 3;
      break;
    case I_JMP: pc = ip[1]; break;
    case I_JMPF: {
      const Value *c = &R[ARG_REG(ip[1])];
      bool b = false;
      if (c->tag == TAG_BOOL) b = c->i != 0;
      else if (!value_truthy(c, &b)) {
        fail_span = SPAN_HERE();
        snprintf(err, sizeof err, "if condition is not a scalar");
        goto error;
      }
      drop_if_moved(R, ip[1]);
      pc = b ? pc + 3 : ip[2];
      break;
    }
    case I_JSET: pc = (R[ip[1]].tag & 0xff) != VK_NONE ? ip[2] : pc + 3; break;
    case I_TUPLE: {
      uint32_t n = ip[2];
      Value t = value_tuple_new(n);
      for (uint32_t i = 0; i < n; i++) value_tuple(t)->f[i] = TAKE(ip[3 + i]);
      set_reg(&R[ip[1]], t);
      pc += 3 + n;
      break;
    }
    case I_PROJ:
    case I_FIELD: {
      Value s = R[ARG_REG(ip[2])];
      Value v;
      if (value_kind(s) == VK_TUPLE) v = value_retain(value_tuple(s)->f[ip[3]]);
      else if (value_kind(s) == VK_ADT) v = value_retain(value_adt(s)->f[ip[3]]);
      else {
        fail_span = SPAN_HERE();
        snprintf(err, sizeof err, "projection from a value that is not a tuple");
        goto error;
      }
      drop_if_moved(R, ip[2]);
      set_reg(&R[ip[1]], v);
      pc += 4;
      break;
    }
    case I_ADT: {
      const Ctor *ctor = code->ctors[ip[2]];
      uint32_t n = ip[3];
      Value a = value_adt_new(ctor);
      for (uint32_t i = 0; i < n; i++) value_adt(a)->f[i] = TAKE(ip[4 + i]);
      set_reg(&R[ip[1]], a);
      pc += 4 + n;
      break;
    }
    case I_CLOSURE: {
      uint32_t n = ip[3];
      Value c = value_closure_new(prog->codes[ip[2]], n);
      for (uint32_t i = 0; i < n; i++) value_closure(c)->cap[i] = TAKE(ip[4 + i]);
      set_reg(&R[ip[1]], c);
      pc += 4 + n;
      break;
    }
    case I_REFNEW: {
      Value v = TAKE(ip[2]);
      set_reg(&R[ip[1]], value_ref_new(v));
      pc += 3;
      break;
    }
    case I_REFREAD: {
      Value r = R[ARG_REG(ip[2])];
      Value v = value_retain(value_ref(r)->v);
      drop_if_moved(R, ip[2]);
      set_reg(&R[ip[1]], v);
      pc += 3;
      break;
    }
    case I_REFWRITE: {
      Value r = TAKE(ip[2]);
      Value v = TAKE(ip[3]);
      set_reg(&value_ref(r)->v, v);
      value_release(r);
      set_reg(&R[ip[1]], value_unit());
      pc += 4;
      break;
    }
    case I_TESTCTOR: {
      Value s = R[ARG_REG(ip[1])];
      bool ok = value_kind(s) == VK_ADT && value_adt(s)->ctor == code->ctors[ip[2]];
      drop_if_moved(R, ip[1]);
      pc = ok ? pc + 4 : ip[3];
      break;
    }
    case I_MATCHFAIL:
      fail_span = SPAN_HERE();
      snprintf(err, sizeof err, "no clause of the match matches the value");
      goto error;
    case I_CALL:
    case I_CALLG: {
      bool closure = ip[0] == I_CALL;
      uint32_t a = ip[1], n = ip[3];
      const uint32_t *argw = ip + 4;
      Value fv = value_none();
      const Code *callee;
      if (closure) {
        fv = TAKE(ip[2]);
        if (value_kind(fv) != VK_CLOSURE) {
          value_release(fv);
          fail_span = SPAN_HERE();
          snprintf(err, sizeof err, "call of a value that is not a function");
          goto error;
        }
        callee = value_closure(fv)->code;
      } else {
        callee = prog->codes[ip[2]];
      }
      size_t nb = fr->base + code->nregs;
      if (vm->nframes >= vm->max_frames || !ensure_stack(vm, nb + callee->nregs)) {
        value_release(fv);
        fail_span = SPAN_HERE();
        snprintf(err, sizeof err, "stack overflow: recursion deeper than %" PRIu64 " calls", vm->max_frames);
        goto error;
      }
      push_frame_slot(vm);
      fr = &vm->frames[vm->nframes - 2];
      REFRESH();
      Value *NR = vm->stack + nb;
      for (uint32_t i = 0; i < n; i++) NR[i] = TAKE(argw[i]);
      memset(NR + n, 0, (callee->nregs - n) * sizeof(Value));
      if (closure) {
        ClosureObj *clo = value_closure(fv);
        for (uint32_t i = 0; i < clo->n; i++) NR[n + i] = value_retain(clo->cap[i]);
        if (callee->self_reg >= 0) NR[callee->self_reg] = fv;
        else value_release(fv);
      }
      fr->pc = pc + 4 + n;
      Frame *nf = &vm->frames[vm->nframes - 1];
      nf->code = callee;
      nf->pc = 0;
      nf->base = (uint32_t)nb;
      nf->ret = fr->base + a;
      fr = nf;
      code = callee;
      ins = code->ins;
      pc = 0;
      R = NR;
      break;
    }
    case I_TCALL:
    case I_TCALLG: {
      bool closure = ip[0] == I_TCALL;
      uint32_t n = ip[2];
      const uint32_t *argw = ip + 3;
      Value fv = value_none();
      const Code *callee;
      if (closure) {
        fv = TAKE(ip[1]);
        if (value_kind(fv) != VK_CLOSURE) {
          value_release(fv);
          fail_span = SPAN_HERE();
          snprintf(err, sizeof err, "call of a value that is not a function");
          goto error;
        }
        callee = value_closure(fv)->code;
      } else {
        callee = prog->codes[ip[1]];
      }
      size_t need = code->nregs + n > callee->nregs ? code->nregs + n : callee->nregs;
      if (!ensure_stack(vm, fr->base + need)) {
        value_release(fv);
        fail_span = SPAN_HERE();
        snprintf(err, sizeof err, "stack overflow: recursion deeper than %" PRIu64 " calls", vm->max_frames);
        goto error;
      }
      REFRESH();
      Value *scratch = R + code->nregs;
      for (uint32_t i = 0; i < n; i++) scratch[i] = TAKE(argw[i]);
      for (uint32_t i = 0; i < code->nregs; i++) value_release(R[i]);
      for (uint32_t i = 0; i < n; i++) R[i] = scratch[i];
      memset(R + n, 0, (callee->nregs - n) * sizeof(Value));
      if (closure) {
        ClosureObj *clo = value_closure(fv);
        for (uint32_t i = 0; i < clo->n; i++) R[n + i] = value_retain(clo->cap[i]);
        if (callee->self_reg >= 0) R[callee->self_reg] = fv;
        else value_release(fv);
      }
      fr->code = callee;
      code = callee;
      ins = code->ins;
      pc = 0;
      break;
    }
    case I_RET: {
      Value v = TAKE(ip[1]);
      for (uint32_t i = 0; i < code->nregs; i++) value_release(R[i]);
      uint32_t ret = fr->ret;
      if (--vm->nframes == 0) {
        *result = v;
        return VM_OK;
      }
      fr = &vm->frames[vm->nframes - 1];
      code = fr->code;
      ins = code->ins;
      pc = fr->pc;
      REFRESH();
      set_reg(&vm->stack[ret], v);
      break;
    }
    case I_ADD:
    case I_SUB:
    case I_MUL:
    case I_LT:
    case I_LE:
    case I_GT:
    case I_GE:
    case I_EQ:
    case I_NE: {
      const Value *xp = (ip[3] & ARG_K) ? &code->consts[ARG_REG(ip[3])] : &R[ARG_REG(ip[3])];
      const Value *yp = (ip[4] & ARG_K) ? &code->consts[ARG_REG(ip[4])] : &R[ARG_REG(ip[4])];
      uint32_t xt = xp->tag, yt = yp->tag;
      Value r;
      if (xt == TAG_I32 && yt == TAG_I32) {
        uint32_t p = (uint32_t)xp->i, q = (uint32_t)yp->i;
        int32_t s = (int32_t)xp->i, t = (int32_t)yp->i;
        switch ((Opcode)ip[0]) {
        case I_ADD: r = value_i32((int32_t)(p + q)); break;
        case I_SUB: r = value_i32((int32_t)(p - q)); break;
        case I_MUL: r = value_i32((int32_t)(p * q)); break;
        case I_LT: r = value_bool(s < t); break;
        case I_LE: r = value_bool(s <= t); break;
        case I_GT: r = value_bool(s > t); break;
        case I_GE: r = value_bool(s >= t); break;
        case I_EQ: r = value_bool(s == t); break;
        default: r = value_bool(s != t); break;
        }
      } else if (xt == TAG_F32 && yt == TAG_F32) {
        float s = (float)xp->f, t = (float)yp->f;
        switch ((Opcode)ip[0]) {
        case I_ADD: r = value_f32(s + t); break;
        case I_SUB: r = value_f32(s - t); break;
        case I_MUL: r = value_f32(s * t); break;
        case I_LT: r = value_bool(s < t); break;
        case I_LE: r = value_bool(s <= t); break;
        case I_GT: r = value_bool(s > t); break;
        case I_GE: r = value_bool(s >= t); break;
        case I_EQ: r = value_bool(s == t); break;
        default: r = value_bool(ord_ne(s, t)); break;
        }
      } else {
        goto slow_binop;
      }
      set_reg(&R[ip[1]], r);
      pc += 5;
      break;
    }
    case I_BIN:
    slow_binop: {
      Value args[2];
      for (int i = 0; i < 2; i++) {
        uint32_t wd = ip[3 + i];
        args[i] = (wd & ARG_K) ? value_retain(code->consts[ARG_REG(wd)]) : TAKE(wd);
      }
      Value r = value_none();
      if (op_call(&code->ops[ip[2]], args, 2, &r, err) != KERNEL_OK) {
        fail_span = SPAN_HERE();
        goto error;
      }
      set_reg(&R[ip[1]], r);
      pc += 5;
      break;
    }
    case I_KOP: {
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
      pc += 4 + n;
      break;
    }
    default: UNREACHABLE();
    }
  }

error:
  fr->pc = pc + 1; /* backtrace looks at pc - 1 of callers; for the top frame use pc itself */
  vm_report(vm, fail_span, "%s", err);
  unwind(vm);
  return VM_ERROR;
#undef SPAN_HERE
#undef REFRESH
}

static int start(const Program *p, const Code *entry, Value *args, uint32_t nargs, Value extra,
                 Value *result, Diag *d, const VmLimits *limits) {
  VM vm = {.prog = p, .d = d};
  vm.max_frames = limits && limits->max_frames ? limits->max_frames : VM_DEFAULT_MAX_FRAMES;
  uint64_t bytes = limits && limits->max_stack_bytes ? limits->max_stack_bytes : VM_DEFAULT_MAX_STACK_BYTES;
  vm.max_values = bytes / sizeof(Value);
  if (vm.max_values < entry->nregs + 16) vm.max_values = entry->nregs + 16;
  ensure_stack(&vm, entry->nregs + 16);
  push_frame_slot(&vm);
  vm.frames[0] = (Frame){entry, 0, 0, 0};
  memset(vm.stack, 0, entry->nregs * sizeof(Value));
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
