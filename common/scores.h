/* Scores of statistical debugging (seed 002 section 4.3; Liblit et al.'s Importance), computed
 * from the four per-predicate counts and NumF. Pure functions: no I/O, no allocation.
 * Undefined scores are NaN (e.g. Increase of a predicate never true); rankers sort NaN last. */
#ifndef VIGIL_SCORES_H
#define VIGIL_SCORES_H
#include <stdint.h>

struct vigil_pred_counts {
    uint64_t f;       /* F(p): failing runs in which p was true at least once */
    uint64_t s;       /* S(p): successful runs in which p was true at least once */
    uint64_t f_obs;   /* F(p observed): failing runs that reached p's site */
    uint64_t s_obs;   /* S(p observed): successful runs that reached p's site */
};

/* failcount(p) = F(p). */
double vigil_score_failcount(const struct vigil_pred_counts *c);
/* Failure(p) = F(p) / (S(p) + F(p)). */
double vigil_score_failure(const struct vigil_pred_counts *c);
/* Context(p) = F(p obs) / (S(p obs) + F(p obs)). */
double vigil_score_context(const struct vigil_pred_counts *c);
/* Increase(p) = Failure(p) - Context(p). */
double vigil_score_increase(const struct vigil_pred_counts *c);
/* Importance(p) = 2 / (1/Increase(p) + log NumF / log F(p)): the harmonic mean of Increase and
 * the normalized log failure count. NaN when NumF <= 1 or Increase is undefined; 0 when
 * Increase <= 0 or F(p) <= 1 (a harmonic mean with a non-positive term means "no evidence"). */
double vigil_score_importance(const struct vigil_pred_counts *c, uint64_t num_f);
/* maxImportance(p) = Importance(h) for the best predicate h that p could lead to in a forward
 * search: F(h) = F(h obs) = F(p), S(h) = 0, S(h obs) = S(p). */
double vigil_score_max_importance(const struct vigil_pred_counts *c, uint64_t num_f);
/* Two-sided confidence (0..1) of Student's two-sample t-test (pooled variance) that p's truth
 * rate differs between failing runs (F(p) of F(p obs)) and successful runs (S(p) of S(p obs)).
 * 0 when either sample is empty or there are fewer than 3 observations in all. */
double vigil_ttest_confidence(const struct vigil_pred_counts *c);
/* ttest(p): the significance of that difference in decimal digits, -log10(p-value), positive
 * when p is true in a larger share of failures than successes, else negative; 0 when there is
 * no difference or too few observations. Unlike the confidence it does not saturate (1 - p
 * rounds to 1 for p < 1e-16): 2 is p = 0.01, 20 is p = 1e-20. When neither sample varies the
 * statistic is computed with a pooled variance of 1 / (4 N) (N observations), finite. */
double vigil_score_ttest(const struct vigil_pred_counts *c);

/* Regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1. */
double vigil_incomplete_beta(double x, double a, double b);
/* log10 of the two-sided p-value of Student's t, computed in the tail without underflow. */
double vigil_student_t_log10_pvalue(double t, double df);
/* Two-sided p-value of Student's t distribution with df degrees of freedom. */
double vigil_student_t_pvalue(double t, double df);

#endif
