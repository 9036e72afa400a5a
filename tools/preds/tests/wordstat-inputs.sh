#!/usr/bin/env bash
# wordstat's input pool: N files DIR/in000.. of 5..25 words of 1..11 letters; a quarter of the
# inputs get one word of 13..20 letters somewhere (the seeded bug). Deterministic (fixed seed).
# Usage: wordstat-inputs.sh N DIR
set -eu
awk -v n="$1" -v dir="$2" 'BEGIN {
    srand(20240501); system("mkdir -p " dir)
    split("abcdefghijklmnopqrstuvwxyzAEIOU0123456789", ch, "")
    for (i = 0; i < n; i++) {
        f = sprintf("%s/in%03d", dir, i); nw = 5 + int(rand() * 21); bad = rand() < 0.25
        at = int(rand() * nw); line = ""
        for (k = 0; k < nw; k++) {
            len = (bad && k == at) ? 13 + int(rand() * 8) : 1 + int(rand() * 11)
            w = ""; for (c = 0; c < len; c++) w = w ch[1 + int(rand() * 26 + (c == 0) * rand() * 15)]
            line = line (k ? " " : "") w
        }
        print line > f; close(f)
    }
}'
