/* Dominators, post-dominators and control dependences of one function's CFG, from the control-flow facts
 * of a site table (sitefmt.h, version 2). Pure: no I/O, malloc only. Used by `vigil plan`
 * (seed 002 procedure 1) to build the interprocedural control dependence graph.
 *
 * Two virtual nodes complete the graph: EXIT (= nblocks), reached from every exit block, and
 * ENTRY (= nblocks + 1) with edges ENTRY -> block 0 and ENTRY -> EXIT, so that the blocks
 * that run whenever the function runs are control dependent on ENTRY. A block from which no
 * exit is reachable (an endless loop) is treated as an exit. */
#ifndef VIGIL_CDG_H
#define VIGIL_CDG_H
#include <stddef.h>
#include <stdint.h>

#include "sitefmt.h"

/* Block b is control dependent on edge (from, label); from == VIGIL_CDG_ENTRY: on the
 * function's entry. */
#define VIGIL_CDG_ENTRY 0xfffffffeu
struct vigil_cdep {
    uint32_t block, from, label;
};

/* ipdom[b] for b < nblocks: the immediate post-dominator, or VIGIL_CFG_NONE when it is the
 * virtual exit. Returns 0, or -1 when memory runs out or an edge is out of range. */
int vigil_postdominators(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                         const uint32_t *exits, uint32_t nexits, uint32_t *ipdom);

/* Every control dependence, malloc'd into *deps (*ndeps entries, sorted by from, label,
 * block). Returns 0 or -1. */
int vigil_control_dependences(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                              const uint32_t *exits, uint32_t nexits, struct vigil_cdep **deps, size_t *ndeps);

/* idom[b]: the immediate dominator of block b from block 0; VIGIL_CFG_NONE for block 0 and for
 * blocks not reachable from it. Returns 0 or -1. */
int vigil_dominators(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges, uint32_t *idom);

/* klass[b]: the lowest-numbered block with exactly the same control dependences as b (the
 * region of the CDG b belongs to). Returns 0 or -1. */
int vigil_control_classes(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                          const uint32_t *exits, uint32_t nexits, uint32_t *klass);

/* Static removal of redundant branch predicates (seed 002 section 3.1). block_site[b]: a
 * predicate site counted in block b (the first one), or VIGIL_CFG_NONE. For every true/false
 * edge u -> v whose count can be reconstructed, edge_source[e] = the site whose total count
 * (the sum of its predicates) equals the number of times the edge is taken: u dominates v, the
 * edge is v's only incoming edge, and the site is in v (not in a block control equivalent to
 * v, as seed 002 allows: a call between v and that block may exit, abort or crash, and the
 * edge would be counted with no count at the site; exits/nexits are unused until the compiler
 * can say which blocks cannot stop the process). Other edges get VIGIL_CFG_NONE. Returns 0 or
 * -1. */
int vigil_redundant_edges(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                          const uint32_t *exits, uint32_t nexits, const uint32_t *block_site, uint32_t *edge_source);

#endif
