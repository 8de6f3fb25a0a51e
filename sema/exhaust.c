/* sema/exhaust.c — exhaustiveness and redundancy of `match` clauses.
 *
 * The classic pattern-matrix algorithm (usefulness of a pattern vector with
 * respect to the rows above it): a clause is unreachable when its pattern is
 * not useful after the clauses before it; the match is exhaustive when the
 * wildcard vector is not useful after all clauses, and the search for
 * usefulness yields a witness — a value shape no clause covers — which the
 * error shows (`Cons(_, Nil)`). Variables count as wildcards; tuple patterns
 * are the single constructor of their tuple type. Work is bounded by a step
 * budget and the stack guard; when either runs out the match is accepted
 * (no false errors). Scratch memory lives in a temporary arena.
 * Specialising on a constructor reads that constructor's rows from a bucket
 * index (rows by head constructor, built once per matrix, and kept up to date
 * for the clause matrix as clauses are added) instead of scanning every row:
 * a match of N clauses over N constructors is near-linear, not quadratic.
 */
#include "sema/typing.h"

#include <string.h>

typedef enum { P_WILD, P_CTOR, P_TUPLE } PKind;

typedef struct P {
  PKind kind;
  Ctor *ctor;       /* P_CTOR */
  uint32_t n;       /* sub-patterns */
  struct P **args;
} P;

typedef struct Ex {
  Arena *a;
  long budget;
  bool gave_up;
  bool buckets_dropped; /* the clause matrix mixes types: no buckets */
  P wild;
} Ex;

/* A constructor (c) or tuple (c NULL) pattern over n sub-patterns: args, or
 * n new slots when args is NULL. */
static P *p_new(Ex *x, Ctor *c, uint32_t n, P **args) {
  P *q = arena_alloc(x->a, sizeof *q);
  q->kind = c ? P_CTOR : P_TUPLE;
  q->ctor = c;
  q->n = n;
  q->args = args ? args : arena_alloc(x->a, (n ? n : 1) * sizeof *q->args);
  return q;
}

static P *simplify(Ex *x, const Pattern *p) {
  if (!p) return &x->wild;
  switch (p->kind) {
  case PAT_CTOR: {
    if (!p->ctor.ctor) return &x->wild;
    P *q = p_new(x, p->ctor.ctor, p->ctor.ctor->nfields, NULL);
    for (uint32_t i = 0; i < q->n; i++)
      q->args[i] = i < p->ctor.nargs ? simplify(x, p->ctor.args[i]) : &x->wild;
    return q;
  }
  case PAT_TUPLE: {
    P *q = p_new(x, NULL, p->tuple.n, NULL);
    for (uint32_t i = 0; i < q->n; i++) q->args[i] = simplify(x, p->tuple.fields[i]);
    return q;
  }
  default:
    return &x->wild;
  }
}

/* Row numbers in ascending order. */
typedef struct Rows {
  uint32_t *at;
  uint32_t n, cap;
} Rows;

/* A matrix's rows by the head of their first column: one list per
 * constructor of `adt` (by tag), and the rows whose head is no constructor
 * (wildcards, tuples), which every specialisation keeps. */
typedef struct Buckets {
  TypeDef *adt;
  Rows *by_tag;
  Rows other;
} Buckets;

typedef struct Mat {
  P ***rows;
  uint32_t m, n; /* rows, columns */
  Buckets *bk;   /* NULL: not built (specialising scans every row) */
} Mat;

static void rows_push(Ex *x, Rows *l, uint32_t row) {
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? 2 * l->cap : 4;
    uint32_t *at = arena_alloc(x->a, cap * sizeof *at);
    if (l->n) memcpy(at, l->at, l->n * sizeof *at);
    l->at = at;
    l->cap = cap;
  }
  l->at[l->n++] = row;
}

/* Files row number `row` with head h; false when h is a constructor of
 * another type than the buckets' (then they cannot stand for the rows). */
static bool buckets_add(Ex *x, Buckets *b, const P *h, uint32_t row) {
  if (h->kind != P_CTOR) {
    rows_push(x, &b->other, row);
    return true;
  }
  if (h->ctor->owner != b->adt || h->ctor->tag >= b->adt->nctors) return false;
  rows_push(x, &b->by_tag[h->ctor->tag], row);
  return true;
}

static Buckets *buckets_new(Ex *x, TypeDef *adt) {
  Buckets *b = arena_alloc(x->a, sizeof *b);
  memset(b, 0, sizeof *b);
  b->adt = adt;
  b->by_tag = arena_alloc(x->a, (adt->nctors ? adt->nctors : 1) * sizeof *b->by_tag);
  memset(b->by_tag, 0, (adt->nctors ? adt->nctors : 1) * sizeof *b->by_tag);
  return b;
}

/* The buckets of M's rows for `adt`, or NULL when a head is another type's. */
static Buckets *buckets_of(Ex *x, Mat M, TypeDef *adt) {
  Buckets *b = buckets_new(x, adt);
  for (uint32_t i = 0; i < M.m; i++)
    if (!buckets_add(x, b, M.rows[i][0], i)) return NULL;
  return b;
}

/* Row with its head replaced by `k` sub-patterns of `head` (or wildcards). */
static P **spec_row(Ex *x, P **row, uint32_t n, P *head, uint32_t k) {
  P **r = arena_alloc(x->a, (k + n) * sizeof *r);
  for (uint32_t i = 0; i < k; i++) r[i] = head && head->kind != P_WILD && i < head->n ? head->args[i] : &x->wild;
  for (uint32_t i = 1; i < n; i++) r[k + i - 1] = row[i];
  return r;
}

/* Rows matching constructor c (NULL: the tuple constructor) of arity k. */
static bool row_matches(const P *h, const Ctor *c) { return h->kind != P_CTOR || h->ctor == c; }

/* (The rows are counted before the matrix is allocated: a match of 10,000
 * constructors specialises 10,000 times, each keeping a row or two.) */
static P **spec_kept(Ex *x, Mat M, uint32_t i, uint32_t k) {
  P *h = M.rows[i][0];
  return spec_row(x, M.rows[i], M.n, h->kind == P_WILD ? NULL : h, k);
}

/* specialize from the buckets: c's rows and the other rows, merged back
 * into row order (the rows, and so every result, as the scan keeps them). */
static Mat specialize_bucketed(Ex *x, Mat M, Ctor *c, uint32_t k) {
  const Rows *a = &M.bk->by_tag[c->tag], *o = &M.bk->other;
  uint32_t kept = a->n + o->n;
  Mat S = {arena_alloc(x->a, (kept ? kept : 1) * sizeof *S.rows), 0, k + M.n - 1, NULL};
  uint32_t i = 0, j = 0;
  while (i < a->n || j < o->n) {
    bool from_a = j == o->n || (i < a->n && a->at[i] < o->at[j]);
    S.rows[S.m++] = spec_kept(x, M, from_a ? a->at[i++] : o->at[j++], k);
  }
  return S;
}

static Mat specialize(Ex *x, Mat M, Ctor *c, uint32_t k) {
  if (c && M.bk && c->owner == M.bk->adt && c->tag < M.bk->adt->nctors) return specialize_bucketed(x, M, c, k);
  uint32_t kept = 0;
  for (uint32_t i = 0; i < M.m; i++) kept += row_matches(M.rows[i][0], c);
  Mat S = {arena_alloc(x->a, (kept ? kept : 1) * sizeof *S.rows), 0, k + M.n - 1, NULL};
  for (uint32_t i = 0; i < M.m; i++) {
    P *h = M.rows[i][0];
    if (h->kind == P_WILD) S.rows[S.m++] = spec_row(x, M.rows[i], M.n, NULL, k);
    else if (row_matches(h, c)) S.rows[S.m++] = spec_row(x, M.rows[i], M.n, h, k);
  }
  return S;
}

static Mat default_mat(Ex *x, Mat M) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < M.m; i++) kept += M.rows[i][0]->kind == P_WILD;
  Mat D = {arena_alloc(x->a, (kept ? kept : 1) * sizeof *D.rows), 0, M.n - 1, NULL};
  for (uint32_t i = 0; i < M.m; i++)
    if (M.rows[i][0]->kind == P_WILD) D.rows[D.m++] = M.rows[i] + 1;
  return D;
}

/* What the first column says about its type. */
typedef struct Heads {
  bool tuple;
  uint32_t tuple_n;
  TypeDef *adt;
  bool *seen;      /* by ctor tag */
  uint32_t nseen;
} Heads;

static Heads heads_of(Ex *x, Mat M) {
  Heads h = {0};
  for (uint32_t i = 0; i < M.m; i++) {
    P *p = M.rows[i][0];
    if (p->kind == P_TUPLE && !h.tuple) {
      h.tuple = true;
      h.tuple_n = p->n;
    } else if (p->kind == P_CTOR) {
      if (!h.adt) {
        h.adt = p->ctor->owner;
        h.seen = arena_alloc(x->a, (h.adt->nctors ? h.adt->nctors : 1) * sizeof *h.seen);
      }
      if (p->ctor->owner == h.adt && p->ctor->tag < h.adt->nctors && !h.seen[p->ctor->tag]) {
        h.seen[p->ctor->tag] = true;
        h.nseen++;
      }
    }
  }
  return h;
}

static bool tick(Ex *x) {
  if (--x->budget < 0 || stack_exhausted()) {
    x->gave_up = true;
    return false;
  }
  return true;
}

static bool useful(Ex *x, Mat M, P **q) {
  if (!tick(x)) return false;
  if (M.n == 0) return M.m == 0;
  P *h = q[0];
  if (h->kind == P_TUPLE) return useful(x, specialize(x, M, NULL, h->n), spec_row(x, q, M.n, h, h->n));
  if (h->kind == P_CTOR)
    return useful(x, specialize(x, M, h->ctor, h->n), spec_row(x, q, M.n, h, h->n));
  Heads hs = heads_of(x, M);
  if (hs.tuple) return useful(x, specialize(x, M, NULL, hs.tuple_n), spec_row(x, q, M.n, NULL, hs.tuple_n));
  if (hs.adt && hs.nseen == hs.adt->nctors) {
    if (!M.bk) M.bk = buckets_of(x, M, hs.adt);
    for (uint32_t t = 0; t < hs.adt->nctors; t++) {
      Ctor *c = hs.adt->ctors[t];
      if (useful(x, specialize(x, M, c, c->nfields), spec_row(x, q, M.n, NULL, c->nfields))) return true;
      if (x->gave_up) return false;
    }
    return false;
  }
  return useful(x, default_mat(x, M), q + 1);
}

/* The witness vector of n patterns for the witness w of the matrix
 * specialised on constructor c (NULL: a tuple) of k fields: c over w's first
 * k patterns, then the rest of w. */
static P **unspecialize(Ex *x, Ctor *c, uint32_t k, P **w, uint32_t n) {
  P **r = arena_alloc(x->a, n * sizeof *r);
  r[0] = p_new(x, c, k, w);
  for (uint32_t i = 1; i < n; i++) r[i] = w[k + i - 1];
  return r;
}

/* A witness vector of M.n patterns no row matches, or NULL. */
static P **missing(Ex *x, Mat M) {
  if (!tick(x)) return NULL;
  if (M.n == 0) return M.m == 0 ? arena_alloc(x->a, sizeof(P *)) : NULL;
  Heads hs = heads_of(x, M);
  if (hs.tuple) {
    uint32_t k = hs.tuple_n;
    P **w = missing(x, specialize(x, M, NULL, k));
    return w ? unspecialize(x, NULL, k, w, M.n) : NULL;
  }
  if (hs.adt && hs.nseen == hs.adt->nctors) {
    if (!M.bk) M.bk = buckets_of(x, M, hs.adt);
    for (uint32_t tg = 0; tg < hs.adt->nctors; tg++) {
      Ctor *c = hs.adt->ctors[tg];
      uint32_t k = c->nfields;
      P **w = missing(x, specialize(x, M, c, k));
      if (x->gave_up) return NULL;
      if (w) return unspecialize(x, c, k, w, M.n);
    }
    return NULL;
  }
  P **w = missing(x, default_mat(x, M));
  if (!w) return NULL;
  P **r = arena_alloc(x->a, M.n * sizeof *r);
  r[0] = &x->wild;
  if (hs.adt) {
    for (uint32_t tg = 0; tg < hs.adt->nctors; tg++)
      if (!hs.seen[tg]) {
        Ctor *c = hs.adt->ctors[tg];
        P *t = p_new(x, c, c->nfields, NULL);
        for (uint32_t i = 0; i < t->n; i++) t->args[i] = &x->wild;
        r[0] = t;
        break;
      }
  }
  for (uint32_t i = 1; i < M.n; i++) r[i] = w[i - 1];
  return r;
}

typedef struct Buf {
  char s[256];
  size_t len;
} Buf;

static void put(Buf *b, const char *t) {
  size_t n = strlen(t);
  if (b->len + n + 4 >= sizeof b->s) {
    if (b->len + 4 < sizeof b->s) memcpy(b->s + b->len, "...", 4), b->len += 3;
    return;
  }
  memcpy(b->s + b->len, t, n + 1);
  b->len += n;
}

static void show(Buf *b, const P *p) {
  if (stack_exhausted()) {
    put(b, "...");
    return;
  }
  switch (p->kind) {
  case P_WILD: put(b, "_"); return;
  case P_CTOR:
    put(b, p->ctor->name);
    if (p->n == 0) return;
    break;
  case P_TUPLE: break;
  }
  put(b, "(");
  for (uint32_t i = 0; i < p->n; i++) {
    if (i) put(b, ", ");
    show(b, p->args[i]);
  }
  if (p->kind == P_TUPLE && p->n == 1) put(b, ",");
  put(b, ")");
}

/* Appends row q to the clause matrix, keeping its buckets (made at the
 * first constructor head) up to date; a head of another type drops them. */
static void clause_rows_add(Ex *x, Mat *M, P **q) {
  const P *h = q[0];
  if (!M->bk && !x->buckets_dropped && h->kind == P_CTOR) M->bk = buckets_of(x, *M, h->ctor->owner);
  if (M->bk && !buckets_add(x, M->bk, h, M->m)) {
    M->bk = NULL;
    x->buckets_dropped = true;
  }
  M->rows[M->m++] = q;
}

void exhaust_check(TyCx *cx, Expr *e) {
  Ex x = {arena_new(), 200000, false, false, {P_WILD, NULL, 0, NULL}};
  uint32_t m = e->match.nclauses;
  Mat M = {arena_alloc(x.a, (m ? m : 1) * sizeof *M.rows), 0, 1, NULL};
  for (uint32_t i = 0; i < m && !x.gave_up; i++) {
    P **q = arena_alloc(x.a, sizeof *q);
    q[0] = simplify(&x, e->match.clauses[i].pattern);
    if (!useful(&x, M, q) && !x.gave_up)
      diag_warning(cx->d, e->match.clauses[i].pattern->span,
                   "unreachable match clause: earlier clauses cover every value it matches");
    clause_rows_add(&x, &M, q);
  }
  if (!e->match.partial && !x.gave_up) {
    P **w = missing(&x, M);
    if (w && !x.gave_up) {
      Buf b = {{0}, 0};
      show(&b, w[0]);
      diag_error(cx->d, e->span, "match is not exhaustive: pattern %s is not covered", b.s);
    }
  }
  arena_free(x.a);
}
