#!/usr/bin/env bash
# fields.c's input pool: N files DIR/in000.. of 3..8 comma-separated records (letters, escapes,
# tabs, quoted fields); about one input in four gets a tab inside a quoted field (the seeded
# bug). Deterministic (fixed seed). Usage: fields-inputs.sh N DIR
set -eu
awk -v n="$1" -v dir="$2" 'BEGIN {
    srand(35035); system("rm -rf " dir "; mkdir -p " dir)
    split("a b c d e f g h 1 2 3 x y z", letters, " ")
    for (i = 0; i < n; i++) {
        f = sprintf("%s/in%03d", dir, i); nrec = 3 + int(rand() * 6); bad = rand() < 0.25; at = int(rand() * nrec)
        for (r = 0; r < nrec; r++) {
            nf = 1 + int(rand() * 6); line = ""
            for (k = 0; k < nf; k++) {
                fld = ""; nl = 1 + int(rand() * 8)
                for (j = 0; j < nl; j++) {
                    x = rand()
                    if (x < 0.08) fld = fld "\\\\" letters[1 + int(rand() * 14)]
                    else if (x < 0.14) fld = fld "\t"
                    else fld = fld letters[1 + int(rand() * 14)]
                }
                q = rand() < 0.3
                if (q) { gsub(/\t/, "", fld); if (bad && r == at && k == 0) fld = fld "\t" ; if (rand() < 0.5) fld = fld ","; fld = "\"" fld "\"" }
                line = line (k ? "," : "") fld
            }
            if (bad && r == at && line !~ /"[^"]*\t/) line = "\"x\ty\"," line
            print line > f
        }
        close(f)
    }
}'
