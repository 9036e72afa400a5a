#!/usr/bin/env bash
# Fails when the layering in docs/architecture.md is broken:
#  - a tool (tools/) includes anything but include/vigil/tool.h, common/ formats, its own
#    headers and system headers (never runtime/ internals);
#  - the runtime or a tool reads the environment outside runtime/config.c;
#  - common/ (shared formats) depends on the runtime, the compiler or the command.
set -u
cd "$(dirname "$0")/.."
fail=0
report() { echo "FAIL layering: $*"; fail=1; }

common_headers=$(cd common && ls *.h)
for f in tools/*.c tools/*/*.c tools/*/*.h; do
  [ -f "$f" ] || continue
  dir=$(dirname "$f")
  while IFS= read -r inc; do
    name=$(sed -E 's/.*"([^"]+)".*/\1/' <<<"$inc")
    if [ "$name" = "vigil/tool.h" ]; then continue; fi
    if [ -f "$dir/$name" ]; then continue; fi                    # the tool's own header
    if grep -qx "$name" <<<"$common_headers"; then
      case "$name" in abi.h) report "$f includes the compiler-runtime ABI ($name)";; esac
      continue
    fi
    report "$f includes \"$name\" (tools may include vigil/tool.h, common/ formats and their own headers)"
  done < <(grep -E '^\s*#\s*include\s+"' "$f")
done

while IFS= read -r hit; do
  case "$hit" in runtime/config.c:*) ;; *) report "environment read outside runtime/config.c: $hit";; esac
done < <(grep -nE '\b(secure_)?getenv\s*\(' runtime/*.c tools/*.c tools/*/*.c 2>/dev/null)

for f in common/*.c common/*.h; do
  if grep -qE '#\s*include\s+"(\.\./)?(runtime|compiler|cmd|tools)/' "$f"; then
    report "$f (a shared format) includes runtime, compiler, command or tool code"
  fi
done

if [ $fail = 0 ]; then echo "PASS layering"; fi
exit $fail
