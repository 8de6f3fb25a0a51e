/* transform/fuse_partition.h — FuseOps' grouping: the dataflow graph of one
 * function, its post-dominator tree and the union-find partition into fused
 * groups (spec/passes.md §6.1; TVM's IndexedForwardGraph, DominatorTree and
 * GraphPartitioner, rewritten for relayc's AST).
 *
 *     FusePartition fp;
 *     fuse_partition_build(&fp, fn, opt_level, max_depth);
 *     int32_t g = fuse_group_of(&fp, e, e->mark);   // -1: not a node of the graph
 *     if (g >= 0 && g == fuse_node_of(&fp, e, e->mark)) ...  // e roots its group
 *     fuse_partition_free(&fp);
 *
 * Nodes are numbered in TVM's post-DFS order (a call's callee, then its
 * arguments left to right, then the call). Every use of a variable is the
 * same graph node (keyed by its Var, like TVM's one Var object). Function
 * literals, operators, globals and constructors are not nodes. An
 * expression's node is found through the Expr.mark the build gave it
 * (validated against `keys`); the caller passes that mark, which is
 * rw_prior_mark() once a mark_memo Rewriter has borrowed it. Nothing
 * recurses: the graph walk, path checks and commits use explicit stacks, so
 * 100,000-long chains are fine.
 */
#ifndef RELAYC_TRANSFORM_FUSE_PARTITION_H
#define RELAYC_TRANSFORM_FUSE_PARTITION_H

#include <stdint.h>

#include "ir/ast.h"
#include "ir/mem.h"
#include "ir/ptrmap.h"

typedef struct FuseEdge {
  uint32_t node;    /* consumer (node id) */
  uint8_t pattern;  /* OpPattern of the edge */
  int32_t next;     /* next edge of the same producer, -1 at the end */
} FuseEdge;

typedef struct FuseNode {
  int32_t index;    /* post-DFS position, -1 until visited */
  uint8_t pattern;  /* OpPattern of the node */
  uint8_t extern_ref; /* referenced from outside the dataflow (body result, let value, ...) */
  int32_t out_head, out_tail; /* consumer edges (FuseEdge ids), in creation order */
} FuseNode;

typedef VEC(uint32_t) VecU32;

typedef struct FusePartition {
  PtrMap ids;                /* Var* -> node id (every use of a variable is one node) */
  VEC(const void *) keys;    /* node id -> key (the Expr, or the Var of a variable use); an
                                expression's Expr.mark holds its node id + 1, validated
                                against this (no hash lookup per node) */
  VEC(uint8_t) visited;      /* node id -> visited by the graph walk */
  VEC(FuseNode) nodes;       /* by node id */
  VEC(FuseEdge) edges;
  VEC(uint32_t) post;        /* node ids in post-DFS order */
  /* by post-DFS index: */
  int32_t *dom_parent;       /* immediate post-dominator (index) or -1 */
  int32_t *dom_depth;
  uint8_t *dom_pattern;      /* strongest edge class on the way to it */
  int32_t *gparent;          /* union-find parent (index) or -1 */
  uint8_t *gpattern;
  uint8_t *ganchor;          /* the group holds an O node */
  uint32_t *gnum;            /* nodes in the group (valid at roots) */
  uint32_t *stamp;           /* visited marks of the path walks */
  uint32_t gen;
  VecU32 stack;              /* the path walks' stack, reused */
  uint32_t max_depth;
} FusePartition;

/* Builds the graph of `fn` (its parameters and body; nested literals other
 * than Compiler ones included) and partitions it at `opt_level` (0: every
 * node alone) with at most `max_depth` nodes per group. */
void fuse_partition_build(FusePartition *fp, Function *fn, int opt_level, uint32_t max_depth);
void fuse_partition_free(FusePartition *fp);
/* Post-DFS index of e's node, or -1 when e is not a node of the graph;
 * `mark` is the Expr.mark the build left on e (see above). */
int32_t fuse_node_of(const FusePartition *fp, const Expr *e, uint32_t mark);
/* The root (post-DFS index of the group's root node) of e's group, or -1. */
int32_t fuse_group_of(FusePartition *fp, const Expr *e, uint32_t mark);

#endif
