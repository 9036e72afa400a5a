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

int main(void)
{
    test_diamond();
    test_loop();
    test_nested_with_exit();
    test_endless_and_bad();
    return CHECK_DONE("cdg");
}
