#!/usr/bin/env bash
# Fails when the layering in docs/architecture.md is broken:
#  - a tool's runtime part (tools/<name>/runtime/) includes anything but include/vigil/tool.h,
#    the tools' public headers, common/ formats (not abi.h), its own headers and system
#    headers (never runtime/ internals); its command part (cmd/) never includes runtime/ or
#    compiler/ code;
#  - the core (compiler/, runtime/, cmd/, common/) names no tool: no include of tools/, no
#    string literal that is a tool's name or one of its options ("leak", "leak.depth"), no
#    file named after a tool;
#  - a tool reaches into no other tool's folder;
#  - the runtime or a tool reads the environment outside runtime/config.c;
#  - common/ (shared formats) depends on the runtime, the compiler or the command.
set -u
cd "$(dirname "$0")/.."
fail=0
report() { echo "FAIL layering: $*"; fail=1; }

tools=$(cd tools && ls -d */ | tr -d /)
common_headers=$(cd common && ls *.h *.inc)
for f in tools/*/runtime/*.c tools/*/runtime/*.h; do
  [ -f "$f" ] || continue
  dir=$(dirname "$f")
  while IFS= read -r inc; do
    name=$(sed -E 's/.*"([^"]+)".*/\1/' <<<"$inc")
    case "$name" in vigil/tool.h) continue ;; esac
    if [ -f "$dir/$name" ]; then continue; fi                    # the tool's own header
    if [[ "$name" =~ ^tools/([a-z0-9_]+)/options\.inc$ ]] && [[ "$f" == tools/"${BASH_REMATCH[1]}"/* ]]; then continue; fi
    if grep -qx "$name" <<<"$common_headers"; then
      case "$name" in abi.h) report "$f includes the compiler-runtime ABI ($name)";; esac
      continue
    fi
    report "$f includes \"$name\" (a tool's runtime part may include vigil/tool.h, common/ formats and its own headers)"
  done < <(grep -E '^\s*#\s*include\s+"' "$f")
  while IFS= read -r inc; do
    name=$(sed -E 's/.*<([^>]+)>.*/\1/' <<<"$inc")
    case "$name" in vigil/*) [ "$name" = vigil/tool.h ] || ls tools/*/include/"$name" >/dev/null 2>&1 \
        || report "$f includes <$name>, not a public vigil header";; esac
  done < <(grep -E '^\s*#\s*include\s+<vigil/' "$f")
done
for f in tools/*/cmd/*.c tools/*/cmd/*.h; do
  [ -f "$f" ] || continue
  if grep -qE '#\s*include\s+"(\.\./)*(runtime|compiler)/|#\s*include\s+"internal\.h"' "$f"; then
    report "$f (a tool's command part) includes runtime or compiler code"
  fi
done
for t in $tools; do
  for f in $(find "tools/$t" -name '*.[ch]' -o -name '*.inc'); do
    if grep -nE '#\s*include\s+"[^"]*tools/' "$f" | grep -vE "tools/$t/" >/dev/null; then
      report "$f includes another tool's file"
    fi
  done
done

# The core names no tool.
code_lines() {  # grep, then drop lines that are comments
  grep -nE "$@" | grep -vE '^[^:]+:[0-9]+:\s*(/?\*|//)'
}
core_files=$(ls compiler/*.[ch] compiler/*.inc runtime/*.[ch] cmd/*.[ch] common/*.[ch] common/*.inc include/vigil/*.h 2>/dev/null)
for t in $tools; do
  for f in $core_files; do
    case "$(basename "$f")" in "$t".c|"$t".h|"$t"_*.c) report "$f: a core file named after the tool $t";; esac
  done
  # String literals that are the tool's name or one of its options; comments and usage
  # examples may mention a tool, code may not depend on one.
  while IFS= read -r hit; do
    report "core code names the tool $t: $hit"
  done < <(code_lines "\"$t(\.[a-z_]+)?\"" $core_files 2>/dev/null)
  while IFS= read -r hit; do
    report "core code includes a tool's file: $hit"
  done < <(grep -nE '#\s*include\s+["<][^">]*tools/' $core_files 2>/dev/null)
done

while IFS= read -r hit; do
  case "$hit" in runtime/config.c:*) ;; *) report "environment read outside runtime/config.c: $hit";; esac
done < <(grep -nE '\b(secure_)?getenv\s*\(' runtime/*.c tools/*/runtime/*.c 2>/dev/null)

for f in common/*.c common/*.h; do
  if grep -qE '#\s*include\s+"(\.\./)?(runtime|compiler|cmd|tools)/' "$f"; then
    report "$f (a shared format) includes runtime, compiler, command or tool code"
  fi
done

if [ $fail = 0 ]; then echo "PASS layering"; fi
exit $fail
