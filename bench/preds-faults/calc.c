/* calc: evaluates one integer expression per line of stdin (+ - * / % ^, parentheses, unary
 * minus, variables a-z assigned with `x = expr`) and prints each value or "error". A
 * seeded-fault program of bench/preds-faults (FAULT=k selects fault k; 0 is the reference). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAULT
#define FAULT 0
#endif

enum token { T_END, T_NUM, T_VAR, T_OP, T_LPAREN, T_RPAREN, T_ASSIGN, T_BAD };

static const char *at;
static enum token tok;
static long tok_value;
static int tok_char, failed;
static long vars[26];

static void next(void)
{
    while (*at == ' ')
        at++;
    char c = *at;
    switch (c) {
    case '\0':
    case '\n':
        tok = T_END;
        return;
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
    case '^':
        tok = T_OP, tok_char = c, at++;
        return;
    case '(':
        tok = T_LPAREN, at++;
        return;
    case ')':
        tok = T_RPAREN, at++;
        return;
    case '=':
        tok = T_ASSIGN, at++;
        return;
    default:
        if (c >= '0' && c <= '9') {
            tok_value = 0;
#if FAULT == 1
            while (*at >= '0' && *at <= '9' && tok_value < 100000)   /* FAULT-1: long numbers are cut */
#else
            while (*at >= '0' && *at <= '9')                         /* FAULT-1 */
#endif
                tok_value = tok_value * 10 + (*at++ - '0');
            tok = T_NUM;
        } else if (c >= 'a' && c <= 'z') {
            tok = T_VAR, tok_char = c, at++;
        } else {
            tok = T_BAD, at++;
        }
        return;
    }
}

static inline long power(long base, long exp)
{
    long r = 1;
#if FAULT == 2
    if (exp == 0)                                      /* FAULT-2: x^0 taken as x */
        return base;
#endif
    for (long i = 0; i < exp && i < 63; i++)
        r *= base;
    return r;
}

static long expr(void);

static long primary(void)
{
    long v = 0;
    switch (tok) {
    case T_NUM:
        v = tok_value;
        next();
        return v;
    case T_VAR:
        v = vars[tok_char - 'a'];
        next();
        return v;
    case T_LPAREN:
        next();
        v = expr();
        if (tok != T_RPAREN)
            failed = 1;
        next();
        return v;
    case T_OP:
        if (tok_char == '-') {
            next();
#if FAULT == 3
            return primary();                          /* FAULT-3: unary minus ignored */
#else
            return -primary();                         /* FAULT-3 */
#endif
        }
        /* fall through */
    default:
        failed = 1;
        next();
        return 0;
    }
}

static long factor(void)
{
    long v = primary();
    if (tok == T_OP && tok_char == '^') {
        next();
        long e = factor();
        v = e < 0 ? 0 : power(v, e);
    }
    return v;
}

static long term(void)
{
    long v = factor();
    while (tok == T_OP && (tok_char == '*' || tok_char == '/' || tok_char == '%')) {
        int op = tok_char;
        next();
        long r = factor();
#if FAULT == 4
        if (r == 0 && op == '/') {                     /* FAULT-4: % by zero not caught */
#else
        if (r == 0 && op != '*') {                     /* FAULT-4 */
#endif
            failed = 1;
            continue;
        }
        v = op == '*' ? v * r : op == '/' ? v / r : v % r;
    }
    return v;
}

static long expr(void)
{
    long v = term();
    while (tok == T_OP && (tok_char == '+' || tok_char == '-')) {
        int op = tok_char;
        next();
        long r = term();
#if FAULT == 5
        v = op == '+' ? v + r : r - v;                 /* FAULT-5: operands of - swapped */
#else
        v = op == '+' ? v + r : v - r;                 /* FAULT-5 */
#endif
    }
    return v;
}

int main(void)
{
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        at = line, failed = 0;
        next();
        int target = -1;
        if (tok == T_VAR && strchr(at, '=')) {
            target = tok_char - 'a';
            next();
            if (tok != T_ASSIGN) {
                printf("%d: error\n", lineno);
                continue;
            }
            next();
        }
        long v = expr();
        if (tok != T_END || failed) {
            printf("%d: error\n", lineno);
            continue;
        }
        if (target >= 0)
            vars[target] = v;
        printf("%d: %ld\n", lineno, v);
    }
    return 0;
}
