/* eval/code.h — the lowered form: register bytecode shared by eval/lower.c and eval/vm.c.
 *
 * Each Relay function becomes one Code: a flat array of 32-bit words, a
 * register count and side tables. Registers are frame slots of a growable
 * value stack: R[0..nparams) are the arguments, then the captured values
 * (copied in from the closure at call time), then the closure itself when
 * the function is let-bound and recursive (`self_reg`), then one register
 * per shared DAG node (memo registers, evaluated at most once per frame),
 * then variables and temporaries (allocated stack-wise while lowering).
 *
 * Instruction = opcode word followed by its operands; a register operand
 * may carry ARG_MOVE (bit 31): the value's last use, so it is moved out of
 * the register (left VK_NONE) instead of copied — temporaries and dying
 * variables are handed to callees, constructors and kernels without a
 * refcount round trip, and a dying tensor reaches its kernel with refcount 1.
 * Jump targets are absolute word indices; all jumps go forward (Relay has no
 * loops inside one activation; loops are (tail) calls).
 *
 * Every instruction writing register `a` releases the value it overwrites.
 *
 * Registers that leave a frame (RET, tail calls) are released through the
 * instruction's CLEAR LIST, computed by lower.c's forward "may hold a heap
 * value" analysis: every register not in the list provably holds no heap
 * object there (it is empty, was moved out, or holds an immediate — by type:
 * a rank-0 bool/int/uint/float32/float64 value is always an immediate, see
 * runtime/value.h). So no slot above the running frame ever holds a heap
 * object; stale immediates may linger there (harmless: only memo registers
 * are read before being written, and calls empty those on entry).
 */
#ifndef RELAYC_EVAL_CODE_H
#define RELAYC_EVAL_CODE_H

#include <stdint.h>

#include "ir/ast.h"
#include "runtime/value.h"

#define ARG_MOVE 0x80000000u
/* In the two operands of the binary-operator instructions (ADD..BIN) only:
 * the operand is constant K[index] instead of a register. */
#define ARG_K 0x40000000u
#define ARG_REG(w) ((w) & ~(ARG_MOVE | ARG_K))

/* X-macro: name, operand layout. Layout letters: a = written register,
 * r = read register, k = constant/table index or count, j = jump target,
 * L = count n followed by n read registers, i = immediate operand (see below),
 * P = count n followed by n (written, read) register pairs. */
#define EVAL_OPCODES(X)                                                                       \
  X(MOVE, "ar")      /* R[a] = R[b] */                                                        \
  X(LOADK, "ak")     /* R[a] = K[k] */                                                        \
  X(JMP, "j")        /* goto j */                                                             \
  X(JMPF, "rj")      /* if R[c] is false goto j */                                            \
  X(JSET, "rj")      /* if R[s] holds a value goto j (shared node already evaluated) */       \
  X(TUPLE, "aL")     /* R[a] = (R[f0], ...) */                                                \
  X(PROJ, "ark")     /* R[a] = R[t].i */                                                      \
  X(ADT, "akL")      /* R[a] = ctors[k](R[f0], ...) */                                        \
  X(CLOSURE, "akL")  /* R[a] = closure of codes[k] capturing R[c0], ... */                    \
  X(REFNEW, "ar")    /* R[a] = ref(R[b]) */                                                   \
  X(REFREAD, "ar")   /* R[a] = ref_read(R[b]) */                                              \
  X(REFWRITE, "arr") /* ref_write(R[r], R[v]); R[a] = () */                                  \
  X(TESTCTOR, "rkj") /* if R[r] is not built by ctors[k] goto j */                            \
  X(FIELD, "ark")    /* R[a] = field i of the ADT or tuple R[r] */                            \
  X(MATCHFAIL, "")   /* run-time error: no clause of a match? applies */                      \
  X(CALL, "arL")     /* R[a] = R[f](args) */                                                  \
  X(CALLG, "akL")    /* R[a] = globals[g](args) */                                            \
  X(TCALL, "rkL")    /* return R[f](args), reusing the frame; k = clear list (below) */       \
  X(TCALLG, "kkL")   /* return globals[g](args), reusing the frame */                         \
  X(TSELF, "kkL")    /* TCALLG of the running function itself whose argument moves are a     \
                        plain sequence (see lower.c): set the params, empty the listed        \
                        registers, restart at word 0 */                                       \
  X(CALLGI, "akL")   /* CALLG whose arguments hold no heap objects: copied, not moved */      \
  X(TSELFI, "kkL")   /* TSELF whose arguments and overwritten params hold no heap objects */  \
  X(TSELFM, "kP")    /* TSELFI listing only the arguments not already in place: P = count n, \
                        then n pairs (parameter, argument register), both as byte offsets    \
                        reg * sizeof(Value); k = clear list. Made last by lower.c, padded     \
                        with NOPs to the TSELFI's length */                                   \
  X(TSELF1, "kP")    /* TSELFM with one pair and an empty clear list */                      \
  X(NOP, "")         /* padding; never reached */                                             \
  X(RET, "rk")       /* return R[a]; k = clear list */                                        \
  X(KOP, "akL")      /* R[a] = operator call ops[k](args) through the kernel */              \
  X(ADD, "akrr")     /* R[a] = add(R[x], R[y]): scalar fast paths, else like KOP */           \
  X(SUB, "akrr")                                                                              \
  X(MUL, "akrr")                                                                              \
  X(LT, "akrr")                                                                               \
  X(LE, "akrr")                                                                               \
  X(GT, "akrr")                                                                               \
  X(GE, "akrr")                                                                               \
  X(EQ, "akrr")                                                                               \
  X(NE, "akrr")                                                                               \
  X(BIN, "akrr")     /* any other binary operator with a scalar path */                         \
  EVAL_TYPED_ARITH(X, ADD)                                                                    \
  EVAL_TYPED_ARITH(X, SUB)                                                                    \
  EVAL_TYPED_ARITH(X, MUL)                                                                    \
  EVAL_TYPED_CMP(X, LT)                                                                       \
  EVAL_TYPED_CMP(X, LE)                                                                       \
  EVAL_TYPED_CMP(X, GT)                                                                       \
  EVAL_TYPED_CMP(X, GE)                                                                       \
  EVAL_TYPED_CMP(X, EQ)                                                                       \
  EVAL_TYPED_CMP(X, NE)                                                                       \
  EVAL_FUSED(X, I)                                                                            \
  EVAL_FUSED(X, F)                                                                            \
  X(FX, "akL")   /* R[a] = float32 expression tree xprog[k] over leaves L (below) */          \
  X(FXC, "akL")  /* R[a] = the same with a comparison at the root (a bool) */                 \
  X(FXJ, "akL")  /* FXC fused with the JMPF that follows, like the J<cmp> forms */              \
  X(FXB, "k")    /* trace xprog[k] (below); NOPs follow up to the replaced instruction's end */

/* Typed variants of ADD..NE, chosen by the lowering from the operands' inferred
 * types (rank-0 int32 / float32): <op>II (int32 registers), <op>IK (int32
 * register, immediate: the operand word IS the int32), <op>FF, <op>FK (float32,
 * the word holds the float's bits). Layout letter `i` = immediate word. They
 * check the tags at run time and fall back to the generic operator call (the
 * same OpCall `k`) when a value is not the expected immediate. J<cmp>..: a
 * comparison fused with the JMPF that directly follows it and consumes its
 * result (same words; the JMPF stays in place): jumps to the JMPF's target
 * when the comparison is false, else continues after the JMPF; R[a] is not
 * written (on the fallback path the comparison runs unfused, then the JMPF).
 * Their register words (a, r) are byte offsets reg * sizeof(Value) into the
 * frame, without ARG_MOVE (set after liveness: operands they accept are
 * immediates, for which a move is a no-op; the fallback copies instead). */
#define EVAL_TYPED_ARITH(X, op)                                                               \
  X(op##II, "akrr") X(op##IK, "akri") X(op##FF, "akrr") X(op##FK, "akri")
#define EVAL_TYPED_CMP(X, op)                                                                 \
  EVAL_TYPED_ARITH(X, op)                                                                     \
  X(J##op##II, "akrr") X(J##op##IK, "akri") X(J##op##FF, "akrr") X(J##op##FK, "akri")

/* Fused pairs (lower.c, after liveness): a typed ADD/SUB/MUL writing a
 * temporary t directly followed by a typed ADD/SUB/MUL of the same type that
 * reads t for the last time: F<T><op1><op2> a k1 k2 x y z _ _ _ computes
 * R[a] = op2(op1(x, y), z) (RSUB: z - op1(x, y)), rounding after each step,
 * without writing t. x, y, z are byte offsets: into the frame, or (bit 0
 * set) offset + 1 into the constants. On a non-immediate operand it runs the
 * two operator calls k1 and k2 (the second one's span is at pc + 5, where the
 * second instruction was). Ten words, like the pair it replaces. */
#define EVAL_FUSED_OP2(X, T, op1)                                                             \
  X(F##T##op1##ADD, "akkrrrkkk") X(F##T##op1##SUB, "akkrrrkkk")                              \
  X(F##T##op1##RSUB, "akkrrrkkk") X(F##T##op1##MUL, "akkrrrkkk")
#define EVAL_FUSED(X, T)                                                                      \
  EVAL_FUSED_OP2(X, T, ADD) EVAL_FUSED_OP2(X, T, SUB) EVAL_FUSED_OP2(X, T, MUL)

/* Float32 expression trees (lower.c builds them from nested typed float32
 * add/subtract/multiply calls, optionally under a comparison): FX a k n
 * l0..l(n-1) evaluates the step program at Code.xprog[k] in single
 * precision (each operation rounded to float32, as the unfused
 * instructions) with the running value in a machine register. The L list
 * names the registers it reads (byte offsets, no ARG_MOVE: like the typed
 * instructions), for the analyses; the steps address them directly.
 *
 * A step: a control word `form | op << 4 | push << 8`, the OpCall index of
 * its node (the fallback and its error span use it), then its x operand
 * word if x is a leaf (byte offset into the frame) or a constant (the
 * float's bits), then likewise y. Forms (x op y): LL leaf, leaf; LK leaf,
 * K; KL K, leaf; AL acc, leaf; LA leaf, acc; AK acc, K; KA K, acc; SA
 * popped, acc. `push` (LL LK KL only): the running value is pushed first
 * (at most FX_STACK deep). The program ends with an END word (FX: the
 * result) or with a comparison step (FXC, FXJ). On a leaf that is not a
 * float32 immediate the tree runs node by node through the operator calls.
 * FXJ: jumps to the following JMPF's target when the comparison is false,
 * else continues after the JMPF (on the fallback path it writes R[a] and
 * the JMPF runs). While lowering, leaf operand words hold an index into
 * the L list instead (resolved last). */
enum { FX_LL, FX_LK, FX_KL, FX_AL, FX_LA, FX_AK, FX_KA, FX_SA, FX_END, FX_NFORMS };
enum { FXO_ADD, FXO_SUB, FXO_MUL, FXO_LT, FXO_LE, FXO_GT, FXO_GE, FXO_EQ, FXO_NE, FXO_COUNT };
#define FX_PUSH 0x100u
#define FX_STACK 4
/* What operand x / y of a form is: 'L' leaf, 'K' constant, 0 (running value or popped). */
static inline char fx_x_kind(uint32_t form) {
  return form == FX_LL || form == FX_LK || form == FX_LA ? 'L' : form == FX_KL || form == FX_KA ? 'K' : 0;
}
static inline char fx_y_kind(uint32_t form) {
  return form == FX_LL || form == FX_KL || form == FX_AL ? 'L' : form == FX_LK || form == FX_AK ? 'K' : 0;
}
static inline uint32_t fx_step_words(uint32_t form) {
  return 2u + (fx_x_kind(form) != 0) + (fx_y_kind(form) != 0);
}

/* Traces (lower.c, the last peephole): from an FX, FXJ, typed ADD/SUB/MUL or
 * fused typed comparison at pc S, the straight line of such instructions,
 * following at each fused comparison the edge that leads on to a self tail
 * call (TSELF1/TSELFM with an empty clear list: the trace then restarts the
 * function), becomes one FXB at S over the trace program at xprog[k]. FXB
 * tag-checks every register the trace reads before writing it, then runs
 * the instructions' work in order on the window (leaves read without
 * checks, results stored as the instructions would), leaving at a
 * comparison's other edge, at the end or at the restart. Only S's own words
 * change (FXB k, NOPs up to its length): the instructions after it stay in
 * place for the side exits. When a check fails, the instruction that was at
 * S runs through its generic path (its words are kept in the program) and
 * execution continues after it in the original code. Program: the offset
 * of the original words (from the next word on), count n then
 * n float32 offsets, count m then m int32 offsets (the checks), then steps:
 * the FX steps (eval/code.h above; leaves are byte offsets, a comparison
 * step is followed by `want, pc`: leave to pc when the outcome is want),
 * and FXT_* steps (form FXT_*, operator in bits 4..7 as FX). Then the
 * original words at S: length, words. */
enum {
  FXT_OUT = FX_NFORMS, /* off: R[off] = running value (float32) */
  FXT_IRR,             /* int32 R[x] op R[y]: arith: d x y; comparison: x y want pc */
  FXT_IRK,             /* the same with immediate y */
  FXT_COPY,            /* d s: R[d] = R[s] (immediates; the self call's moves); operator
                          1 / 2: known float32 / int32, copied field by field */
  FXT_END,             /* pc: continue at pc (0 for the restart) */
  FXT_LOOP,            /* restart of a trace at pc 0 whose checks still hold (every
                          checked register is untouched or rewritten with its
                          type): run the steps again without leaving */
};

typedef enum {
#define X(name, layout) I_##name,
  EVAL_OPCODES(X)
#undef X
  I_COUNT
} Opcode;

/* Operand layout string of an opcode (see EVAL_OPCODES). */
const char *code_layout(Opcode op);
const char *code_opname(Opcode op);

/* One operator call site. */
typedef struct OpCall {
  int32_t op;            /* registry id */
  const Attrs *attrs;    /* normalised attributes, or NULL */
  const Type *out_type;  /* inferred type of the call, or NULL */
  bool cast_imm;         /* a cast to an immediate dtype: cast_to, parsed once */
  DType cast_to;
  Span span;             /* the call (FX tree nodes report errors here) */
} OpCall;

/* pc → span, sorted by pc: the expression an instruction evaluates. */
typedef struct SpanEntry {
  uint32_t pc;
  Span span;
} SpanEntry;

typedef struct Code {
  const char *name;     /* "@main", "%fact", "fn" — for backtraces */
  Span span;            /* the function */
  uint32_t nparams;
  uint32_t ncaps;
  int32_t self_reg;     /* register receiving the closure itself, or -1 */
  uint32_t memo_lo;     /* memo registers [memo_lo, memo_lo + nmemo): emptied on entry */
  uint32_t nmemo;
  uint32_t nregs;
  uint32_t *ins;
  uint32_t nins;
  Value *consts;        /* owned references */
  uint32_t nconsts;
  const Ctor **ctors;
  uint32_t nctors;
  OpCall *ops;
  uint32_t nops;
  SpanEntry *spans;
  uint32_t nspans;
  uint32_t *clears;     /* clear lists: at offset k, a count n then n registers */
  uint32_t nclears;
  uint32_t *xprog;      /* FX step programs */
  uint32_t nxprog;
} Code;

/* A lowered module. */
typedef struct Program {
  Module *m;            /* borrowed: constants point into it */
  Code **codes;         /* every function, globals first (index = def index) */
  uint32_t ncodes;
  uint32_t nglobals;
  Value *global_vals;   /* immortal closures of the globals, for first-class use */
  Code *entry;          /* @main, or the expression of an expression module */
} Program;

/* The span of the instruction at word `pc` (the nearest entry at or before it). */
Span code_span_at(const Code *c, uint32_t pc);

#endif
