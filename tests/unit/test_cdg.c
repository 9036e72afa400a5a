/* Post-dominators and control dependences on hand-made CFGs (common/cdg.c). */
#include "cdg.h"
#include "check.h"

#include <stdlib.h>

#define E(f, t, l) {f, t, VIGIL_EDGE_##l}

static int has_dep(const struct vigil_cdep *d, size_t n, uint32_t block, uint32_t from, uint32_t label)
{
    for (size_t i = 0; i < n; i++)
        if (d[i].block == block && d[i].from == from && d[i].label == label)
            return 1;
    return 0;
}

/* if (c) b1 else b2; b3 */
static void test_diamond(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, TRUE), E(0, 2, FALSE), E(1, 3, ALWAYS), E(2, 3, ALWAYS)};
    uint32_t exits[] = {3}, ipdom[4];
    CHECK(vigil_postdominators(4, e, 4, exits, 1, ipdom) == 0, "postdominators failed");
    CHECK(ipdom[0] == 3 && ipdom[1] == 3 && ipdom[2] == 3 && ipdom[3] == VIGIL_CFG_NONE,
          "ipdom %u %u %u %u", ipdom[0], ipdom[1], ipdom[2], ipdom[3]);
    struct vigil_cdep *d;
    size_t n;
    CHECK(vigil_control_dependences(4, e, 4, exits, 1, &d, &n) == 0, "dependences failed");
    CHECK(n == 4, "%zu dependences, expected 4", n);
    CHECK(has_dep(d, n, 1, 0, VIGIL_EDGE_TRUE), "b1 on b0 true");
    CHECK(has_dep(d, n, 2, 0, VIGIL_EDGE_FALSE), "b2 on b0 false");
    CHECK(has_dep(d, n, 0, VIGIL_CDG_ENTRY, VIGIL_EDGE_ALWAYS) && has_dep(d, n, 3, VIGIL_CDG_ENTRY, VIGIL_EDGE_ALWAYS),
          "b0 and b3 on entry");
    free(d);
}

/* b0; while (b1) b2; b3 -- the loop body and the header depend on the header's true edge */
static void test_loop(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, ALWAYS), E(1, 2, TRUE), E(1, 3, FALSE), E(2, 1, ALWAYS)};
    uint32_t exits[] = {3}, ipdom[4];
    CHECK(vigil_postdominators(4, e, 4, exits, 1, ipdom) == 0 && ipdom[0] == 1 && ipdom[1] == 3 && ipdom[2] == 1,
          "loop ipdom %u %u %u", ipdom[0], ipdom[1], ipdom[2]);
    struct vigil_cdep *d;
    size_t n;
    CHECK(vigil_control_dependences(4, e, 4, exits, 1, &d, &n) == 0, "dependences failed");
    CHECK(has_dep(d, n, 2, 1, VIGIL_EDGE_TRUE) && has_dep(d, n, 1, 1, VIGIL_EDGE_TRUE), "body and header on header true");
    CHECK(has_dep(d, n, 1, VIGIL_CDG_ENTRY, VIGIL_EDGE_ALWAYS), "header on entry");
    CHECK(!has_dep(d, n, 3, 1, VIGIL_EDGE_FALSE), "the exit block does not depend on the loop");
    CHECK(n == 5, "%zu dependences, expected 5 (0,1,3 on entry; 1,2 on 1 true)", n);
    free(d);
}

/* if (b0) { if (b1) b2; b3 } b4, with b2 calling a noreturn function (an exit) */
static void test_nested_with_exit(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, TRUE), E(0, 4, FALSE), E(1, 2, TRUE), E(1, 3, FALSE), E(3, 4, ALWAYS)};
    uint32_t exits[] = {2, 4}, ipdom[5];
    CHECK(vigil_postdominators(5, e, 5, exits, 2, ipdom) == 0, "postdominators failed");
    CHECK(ipdom[1] == VIGIL_CFG_NONE && ipdom[3] == 4 && ipdom[0] == VIGIL_CFG_NONE, "ipdom %u %u %u", ipdom[0], ipdom[1], ipdom[3]);
    struct vigil_cdep *d;
    size_t n;
    CHECK(vigil_control_dependences(5, e, 5, exits, 2, &d, &n) == 0, "dependences failed");
    CHECK(has_dep(d, n, 1, 0, VIGIL_EDGE_TRUE) && has_dep(d, n, 3, 1, VIGIL_EDGE_FALSE) && has_dep(d, n, 2, 1, VIGIL_EDGE_TRUE),
          "nested dependences");
    CHECK(has_dep(d, n, 4, 0, VIGIL_EDGE_FALSE) && has_dep(d, n, 4, 1, VIGIL_EDGE_FALSE), "b4 on b0 false and b1 false");
    free(d);
}

/* An endless loop is treated as an exit; bad edges are refused. */
static void test_endless_and_bad(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, TRUE), E(0, 2, FALSE), E(1, 1, ALWAYS)};
    uint32_t exits[] = {2}, ipdom[3];
    CHECK(vigil_postdominators(3, e, 3, exits, 1, ipdom) == 0 && ipdom[0] == VIGIL_CFG_NONE, "endless loop");
    struct vigil_cfg_edge bad[] = {E(0, 7, ALWAYS)};
    CHECK(vigil_postdominators(3, bad, 1, exits, 1, ipdom) == -1, "edge to block 7 of 3 accepted");
}

#define NONE VIGIL_CFG_NONE

/* Dominators: diamond plus an unreachable block 4. */
static void test_dominators(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, TRUE), E(0, 2, FALSE), E(1, 3, ALWAYS), E(2, 3, ALWAYS), E(4, 3, ALWAYS)};
    uint32_t idom[5];
    CHECK(vigil_dominators(5, e, 5, idom) == 0, "dominators failed");
    CHECK(idom[0] == NONE && idom[1] == 0 && idom[2] == 0 && idom[3] == 0 && idom[4] == NONE,
          "idom %u %u %u %u %u", idom[0], idom[1], idom[2], idom[3], idom[4]);
}

/* if (b0) { b1; b2 } b3, site only in b2: b2 is control equivalent to b1, but a call in b1 may
 * exit before b2, so b0's true edge is not counted by b2's site; with a site in b1 it is. The
 * false edge goes to a join (two ways in) and stays. */
static void test_redundant_equivalent(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, TRUE), E(0, 3, FALSE), E(1, 2, ALWAYS), E(2, 3, ALWAYS)};
    uint32_t exits[] = {3}, klass[4], src[4];
    CHECK(vigil_control_classes(4, e, 4, exits, 1, klass) == 0, "classes failed");
    CHECK(klass[1] == klass[2] && klass[0] == klass[3] && klass[0] != klass[1], "classes %u %u %u %u",
          klass[0], klass[1], klass[2], klass[3]);
    uint32_t sites[] = {NONE, NONE, 7, 9};
    CHECK(vigil_redundant_edges(4, e, 4, exits, 1, sites, src) == 0, "redundant_edges failed");
    CHECK(src[0] == NONE, "true edge counted by site %u of a control-equivalent block", src[0]);
    sites[1] = 6;
    CHECK(vigil_redundant_edges(4, e, 4, exits, 1, sites, src) == 0 && src[0] == 6,
          "true edge: source %u, expected site 6", src[0]);
    CHECK(src[1] == NONE, "false edge into a join removed (source %u)", src[1]);
    CHECK(src[2] == NONE && src[3] == NONE, "unconditional edges are not predicates");
}

/* Diamond with a site in b2 only: the false edge goes, the true edge (no site) stays. */
static void test_redundant_diamond(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, TRUE), E(0, 2, FALSE), E(1, 3, ALWAYS), E(2, 3, ALWAYS)};
    uint32_t exits[] = {3}, src[4], sites[] = {3, NONE, 4, 5};
    CHECK(vigil_redundant_edges(4, e, 4, exits, 1, sites, src) == 0 && src[0] == NONE && src[1] == 4,
          "diamond sources %u %u", src[0], src[1]);
}

/* if (b0) { b1; do b2 while (b2) } b3, site in b2 only: b2 runs more often than b1 (its own
 * loop), so b0's true edge is not counted by it. A loop exit edge is not counted by a site
 * before the loop either. */
static void test_redundant_loops(void)
{
    struct vigil_cfg_edge e[] = {E(0, 1, TRUE), E(0, 3, FALSE), E(1, 2, ALWAYS), E(2, 2, TRUE), E(2, 3, FALSE)};
    uint32_t exits[] = {3}, src[5], sites[] = {NONE, NONE, 8, NONE};
    CHECK(vigil_redundant_edges(4, e, 5, exits, 1, sites, src) == 0, "redundant_edges failed");
    CHECK(src[0] == NONE, "edge into a block before a loop counted by the loop's site %u", src[0]);
    struct vigil_cfg_edge w[] = {E(0, 1, ALWAYS), E(1, 2, TRUE), E(1, 3, FALSE), E(2, 1, ALWAYS)};
    uint32_t wsites[] = {5, 6, NONE, NONE}, wsrc[4];
    CHECK(vigil_redundant_edges(4, w, 4, exits, 1, wsites, wsrc) == 0, "redundant_edges failed");
    CHECK(wsrc[1] == NONE && wsrc[2] == NONE, "while loop: sources %u %u", wsrc[1], wsrc[2]);
    wsites[2] = 11;
    CHECK(vigil_redundant_edges(4, w, 4, exits, 1, wsites, wsrc) == 0 && wsrc[1] == 11,
          "loop body's own site counts the header's true edge (%u)", wsrc[1]);
}

int main(void)
{
    test_dominators();
    test_redundant_equivalent();
    test_redundant_diamond();
    test_redundant_loops();
    test_diamond();
    test_loop();
    test_nested_with_exit();
    test_endless_and_bad();
    return CHECK_DONE("cdg");
}
