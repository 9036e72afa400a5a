/* Scores of statistical debugging (formulas in scores.h and tools/preds/DESIGN.md). */
#include "scores.h"

#include <math.h>

double vigil_score_failcount(const struct vigil_pred_counts *c)
{
    return (double)c->f;
}

double vigil_score_failure(const struct vigil_pred_counts *c)
{
    uint64_t n = c->f + c->s;
    return n ? (double)c->f / (double)n : NAN;
}

double vigil_score_context(const struct vigil_pred_counts *c)
{
    uint64_t n = c->f_obs + c->s_obs;
    return n ? (double)c->f_obs / (double)n : NAN;
}

double vigil_score_increase(const struct vigil_pred_counts *c)
{
    return vigil_score_failure(c) - vigil_score_context(c);   /* NaN propagates */
}

static double harmonic_importance(double increase, uint64_t f, uint64_t num_f)
{
    if (num_f <= 1 || isnan(increase))
        return NAN;
    if (increase <= 0 || f <= 1)
        return 0;
    double sensitivity = log((double)f) / log((double)num_f);
    return 2.0 / (1.0 / increase + 1.0 / sensitivity);
}

double vigil_score_importance(const struct vigil_pred_counts *c, uint64_t num_f)
{
    return harmonic_importance(vigil_score_increase(c), c->f, num_f);
}

double vigil_score_max_importance(const struct vigil_pred_counts *c, uint64_t num_f)
{
    double failure = vigil_score_failure(c);
    return harmonic_importance(1.0 - failure, c->f, num_f);
}

/* Continued fraction of the incomplete beta function, evaluated with the modified Lentz
 * method; converges quickly for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double x, double a, double b)
{
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 500; m++) {
        double m2 = 2.0 * m;
        /* even step: d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)) */
        double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + num * d;
        c = 1.0 + num / c;
        if (fabs(d) < tiny) d = tiny;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        h *= d * c;
        /* odd step: d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) */
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + num * d;
        c = 1.0 + num / c;
        if (fabs(d) < tiny) d = tiny;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1.0) < eps)
            break;
    }
    return h;
}

double vigil_incomplete_beta(double x, double a, double b)
{
    if (!(x > 0))
        return 0;
    if (!(x < 1))
        return 1;
    double log_front = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    if (x < (a + 1.0) / (a + b + 2.0))
        return exp(log_front) * beta_fraction(x, a, b) / a;
    return 1.0 - exp(log_front) * beta_fraction(1.0 - x, b, a) / b;
}

double vigil_student_t_pvalue(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    return vigil_incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
}

double vigil_student_t_log10_pvalue(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return -INFINITY;
    double x = df / (df + t * t), a = df / 2.0, b = 0.5;
    if (!(x > 0))
        return -INFINITY;
    if (x < (a + 1.0) / (a + b + 2.0)) {   /* the tail: log of I_x(a, b) without forming it */
        double log_front = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
        return (log_front + log(beta_fraction(x, a, b)) - log(a)) / log(10.0);
    }
    return log10(vigil_incomplete_beta(x, a, b));
}

/* Student's t statistic of the difference of truth rates (failing - successful), with its
 * degrees of freedom; 0 when a sample is empty or there are fewer than 3 observations. When
 * neither sample varies (p true in all of one side and none of the other), the pooled
 * variance is taken as 1 / (4 N) of N observations: the statistic stays finite and grows with
 * the evidence, so that such predicates rank among themselves. */
static double t_statistic(const struct vigil_pred_counts *c, double *df, int *certain)
{
    double n1 = (double)c->f_obs, n2 = (double)c->s_obs;
    *df = 0, *certain = 0;
    if (c->f_obs == 0 || c->s_obs == 0 || c->f_obs + c->s_obs < 3)
        return 0;
    double m1 = (double)c->f / n1, m2 = (double)c->s / n2;
    *df = n1 + n2 - 2;
    if (m1 == m2)
        return 0;
    /* 0/1 samples: the sum of squared deviations of a sample is n m (1 - m) */
    double pooled = (n1 * m1 * (1 - m1) + n2 * m2 * (1 - m2)) / (n1 + n2 - 2);
    if (pooled == 0)
        pooled = 1.0 / (4.0 * (n1 + n2)), *certain = 1;
    return (m1 - m2) / sqrt(pooled * (1 / n1 + 1 / n2));
}

double vigil_ttest_confidence(const struct vigil_pred_counts *c)
{
    double df;
    int certain;
    double t = t_statistic(c, &df, &certain);
    if (t == 0)
        return 0;
    return certain ? 1 : 1.0 - vigil_student_t_pvalue(t, df);
}

double vigil_score_ttest(const struct vigil_pred_counts *c)
{
    double df;
    int certain;
    double t = t_statistic(c, &df, &certain);
    if (t == 0)
        return 0;
    double digits = -vigil_student_t_log10_pvalue(t, df);
    return t > 0 ? digits : -digits;
}
