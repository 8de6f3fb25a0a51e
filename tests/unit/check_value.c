/* tests/unit/check_value.c — runtime values: immediates, refcounting, freeing, printing. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/mem.h"
#include "runtime/value.h"
#include "tests/unit/unit_run.h"

static TypeDef list_type;
static Ctor cons_ctor, nil_ctor;
static Ctor *list_ctors[2] = {&cons_ctor, &nil_ctor};

static void setup(void) {
  list_type = (TypeDef){.name = "List", .ctors = list_ctors, .nctors = 2};
  cons_ctor = (Ctor){.name = "Cons", .nfields = 2, .owner = &list_type, .tag = 0};
  nil_ctor = (Ctor){.name = "Nil", .nfields = 0, .owner = &list_type, .tag = 1};
}

static void teardown(void) {
  ck_assert_int_eq(value_live_objects(), 0);
  value_heap_shutdown();
}

static char *show(const Value *v, bool json) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (json) value_print_json(f, v);
  else value_print(f, v);
  fclose(f);
  return buf;
}

static void assert_prints(Value v, const char *want) {
  char *s = show(&v, false);
  ck_assert_str_eq(s, want);
  free(s);
}

static Value cons(Value head, Value tail) {
  Value c = value_adt_new(&cons_ctor);
  value_adt(c)->f[0] = head;
  value_adt(c)->f[1] = tail;
  return c;
}

START_TEST(immediates_wrap_and_round) {
  Value a = value_int(DT_I8, 200);
  ck_assert_int_eq(a.i, -56);
  ck_assert_uint_eq(a.tag, TAG_I8);
  Value b = value_int(DTYPE(DT_UINT, 16), -1);
  ck_assert_int_eq(b.i, 65535);
  Value c = value_int(DT_BOOL_T, 7);
  ck_assert_int_eq(c.i, 1);
  Value f = value_float(DT_F32, 0.1);
  ck_assert(f.f == (double)0.1f);
  /* a float32 immediate also carries the float itself (the VM's fast paths) */
  ck_assert(value_f32_of(&f) == 0.1f);
  Value g = value_f32(-2.5f), h = value_from_tensor(tensor_new_scalar_f32(16777217.0f)), s = value_none();
  ck_assert(value_f32_of(&g) == -2.5f && g.f == -2.5);
  ck_assert(value_f32_of(&h) == 16777216.0f && h.f == 16777216.0);
  Value s3 = value_f32(0.3f);
  value_set_f32(&s, 0.3f);
  ck_assert(s.tag == TAG_F32 && value_f32_of(&s) == 0.3f && s.f == (double)0.3f && value_equal(&s, &s3));
  Value d64 = value_float(DT_F64, 0.1);
  ck_assert(d64.aux == 0 && d64.f == 0.1);
  ck_assert(value_dtype_is_immediate(DT_I32));
  ck_assert(!value_dtype_is_immediate(DT_F16));
  ck_assert_int_eq(value_live_objects(), 0); /* immediates never allocate */
}
END_TEST

START_TEST(rank0_tensor_becomes_immediate) {
  Value v = value_from_tensor(tensor_new_scalar_i32(42));
  ck_assert_uint_eq(v.tag, TAG_I32);
  ck_assert_int_eq(v.i, 42);
  Tensor *t = value_to_tensor(&v);
  ck_assert_int_eq(t->ndim, 0);
  ck_assert_int_eq(tensor_get_i64(t, 0), 42);
  tensor_release(t);
  int64_t shape[1] = {2};
  Value w = value_from_tensor(tensor_new_zeros(DT_F32, 1, shape));
  ck_assert_int_eq(value_kind(w), VK_TENSOR);
  value_release(w);
  Value h = value_from_tensor(tensor_new_scalar_float(DT_F16, 1.5));
  ck_assert_int_eq(value_kind(h), VK_TENSOR); /* float16 stays a tensor */
  value_release(h);
}
END_TEST

START_TEST(tuple_refcounts) {
  Value t = value_tuple_new(2);
  value_tuple(t)->f[0] = value_i32(1);
  value_tuple(t)->f[1] = value_ref_new(value_i32(2));
  ck_assert_int_eq(value_live_objects(), 2);
  Value u = value_retain(t);
  ck_assert_uint_eq(t.o->rc, 2);
  value_release(u);
  ck_assert_int_eq(value_live_objects(), 2);
  value_release(t);
  ck_assert_int_eq(value_live_objects(), 0);
}
END_TEST

START_TEST(shared_field_survives) {
  Value inner = value_tuple_new(1);
  value_tuple(inner)->f[0] = value_i32(5);
  Value outer = value_tuple_new(2);
  value_tuple(outer)->f[0] = value_retain(inner);
  value_tuple(outer)->f[1] = value_retain(inner);
  value_release(inner);
  ck_assert_uint_eq(inner.o->rc, 2);
  Value keep = value_retain(value_tuple(outer)->f[0]);
  value_release(outer);
  ck_assert_int_eq(value_live_objects(), 1);
  ck_assert_int_eq(value_tuple(keep)->f[0].i, 5);
  value_release(keep);
}
END_TEST

START_TEST(nullary_ctor_is_shared_and_free) {
  int64_t before = value_live_objects();
  Value a = value_adt_new(&nil_ctor), b = value_adt_new(&nil_ctor);
  ck_assert_ptr_eq(a.o, b.o);
  ck_assert_int_eq(value_live_objects(), before);
  value_release(a);
  value_release(b);
  Value u = value_unit();
  ck_assert_uint_eq(value_tuple(u)->n, 0);
  value_release(u);
}
END_TEST

START_TEST(million_element_list_frees_iteratively) {
  Value xs = value_adt_new(&nil_ctor);
  for (int i = 0; i < 1000000; i++) xs = cons(value_i32(i), xs);
  ck_assert_int_eq(value_live_objects(), 1000000);
  value_release(xs); /* would overflow an 8 MiB C stack if recursive */
  ck_assert_int_eq(value_live_objects(), 0);
}
END_TEST

START_TEST(tensors_inside_objects_released) {
  int64_t shape[1] = {4};
  Tensor *t = tensor_new_zeros(DT_F32, 1, shape);
  Value tv = value_from_tensor(tensor_retain(t));
  Value tu = value_tuple_new(1);
  value_tuple(tu)->f[0] = tv;
  ck_assert_uint_eq(t->refcount, 2);
  value_release(tu);
  ck_assert_uint_eq(t->refcount, 1);
  tensor_release(t);
}
END_TEST

START_TEST(closure_captures_released) {
  static int code;
  Value c = value_closure_new(&code, 2);
  value_closure(c)->cap[0] = value_ref_new(value_i32(1));
  value_closure(c)->cap[1] = value_i64(7);
  ck_assert_int_eq(value_live_objects(), 2);
  value_release(c);
}
END_TEST

/* ref -> closure -> tuple -> ref, holding a tensor: the shape of
 * LazyGradientInit's programs (a One(thunk) written into the gradient cell
 * the thunk's tuple holds). Refcounting alone never frees it;
 * value_clear_refs() at the end of a run does. */
START_TEST(ref_cycle_freed_by_clear_refs) {
  static int code;
  int64_t shape[1] = {4};
  Tensor *t = tensor_new_zeros(DT_F32, 1, shape);
  Value cell = value_ref_new(value_none());
  Value pair = value_tuple_new(2);
  value_tuple(pair)->f[0] = value_from_tensor(tensor_retain(t));
  value_tuple(pair)->f[1] = value_retain(cell);
  Value thunk = value_closure_new(&code, 1);
  value_closure(thunk)->cap[0] = pair;
  value_ref(cell)->v = thunk;
  value_release(cell);
  ck_assert_int_eq(value_live_objects(), 3); /* the cycle survives */
  ck_assert_uint_eq(t->refcount, 2);
  Value other = value_ref_new(value_i32(5)); /* a live cell outside the cycle */
  value_clear_refs();
  ck_assert_int_eq(value_live_objects(), 1);
  ck_assert_uint_eq(t->refcount, 1);
  ck_assert_int_eq(value_kind(value_ref(other)->v), VK_NONE);
  value_release(other);
  ck_assert_int_eq(value_live_objects(), 0);
  tensor_release(t);
}
END_TEST

START_TEST(print_forms) {
  assert_prints(value_i32(42), "42");
  assert_prints(value_i64(42), "42i64");
  assert_prints(value_int(DT_I16, 300), "300i16");
  assert_prints(value_int(DT_U8, 7), "7u8");
  assert_prints(value_f32(1.5f), "1.5f");
  assert_prints(value_f32(0.1f), "0.1f");
  assert_prints(value_f32(2.0f), "2f");
  assert_prints(value_f64(1.5), "1.5f64");
  assert_prints(value_bool(true), "True");
  Value l = cons(value_i32(1), cons(value_i32(2), value_adt_new(&nil_ctor)));
  assert_prints(l, "Cons(1, Cons(2, Nil))");
  Value t = value_tuple_new(2);
  value_tuple(t)->f[0] = l;
  value_tuple(t)->f[1] = value_unit();
  assert_prints(t, "(Cons(1, Cons(2, Nil)), ())");
  Value one = value_tuple_new(1);
  value_tuple(one)->f[0] = value_bool(false);
  assert_prints(one, "(False,)");
  Value r = value_ref_new(one);
  assert_prints(r, "ref((False,))");
  static int code;
  Value c = value_closure_new(&code, 0);
  assert_prints(c, "<closure>");
  value_release(c);
  value_release(r);
  value_release(t);
}
END_TEST

START_TEST(print_json) {
  Value l = cons(value_i32(1), value_adt_new(&nil_ctor));
  Value t = value_tuple_new(2);
  value_tuple(t)->f[0] = l;
  value_tuple(t)->f[1] = value_f32(0.5f);
  char *s = show(&t, true);
  ck_assert_str_eq(s, "[{\"constructor\": \"Cons\", \"fields\": [{\"dtype\": \"int32\", \"shape\": [], \"data\": [1]}, "
                      "{\"constructor\": \"Nil\", \"fields\": []}]}, {\"dtype\": \"float32\", \"shape\": [], \"data\": [0.5]}]");
  free(s);
  value_release(t);
}
END_TEST

START_TEST(print_long_list_iteratively) {
  Value xs = value_adt_new(&nil_ctor);
  for (int i = 0; i < 200000; i++) xs = cons(value_i32(1), xs);
  char *s = show(&xs, false);
  ck_assert(strncmp(s, "Cons(1, Cons(1, ", 16) == 0);
  ck_assert_uint_eq(strlen(s), 200000 * strlen("Cons(1, )") + 3);
  free(s);
  value_release(xs);
}
END_TEST

START_TEST(equality) {
  Value a = cons(value_i32(1), value_adt_new(&nil_ctor));
  Value b = cons(value_i32(1), value_adt_new(&nil_ctor));
  Value c = cons(value_i32(2), value_adt_new(&nil_ctor));
  ck_assert(value_equal(&a, &b));
  ck_assert(!value_equal(&a, &c));
  Value x = value_i32(1), y = value_i64(1);
  ck_assert(!value_equal(&x, &y)); /* different dtypes */
  Value t = value_from_tensor(tensor_new_scalar_f32(3.0f)), s = value_f32(3.0f);
  ck_assert(value_equal(&t, &s));
  value_release(a);
  value_release(b);
  value_release(c);
}
END_TEST

START_TEST(truthiness) {
  bool b = false;
  Value t = value_bool(true);
  ck_assert(value_truthy(&t, &b) && b);
  Value f = value_f32(0.0f);
  ck_assert(value_truthy(&f, &b) && !b);
  Value u = value_unit();
  ck_assert(!value_truthy(&u, &b));
}
END_TEST

static Suite *value_suite(void) {
  Suite *s = suite_create("value");
  TCase *tc = tcase_create("values");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, immediates_wrap_and_round);
  tcase_add_test(tc, rank0_tensor_becomes_immediate);
  tcase_add_test(tc, tuple_refcounts);
  tcase_add_test(tc, shared_field_survives);
  tcase_add_test(tc, nullary_ctor_is_shared_and_free);
  tcase_add_test(tc, million_element_list_frees_iteratively);
  tcase_add_test(tc, tensors_inside_objects_released);
  tcase_add_test(tc, closure_captures_released);
  tcase_add_test(tc, ref_cycle_freed_by_clear_refs);
  tcase_add_test(tc, print_forms);
  tcase_add_test(tc, print_json);
  tcase_add_test(tc, print_long_list_iteratively);
  tcase_add_test(tc, equality);
  tcase_add_test(tc, truthiness);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  stack_guard_init(8u << 20);
  return unit_run(value_suite());
}
