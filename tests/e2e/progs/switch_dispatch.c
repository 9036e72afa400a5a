// switch statements (dense, sparse, fall-through) and a computed-goto interpreter.
#include <stdio.h>

static int classify(int c) {
    switch (c) {
    case 0: return 10;
    case 1: case 2: return 20;
    case 3: c += 5; /* fall through */
    case 4: return 30 + c;
    case 100: return 7;
    case 1000: return 8;
    case -5: return 9;
    default: return c % 13;
    }
}

enum op { OP_PUSH, OP_ADD, OP_MUL, OP_DUP, OP_JNZ, OP_DEC, OP_SWAP, OP_PRINT, OP_HALT };

static long run_program(const int *code) {
    static void *const table[] = { &&push, &&add, &&mul, &&dup, &&jnz, &&dec, &&swap, &&print, &&halt };
    long stack[64];
    int sp = 0, pc = 0;
    long printed = 0;
#define NEXT goto *table[code[pc++]]
    NEXT;
push: stack[sp++] = code[pc++]; NEXT;
add: sp--; stack[sp - 1] += stack[sp]; NEXT;
mul: sp--; stack[sp - 1] *= stack[sp]; NEXT;
dup: stack[sp] = stack[sp - 1]; sp++; NEXT;
jnz: { int target = code[pc++]; if (stack[--sp] != 0) pc = target; } NEXT;
dec: stack[sp - 1]--; NEXT;
swap: { long t = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = t; } NEXT;
print: printed += stack[sp - 1]; printf("vm: %ld\n", stack[sp - 1]); NEXT;
halt:
#undef NEXT
    return printed;
}

int main(void) {
    long sum = 0;
    for (int i = -10; i < 1200; i++) sum += classify(i) * (i % 5 + 1);
    printf("classify sum=%ld\n", sum);
    /* acc=1, n=10; loop: acc *= n; n--; while n. Stack: [acc, n]. */
    const int prog[] = {
        OP_PUSH, 1, OP_PUSH, 10,
        /* 4: */ OP_DUP, OP_JNZ, 9, OP_PRINT, OP_HALT,
        /* 9: */ OP_SWAP, OP_PRINT, OP_SWAP, OP_DUP, OP_PUSH, 0, OP_ADD, OP_SWAP, OP_DEC, OP_SWAP,
        OP_PUSH, 0, OP_ADD, OP_SWAP, OP_DUP, OP_JNZ, 4, OP_PRINT, OP_HALT };
    printf("vm total=%ld\n", run_program(prog));
    return 0;
}
