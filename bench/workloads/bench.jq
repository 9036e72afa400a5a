# jq benchmark (bench/run.py): parse a large array of records, filter, reshape, group and
# aggregate; prints one compact line per group.
[ .[]
  | select(.active or .score > 50)
  | { key: (.name | split("-") | .[0]),
        tags: (.tags | length),
        dist: ((.pos.x * .pos.x + .pos.y * .pos.y) | sqrt | floor),
        words: (.note | ascii_upcase | split(" ") | map(length) | add),
        score } ]
| group_by(.key)
| map({ key: .[0].key,
        n: length,
        score: (map(.score) | add | . * 1000 | floor),
        dist: (map(.dist) | max),
        tags: (map(.tags) | add),
        words: (map(.words) | add) })
| .[]
