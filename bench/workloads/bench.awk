# mawk benchmark (bench/run.py): fields, associative arrays, string functions, printf, and
# numeric work per line; prints totals and a checksum of every word count (order-free).
{
    for (i = 2; i <= NF; i++) {
        w = $i
        if (match(w, /[0-9]+$/)) { num += substr(w, RSTART) + 0; w = substr(w, 1, RSTART - 1) }
        count[w]++
        len[length(w)]++
        acc = acc substr(w, 1, 2)
        if (length(acc) > 60) { h = (h + index(acc, "ke")) % 1000003; acc = "" }
    }
    line = $0
    n = gsub(/a/, "A", line)
    vowels += n
    s = sprintf("%s:%05d", toupper(substr($2, 1, 3)), NR % 99991)
    h = (h * 31 + length(s) + n) % 1000003
    if (NR % 1000 == 0) { split($0, parts, " "); total += parts[1] + 0 }
}
END {
    for (w in count) { words++; sum = (sum + count[w] * length(w)) % 1000000007 }
    for (l in len) lens += len[l] * l
    printf "lines %d words %d sum %d lens %d vowels %d num %.0f h %d total %d\n", NR, words, sum, lens, vowels, num, h, total
}
