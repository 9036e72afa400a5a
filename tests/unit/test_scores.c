/* Scores against values computed by hand from the formulas of seed 002 (section 4.3) and
 * closed forms of Student's t distribution. */
#include "check.h"
#include "scores.h"

#include <math.h>

#define NEAR(a, b, tol) (fabs((a) - (b)) <= (tol))

static void test_counts_scores(void)
{
    /* F(p)=10, S(p)=2, F(p obs)=12, S(p obs)=20, NumF=16 */
    struct vigil_pred_counts c = {.f = 10, .s = 2, .f_obs = 12, .s_obs = 20};
    CHECK(vigil_score_failcount(&c) == 10, "failcount");
    CHECK(NEAR(vigil_score_failure(&c), 0.8333333333, 1e-9), "failure %f", vigil_score_failure(&c));
    CHECK(NEAR(vigil_score_context(&c), 0.375, 1e-12), "context %f", vigil_score_context(&c));
    CHECK(NEAR(vigil_score_increase(&c), 0.4583333333, 1e-9), "increase %f", vigil_score_increase(&c));
    /* log 10 / log 16 = 0.8304820237; 2 / (1/0.4583333 + 1/0.8304820) = 0.5906785 */
    CHECK(NEAR(vigil_score_importance(&c, 16), 0.5906785, 1e-6), "importance %.7f",
          vigil_score_importance(&c, 16));
    /* h: Increase(h) = 1 - 10/12 = 0.1666667; 2 / (6 + 1.2041199) = 0.2776190 */
    CHECK(NEAR(vigil_score_max_importance(&c, 16), 0.2776190, 1e-6), "maxImportance %.7f",
          vigil_score_max_importance(&c, 16));
    /* t = 5.9079477 with 30 degrees of freedom: p is about 2e-6 */
    double conf = vigil_ttest_confidence(&c);
    CHECK(conf > 0.99999 && conf < 1.0, "ttest confidence %.9f", conf);
    CHECK(NEAR(vigil_score_ttest(&c), -log10(1 - conf), 1e-6), "ttest score: -log10 p %.6f want %.6f",
          vigil_score_ttest(&c), -log10(1 - conf));
}

static void test_undefined_and_edges(void)
{
    struct vigil_pred_counts never_true = {.f = 0, .s = 0, .f_obs = 3, .s_obs = 5};
    CHECK(isnan(vigil_score_increase(&never_true)), "increase of a never-true predicate");
    CHECK(isnan(vigil_score_importance(&never_true, 10)), "importance of a never-true predicate");
    struct vigil_pred_counts one_failure = {.f = 1, .s = 0, .f_obs = 1, .s_obs = 10};
    CHECK(vigil_score_importance(&one_failure, 10) == 0, "F(p) = 1 gives log F = 0, importance 0");
    CHECK(isnan(vigil_score_importance(&one_failure, 1)), "NumF = 1: importance undefined");
    /* Increase < 0: failure 0.1, context 1/3 */
    struct vigil_pred_counts success_side = {.f = 1, .s = 9, .f_obs = 5, .s_obs = 10};
    CHECK(NEAR(vigil_score_increase(&success_side), 0.1 - 1.0 / 3, 1e-12), "negative increase");
    CHECK(vigil_score_importance(&success_side, 5) == 0, "negative increase: importance 0");
    /* a branch always true: Increase 0 */
    struct vigil_pred_counts always = {.f = 8, .s = 30, .f_obs = 8, .s_obs = 30};
    CHECK(NEAR(vigil_score_increase(&always), 0, 1e-12) && vigil_score_importance(&always, 8) == 0,
          "always-true predicate");
    CHECK(vigil_ttest_confidence(&always) == 0, "no difference: confidence 0");
    /* deterministic separation: true in every failure and no success, no variance */
    struct vigil_pred_counts perfect = {.f = 4, .s = 0, .f_obs = 4, .s_obs = 6};
    CHECK(vigil_ttest_confidence(&perfect) == 1, "perfect separation: confidence 1");
    struct vigil_pred_counts perfect_more = {.f = 40, .s = 0, .f_obs = 40, .s_obs = 60};
    double s4 = vigil_score_ttest(&perfect), s40 = vigil_score_ttest(&perfect_more);
    CHECK(isfinite(s4) && s4 > 0 && isfinite(s40) && s40 > s4,
          "perfect separation: finite, more runs rank higher (%f, %f)", s4, s40);
    CHECK(NEAR(vigil_score_importance(&perfect, 4), 2.0 / (1 / 0.6 + 1.0), 1e-12),
          "perfect importance %f", vigil_score_importance(&perfect, 4));
    struct vigil_pred_counts empty = {.f = 0, .s = 0, .f_obs = 0, .s_obs = 7};
    CHECK(vigil_ttest_confidence(&empty) == 0, "no failing observations: confidence 0");
}

static void test_ttest_closed_forms(void)
{
    /* df = 2: two-sided p = 1 - |t| / sqrt(t^2 + 2). Samples {1,0} vs {0,0}: pooled variance
     * (2*0.25 + 0)/2 = 0.25, se = 0.5 * sqrt(1/2 + 1/2) = 0.5, t = 0.5/0.5 = 1. */
    struct vigil_pred_counts c = {.f = 1, .s = 0, .f_obs = 2, .s_obs = 2};
    double want = 1.0 / sqrt(3.0);
    CHECK(NEAR(vigil_ttest_confidence(&c), want, 1e-9), "df=2 confidence %.9f want %.9f",
          vigil_ttest_confidence(&c), want);
    CHECK(NEAR(vigil_score_ttest(&c), -log10(1 - want), 1e-9), "df=2 score positive");
    struct vigil_pred_counts mirrored = {.f = 0, .s = 1, .f_obs = 2, .s_obs = 2};
    CHECK(NEAR(vigil_score_ttest(&mirrored), log10(1 - want), 1e-9), "df=2 score negative %f",
          vigil_score_ttest(&mirrored));
    /* log10 p agrees with p where p is representable, and goes on in the tail */
    CHECK(NEAR(vigil_student_t_log10_pvalue(2.228139, 10), log10(0.05), 1e-6), "log10 p df=10");
    CHECK(NEAR(vigil_student_t_log10_pvalue(1.0, 1), log10(0.5), 1e-12), "log10 p cauchy");
    double far = vigil_student_t_log10_pvalue(60, 200), farther = vigil_student_t_log10_pvalue(80, 200);
    CHECK(isfinite(far) && far < -100 && farther < far, "tail: log10 p finite and decreasing (%f, %f)", far, farther);
    /* no saturation: two very significant predicates keep distinct scores */
    struct vigil_pred_counts strong = {.f = 90, .s = 5, .f_obs = 100, .s_obs = 900};
    struct vigil_pred_counts stronger = {.f = 95, .s = 5, .f_obs = 100, .s_obs = 900};
    CHECK(vigil_ttest_confidence(&strong) == 1 && vigil_score_ttest(&stronger) > vigil_score_ttest(&strong) + 1,
          "no saturation (%f, %f)", vigil_score_ttest(&strong), vigil_score_ttest(&stronger));
    /* df = 1 (Cauchy): p = 1 - (2/pi) atan|t| */
    CHECK(NEAR(vigil_student_t_pvalue(1.0, 1), 0.5, 1e-12), "cauchy t=1 %.12f", vigil_student_t_pvalue(1.0, 1));
    CHECK(NEAR(vigil_student_t_pvalue(sqrt(3.0), 1), 1.0 / 3, 1e-12), "cauchy t=sqrt3");
    CHECK(NEAR(vigil_student_t_pvalue(-1.0, 2), 1 - 1 / sqrt(3.0), 1e-12), "df=2 symmetric");
    /* tables: t = 2.228139 is the 97.5% quantile at df 10; 2.042272 at df 30 */
    CHECK(NEAR(vigil_student_t_pvalue(2.228139, 10), 0.05, 1e-6), "df=10 %.8f", vigil_student_t_pvalue(2.228139, 10));
    CHECK(NEAR(vigil_student_t_pvalue(2.042272, 30), 0.05, 1e-6), "df=30 %.8f", vigil_student_t_pvalue(2.042272, 30));
    CHECK(vigil_student_t_pvalue(0, 7) == 1, "t = 0: p = 1");
    CHECK(vigil_student_t_pvalue(INFINITY, 7) == 0, "t = inf: p = 0");
    /* the incomplete beta itself: I_x(1,1) = x, I_x(2,1) = x^2, I_x(1,2) = 1 - (1-x)^2, I_.5(a,a) = .5 */
    CHECK(NEAR(vigil_incomplete_beta(0.3, 1, 1), 0.3, 1e-12), "I(1,1)");
    CHECK(NEAR(vigil_incomplete_beta(0.3, 2, 1), 0.09, 1e-12), "I(2,1)");
    CHECK(NEAR(vigil_incomplete_beta(0.3, 1, 2), 1 - 0.49, 1e-12), "I(1,2)");
    CHECK(NEAR(vigil_incomplete_beta(0.5, 7.5, 7.5), 0.5, 1e-12), "I(a,a) at 0.5");
    CHECK(vigil_incomplete_beta(0, 2, 3) == 0 && vigil_incomplete_beta(1, 2, 3) == 1, "bounds");
}

int main(void)
{
    test_counts_scores();
    test_undefined_and_edges();
    test_ttest_closed_forms();
    return CHECK_DONE("scores");
}
