/* Dominators and post-dominators (the iterative algorithm of Cooper, Harvey and Kennedy, on
 * the CFG and on the reverse CFG), control dependences (Ferrante et al.: for an edge A -> B,
 * the nodes on the post-dominator tree path from B up to, not including, ipdom(A)), control
 * equivalence and the redundant branch edges of seed 002 section 3.1. */
#include "cdg.h"

#include <stdlib.h>
#include <string.h>

/* The graph with its virtual nodes, as successor and predecessor lists. */
struct graph {
    uint32_t n;                       /* nblocks + 2 */
    uint32_t *succ_start, *succ;      /* CSR of successors */
    uint32_t *succ_label;
    uint32_t *pred_start, *pred;      /* CSR of predecessors */
};

static void graph_free(struct graph *g)
{
    free(g->succ_start);
    free(g->succ);
    free(g->succ_label);
    free(g->pred_start);
    free(g->pred);
}

/* from/to/label triples including the virtual edges; `extra_exits` are blocks that cannot
 * reach an exit, made exits. */
static int graph_build(struct graph *g, uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                       const uint32_t *exits, uint32_t nexits, const uint8_t *extra_exit)
{
    memset(g, 0, sizeof *g);
    uint32_t n = nblocks + 2, exit = nblocks, entry = nblocks + 1;
    size_t nextra = 0;
    for (uint32_t b = 0; extra_exit && b < nblocks; b++)
        nextra += extra_exit[b];
    size_t m = (size_t)nedges + nexits + nextra + 2;
    struct vigil_cfg_edge *all = malloc(m * sizeof *all);
    if (!all)
        return -1;
    size_t k = 0;
    for (uint32_t i = 0; i < nedges; i++) {
        if (edges[i].from >= nblocks || edges[i].to >= nblocks) {
            free(all);
            return -1;
        }
        all[k++] = edges[i];
    }
    for (uint32_t i = 0; i < nexits; i++) {
        if (exits[i] >= nblocks) {
            free(all);
            return -1;
        }
        all[k++] = (struct vigil_cfg_edge){exits[i], exit, VIGIL_EDGE_ALWAYS};
    }
    for (uint32_t b = 0; extra_exit && b < nblocks; b++)
        if (extra_exit[b])
            all[k++] = (struct vigil_cfg_edge){b, exit, VIGIL_EDGE_ALWAYS};
    if (nblocks)
        all[k++] = (struct vigil_cfg_edge){entry, 0, VIGIL_EDGE_ALWAYS};
    all[k++] = (struct vigil_cfg_edge){entry, exit, VIGIL_EDGE_FALSE};
    g->n = n;
    g->succ_start = calloc(n + 1, sizeof *g->succ_start);
    g->pred_start = calloc(n + 1, sizeof *g->pred_start);
    g->succ = malloc((k + 1) * sizeof *g->succ);
    g->succ_label = malloc((k + 1) * sizeof *g->succ_label);
    g->pred = malloc((k + 1) * sizeof *g->pred);
    uint32_t *fill = calloc(n + 1, sizeof *fill);
    if (!g->succ_start || !g->pred_start || !g->succ || !g->succ_label || !g->pred || !fill) {
        free(all);
        free(fill);
        graph_free(g);
        return -1;
    }
    for (size_t i = 0; i < k; i++) {
        g->succ_start[all[i].from + 1]++;
        g->pred_start[all[i].to + 1]++;
    }
    for (uint32_t v = 0; v < n; v++) {
        g->succ_start[v + 1] += g->succ_start[v];
        g->pred_start[v + 1] += g->pred_start[v];
    }
    for (size_t i = 0; i < k; i++) {
        uint32_t s = g->succ_start[all[i].from] + fill[all[i].from]++;
        g->succ[s] = all[i].to;
        g->succ_label[s] = all[i].label;
    }
    memset(fill, 0, (n + 1) * sizeof *fill);
    for (size_t i = 0; i < k; i++)
        g->pred[g->pred_start[all[i].to] + fill[all[i].to]++] = all[i].from;
    free(fill);
    free(all);
    return 0;
}

/* Adjacency in one direction: successors (forward) or predecessors (backward). */
struct adjacency {
    const uint32_t *start, *next;
};

static struct adjacency walk_of(const struct graph *g, int forward)
{
    return forward ? (struct adjacency){g->succ_start, g->succ} : (struct adjacency){g->pred_start, g->pred};
}

/* Post-order numbering from root along `walk`; number[v] = UINT32_MAX when v is not
 * reached. Iterative DFS. Returns the count reached, UINT32_MAX when memory runs out. */
static uint32_t postorder(const struct graph *g, uint32_t root, struct adjacency walk, uint32_t *number,
                          uint32_t *by_number)
{
    uint32_t n = g->n, count = 0;
    uint32_t *stack = malloc(n * sizeof *stack), *next = calloc(n, sizeof *next);
    uint8_t *seen = calloc(n, 1);
    if (!stack || !next || !seen) {
        free(stack), free(next), free(seen);
        return UINT32_MAX;
    }
    for (uint32_t v = 0; v < n; v++)
        number[v] = UINT32_MAX;
    uint32_t top = 0;
    stack[top++] = root;
    seen[root] = 1;
    while (top) {
        uint32_t v = stack[top - 1];
        uint32_t i = walk.start[v] + next[v];
        if (i < walk.start[v + 1]) {
            next[v]++;
            uint32_t w = walk.next[i];
            if (!seen[w]) {
                seen[w] = 1;
                stack[top++] = w;
            }
            continue;
        }
        top--;
        number[v] = count;
        by_number[count++] = v;
    }
    free(stack), free(next), free(seen);
    return count;
}

/* Immediate dominators from root along the edges of `forward` (Cooper, Harvey and Kennedy):
 * forward = 1 gives dominators from a root, 0 post-dominators from EXIT on the reverse graph.
 * UINT32_MAX for the root and for nodes not reached. */
static int iterative_idom(const struct graph *g, uint32_t root, int forward, uint32_t *idom)
{
    uint32_t n = g->n;
    uint32_t *number = malloc(n * sizeof *number), *by_number = malloc(n * sizeof *by_number);
    if (!number || !by_number) {
        free(number), free(by_number);
        return -1;
    }
    uint32_t count = postorder(g, root, walk_of(g, forward), number, by_number);
    if (count == UINT32_MAX) {
        free(number), free(by_number);
        return -1;
    }
    struct adjacency meet = walk_of(g, !forward);
    for (uint32_t v = 0; v < n; v++)
        idom[v] = UINT32_MAX;
    idom[root] = root;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t k = count; k-- > 0;) {   /* reverse post-order */
            uint32_t v = by_number[k];
            if (v == root)
                continue;
            uint32_t best = UINT32_MAX;
            for (uint32_t i = meet.start[v]; i < meet.start[v + 1]; i++) {
                uint32_t w = meet.next[i];
                if (idom[w] == UINT32_MAX)
                    continue;
                if (best == UINT32_MAX) {
                    best = w;
                    continue;
                }
                uint32_t a = best, b = w;
                while (a != b) {
                    while (number[a] < number[b])
                        a = idom[a];
                    while (number[b] < number[a])
                        b = idom[b];
                }
                best = a;
            }
            if (best != UINT32_MAX && idom[v] != best) {
                idom[v] = best;
                changed = 1;
            }
        }
    }
    idom[root] = UINT32_MAX;
    free(number), free(by_number);
    return 0;
}

/* ipdom over the whole graph (virtual nodes included), UINT32_MAX for EXIT itself. */
static int compute_ipdom(const struct graph *g, uint32_t *ipdom_all)
{
    return iterative_idom(g, g->n - 2, 0, ipdom_all);
}

/* Build the graph, making blocks that cannot reach an exit into exits. */
static int build_complete(struct graph *g, uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                          const uint32_t *exits, uint32_t nexits, uint32_t *ipdom_all)
{
    if (graph_build(g, nblocks, edges, nedges, exits, nexits, NULL) != 0 || compute_ipdom(g, ipdom_all) != 0)
        return -1;
    uint8_t *extra = calloc(nblocks + 1, 1);
    if (!extra)
        return -1;
    int any = 0;
    for (uint32_t b = 0; b < nblocks; b++)
        if (ipdom_all[b] == UINT32_MAX)
            extra[b] = 1, any = 1;
    int rc = 0;
    if (any) {
        graph_free(g);
        rc = graph_build(g, nblocks, edges, nedges, exits, nexits, extra) != 0 || compute_ipdom(g, ipdom_all) != 0 ? -1 : 0;
    }
    free(extra);
    return rc;
}

int vigil_postdominators(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                         const uint32_t *exits, uint32_t nexits, uint32_t *ipdom)
{
    struct graph g;
    uint32_t *all = malloc((nblocks + 2) * sizeof *all);
    if (!all || build_complete(&g, nblocks, edges, nedges, exits, nexits, all) != 0) {
        free(all);
        return -1;
    }
    for (uint32_t b = 0; b < nblocks; b++)
        ipdom[b] = all[b] >= nblocks ? VIGIL_CFG_NONE : all[b];
    graph_free(&g);
    free(all);
    return 0;
}

static int cmp_dep(const void *a, const void *b)
{
    const struct vigil_cdep *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    if (x->label != y->label) return x->label < y->label ? -1 : 1;
    return x->block < y->block ? -1 : x->block > y->block;
}

int vigil_control_dependences(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                              const uint32_t *exits, uint32_t nexits, struct vigil_cdep **deps, size_t *ndeps)
{
    *deps = NULL;
    *ndeps = 0;
    struct graph g;
    uint32_t *ipdom = malloc((nblocks + 2) * sizeof *ipdom);
    if (!ipdom || build_complete(&g, nblocks, edges, nedges, exits, nexits, ipdom) != 0) {
        free(ipdom);
        return -1;
    }
    uint32_t exit = nblocks, entry = nblocks + 1;
    size_t n = 0, cap = 16;
    struct vigil_cdep *out = malloc(cap * sizeof *out);
    int rc = out ? 0 : -1;
    for (uint32_t a = 0; a < g.n && rc == 0; a++) {
        for (uint32_t i = g.succ_start[a]; i < g.succ_start[a + 1] && rc == 0; i++) {
            uint32_t b = g.succ[i], stop = ipdom[a];
            /* B post-dominates A: A -> B decides nothing (also the case of single successors). */
            for (uint32_t r = b; r != stop && r != exit && r != UINT32_MAX; r = ipdom[r]) {
                if (n == cap) {
                    struct vigil_cdep *grown = realloc(out, (cap *= 2) * sizeof *out);
                    if (!grown) {
                        rc = -1;
                        break;
                    }
                    out = grown;
                }
                out[n++] = (struct vigil_cdep){r, a == entry ? VIGIL_CDG_ENTRY : a, g.succ_label[i]};
            }
        }
    }
    graph_free(&g);
    free(ipdom);
    if (rc != 0) {
        free(out);
        return -1;
    }
    /* Entry dependences carry the label of the ENTRY -> block 0 edge: report them as ALWAYS. */
    for (size_t i = 0; i < n; i++)
        if (out[i].from == VIGIL_CDG_ENTRY)
            out[i].label = VIGIL_EDGE_ALWAYS;
    qsort(out, n, sizeof *out, cmp_dep);
    *deps = out;
    *ndeps = n;
    return 0;
}

int vigil_dominators(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges, uint32_t *idom)
{
    struct graph g;
    uint32_t *all = malloc((nblocks + 2) * sizeof *all);
    if (!all || graph_build(&g, nblocks, edges, nedges, NULL, 0, NULL) != 0) {
        free(all);
        return -1;
    }
    int rc = iterative_idom(&g, g.n - 1, 1, all);   /* from ENTRY, whose only block edge is to 0 */
    for (uint32_t b = 0; rc == 0 && b < nblocks; b++)
        idom[b] = all[b] >= nblocks ? VIGIL_CFG_NONE : all[b];
    graph_free(&g);
    free(all);
    return rc;
}

/* Whether a is an ancestor-or-self of b in the tree given by parent[] (VIGIL_CFG_NONE ends). */
static int tree_ancestor(const uint32_t *parent, uint32_t nblocks, uint32_t a, uint32_t b)
{
    for (uint32_t steps = 0; b != VIGIL_CFG_NONE && steps <= nblocks; b = parent[b], steps++)
        if (b == a)
            return 1;
    return 0;
}

struct block_key {
    uint64_t hash;
    uint32_t block;
};

static int cmp_key(const void *a, const void *b)
{
    const struct block_key *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->block < y->block ? -1 : x->block > y->block;
}

static int cmp_dep_by_block(const void *a, const void *b)
{
    const struct vigil_cdep *x = a, *y = b;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    return x->label < y->label ? -1 : x->label > y->label;
}

int vigil_control_classes(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                          const uint32_t *exits, uint32_t nexits, uint32_t *klass)
{
    struct vigil_cdep *deps;
    size_t ndeps;
    if (vigil_control_dependences(nblocks, edges, nedges, exits, nexits, &deps, &ndeps) != 0)
        return -1;
    qsort(deps, ndeps, sizeof *deps, cmp_dep_by_block);
    size_t *first = calloc((size_t)nblocks + 1, sizeof *first);
    struct block_key *keys = malloc(((size_t)nblocks + 1) * sizeof *keys);
    if (!first || !keys) {
        free(deps), free(first), free(keys);
        return -1;
    }
    for (size_t i = 0; i < ndeps; i++)
        first[deps[i].block + 1]++;
    for (uint32_t b = 0; b < nblocks; b++)
        first[b + 1] += first[b];
    for (uint32_t b = 0; b < nblocks; b++) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = first[b]; i < first[b + 1]; i++)
            h = ((h ^ deps[i].from) * 0x100000001b3ull ^ deps[i].label) * 0x100000001b3ull;
        keys[b] = (struct block_key){h, b};
    }
    qsort(keys, nblocks, sizeof *keys, cmp_key);
    /* Within a run of equal hashes, a block joins the class of the first earlier block whose
     * dependence list is identical (runs are tiny unless hashes collide). */
    for (uint32_t k = 0; k < nblocks; k++) {
        uint32_t b = keys[k].block;
        klass[b] = b;
        for (uint32_t j = k; j-- > 0 && keys[j].hash == keys[k].hash;) {
            uint32_t c = keys[j].block;
            size_t len = first[b + 1] - first[b];
            if (len != first[c + 1] - first[c])
                continue;
            int same = 1;
            for (size_t i = 0; i < len && same; i++)
                same = deps[first[b] + i].from == deps[first[c] + i].from &&
                       deps[first[b] + i].label == deps[first[c] + i].label;
            if (same) {
                klass[b] = klass[c];
                break;
            }
        }
    }
    free(deps), free(first), free(keys);
    return 0;
}

int vigil_redundant_edges(uint32_t nblocks, const struct vigil_cfg_edge *edges, uint32_t nedges,
                          const uint32_t *exits, uint32_t nexits, const uint32_t *block_site, uint32_t *edge_source)
{
    (void)exits, (void)nexits;   /* for a source in a control-equivalent block: see below */
    for (uint32_t e = 0; e < nedges; e++)
        edge_source[e] = VIGIL_CFG_NONE;
    size_t words = (size_t)nblocks + 1;
    uint32_t *idom = malloc(words * sizeof *idom), *indegree = calloc(words, sizeof *indegree);
    int rc = -1;
    if (!idom || !indegree || vigil_dominators(nblocks, edges, nedges, idom) != 0)
        goto out;
    for (uint32_t e = 0; e < nedges; e++)
        indegree[edges[e].to]++;
    for (uint32_t e = 0; e < nedges; e++) {
        uint32_t u = edges[e].from, v = edges[e].to;
        if (edges[e].label != VIGIL_EDGE_TRUE && edges[e].label != VIGIL_EDGE_FALSE)
            continue;
        /* v runs exactly when this edge is taken: u dominates v, and (for an exact count, with
         * loops and joins in mind) the edge is v's only way in. */
        if (v == 0 || indegree[v] != 1 || !tree_ancestor(idom, nblocks, u, v))
            continue;
        /* The source must be v's own site. Seed 002 also allows a site in a block w control
         * equivalent to v (v dominates w, w post-dominates v), but post-dominance ignores calls
         * that do not return: a run that enters v and then exits (exit(1) on an error, the
         * usual failure of a C program), aborts or crashes in a call before w counts v's edge
         * and never w's site, so the count reconstructed for the failing runs was 0 (gzip:
         * main's predicates before treat_stdin(); tools/preds/DESIGN.md). With nothing known
         * here about the code between v and w, only v itself is safe: block_site holds sites
         * reached whenever their block is entered. */
        edge_source[e] = block_site[v];
    }
    rc = 0;
out:
    free(idom), free(indegree);
    return rc;
}
