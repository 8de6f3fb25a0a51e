/* ir/fresh_name.h — the names passes give the variables they make: prefix_N.
 *
 * A pass-made variable (build_fresh_var, ir/build.h) keeps its prefix in
 * Var.name_ and its number in Var.fresh; the text "prefix_N" is spelled only
 * when something asks for it (var_name, ir/ast.h), and the printer writes it
 * straight into its own output (fresh_name_format). A pass that makes
 * millions of binders so does not spell millions of names nobody reads
 * (Gradient on the 100k-binding chain: 600k names, 8% of its instructions).
 */
#ifndef RELAYC_IR_FRESH_NAME_H
#define RELAYC_IR_FRESH_NAME_H

#include <stddef.h>
#include <stdint.h>

/* The longest name: "prefix_N" is cut to this many characters, as it always was. */
#define FRESH_NAME_MAX 95

/* The largest number a Var keeps unspelled (Var.fresh holds it plus one in 30 bits). */
#define FRESH_NAME_LAZY_MAX ((1u << 30) - 2)

/* "prefix_n" cut to FRESH_NAME_MAX characters into buf (FRESH_NAME_MAX + 1
 * bytes, NUL-terminated); returns its length. */
size_t fresh_name_format(char *buf, const char *prefix, uint32_t n);

#endif
