# Shell helpers of the bench/*.sh scripts (source it): the median, ratio and geometric mean of
# the figures they print.

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# ratio A B: A / B with three decimals; nan when B is not positive or A is not a number.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0 && a == a + 0) printf "%.3f", a / b; else print "nan" }'; }
# geomean "X Y ...": the geometric mean of the positive numbers among its words, with three
# decimals; nan when there are none.
geomean() { echo "$1" | awk '{ s = 0; n = 0; for (i = 1; i <= NF; i++) if ($i > 0) { s += log($i); n++ } if (n) printf "%.3f", exp(s / n); else print "nan" }'; }
