// Functions over VIGIL_CC_DUAL_MAX (set tiny here): one with two outermost loops (the
// interpreter shape: it gets transfers, a burst ends inside it) and a state machine with more
// outermost loops than VIGIL_CC_GIANT_LOOPS (entry check only). Output depends on every step.
// e2e-compiler-env: VIGIL_CC_DUAL_MAX=5 VIGIL_CC_GIANT_LOOPS=3
#include <stdio.h>
#include <string.h>

static unsigned long mix(unsigned long h, unsigned long v) { return (h ^ v) * 1099511628211UL; }

/* A small bytecode interpreter: one dispatch loop, an inner loop in one opcode. */
__attribute__((noinline)) static unsigned long interpret(const unsigned char *code, int n, int rounds)
{
    unsigned long acc = 14695981039346656037UL, stack[8] = {0};
    int sp = 0;
    for (int r = 0; r < rounds; r++) {
        for (int pc = 0; pc < n; pc++) {
            switch (code[pc] % 5) {
            case 0: stack[sp++ & 7] = acc; break;
            case 1: acc = mix(acc, stack[--sp & 7]); break;
            case 2: for (int k = 0; k < code[pc] % 7; k++) acc = mix(acc, (unsigned long)k); break;
            case 3: acc += (unsigned long)pc * 31; break;
            default: acc ^= acc >> 13; break;
            }
        }
    }
    while (sp > 0)
        acc = mix(acc, stack[--sp & 7]);
    return acc;
}

/* A state machine of many small loops one after another. */
__attribute__((noinline)) static unsigned long stages(const char *s)
{
    unsigned long h = 0;
    size_t i = 0, n = strlen(s);
    while (i < n && s[i] == ' ') i++;
    while (i < n && s[i] >= 'a' && s[i] <= 'z') h = mix(h, (unsigned long)s[i++]);
    while (i < n && s[i] == ' ') i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') h = h * 10 + (unsigned long)(s[i++] - '0');
    while (i < n && s[i] != ';') h = mix(h, (unsigned long)s[i++]);
    for (size_t k = 0; k < n; k++) h += (unsigned long)s[k] << (k % 17);
    for (size_t k = n; k-- > 0;) h = mix(h, (unsigned long)s[k] * k);
    while (h % 7 != 3) h = mix(h, 0x9e37);
    for (int k = 0; k < (int)(h % 5) + 1; k++) h = mix(h, (unsigned long)k);
    while (h % 11 != 5) h = mix(h, 0x7f4a);
    return h;
}

int main(void)
{
    unsigned char code[64];
    for (int i = 0; i < 64; i++)
        code[i] = (unsigned char)(i * 37 + 11);
    unsigned long total = 0;
    for (int call = 0; call < 300; call++) {
        total = mix(total, interpret(code, 64, 20 + call % 7));
        total = mix(total, stages("  alpha 12345 tail;rest"));
    }
    printf("%lx\n", total);
    return 0;
}
