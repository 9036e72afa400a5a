#!/usr/bin/env python3
"""Check a vigil run report (run.txt) against expectations, resolving sites to functions and
source lines through the site tables stored in the binaries (ELF section "vigil_sites"; layout
in common/sitefmt.h). Independent of the `vigil` command on purpose: it cross-checks it.

usage: report_check.py RUN_TXT SOURCE_FILE EXPECTATION...

An expectation is one string "FUNCTION KIND FIELD OP VALUE":
  FUNCTION  a function name, or * for every site
  KIND      entry, backedge, ... (as written in run.txt), or *
  FIELD     execs, bursts, rate, line, count (number of matching site lines)
  OP        ==, !=, <, <=, >, >=, in (VALUE is LOW..HIGH, inclusive)
  VALUE     a number, or @MARKER (the line of "LINE:MARKER" in SOURCE_FILE), optionally +N/-N
Special expectations: "exit == N", "signal == N", "option NAME == VALUE", "complete" (the
report ends with "end").
Every matching site must satisfy the expectation, and at least one site must match (so that
an expectation about a function that has no site fails). Exit status 0 when every
expectation holds, 1 otherwise (each failure is printed), 2 on bad input.
"""
import os
import re
import struct
import sys

HEADER = struct.Struct("<8sIIQIIIIII")
RECORD = struct.Struct("<IIIIII")
KIND_NAMES = {1: "entry", 2: "backedge", 3: "load", 4: "store", 5: "branch", 6: "return", 7: "call", 8: "case"}


def elf_section(path, wanted):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    sections = []
    for i in range(shnum):
        name, stype, flags, addr, offset, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        sections.append((name, stype, offset, size))
    strtab_offset = sections[shstrndx][2]
    for name, stype, offset, size in sections:
        end = data.index(b"\0", strtab_offset + name)
        if data[strtab_offset + name:end].decode() == wanted:
            if stype == 8:  # SHT_NOBITS
                return b""
            return data[offset:offset + size]
    return None


def site_tables(path):
    """tu_hash -> list of (kind, function, file, line, column) from one binary."""
    blob = elf_section(path, "vigil_sites")
    tables = {}
    if blob is None:
        return tables
    pos = 0
    while pos + HEADER.size <= len(blob):
        if blob[pos:pos + 8] == b"\0" * 8:
            pos += 8
            continue
        magic, version, header_size, tu_hash, nsites, record_size, strtab_size, total_size, source, _ = \
            HEADER.unpack_from(blob, pos)
        if magic != b"VGLSITES" or total_size == 0 or total_size % 8:
            raise ValueError(f"{path}: bad site table at offset {pos} of vigil_sites")
        strings = pos + header_size + nsites * record_size

        def string(off):
            end = blob.index(b"\0", strings + off)
            return blob[strings + off:end].decode(errors="replace")

        sites = []
        for i in range(nsites):
            at = pos + header_size + i * record_size
            if record_size == 24:  # versions 1 and 2
                kind, func, file, line, column, aux = RECORD.unpack_from(blob, at)
            else:  # version 3: three packed words (common/sitefmt.h)
                w0, w1, w2 = struct.unpack_from("<3I", blob, at)
                kind, func, file, line, column = w0 >> 28, w0 & 0xFFFFFFF, w1 & 0xFFFFFF, w2 & 0x3FFFFF, w2 >> 22
            sites.append((KIND_NAMES.get(kind, str(kind)), string(func), string(file), line, column))
        tables[tu_hash] = sites
        pos += total_size
    return tables


def unescape(s):
    if s == "%":
        return ""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), s)


def load_report(path):
    report = {"modules": {}, "sites": [], "options": {}, "complete": False}
    with open(path) as f:
        lines = f.read().split("\n")
    if not lines or lines[0] not in ("vigil-run 1", "vigil-run 2", "vigil-run 3"):
        raise ValueError(f"{path}: first line is not 'vigil-run 1', '2' or '3'")
    for line in lines[1:]:
        if not line:
            continue
        fields = line.split(" ")
        key = fields[0]
        if key == "end":
            report["complete"] = True
        elif key == "module":
            report["modules"][int(fields[1])] = (int(fields[2], 16), int(fields[3]), unescape(fields[5]))
        elif key == "site":
            report["sites"].append({"module": int(fields[1]), "index": int(fields[2]), "kind": fields[3],
                                    "execs": int(fields[4]), "bursts": int(fields[5]), "rate": float(fields[6])})
        elif key == "option":
            report["options"][fields[1]] = unescape(fields[2]) if len(fields) > 2 else ""
        elif key == "crash":
            report["crash"] = {"signal": int(fields[1]), "offset": int(fields[3], 16), "path": unescape(fields[4])}
        elif key in ("exit", "signal"):
            report[key] = int(fields[1])
    return report


def resolve(report):
    cache = {}
    for site in report["sites"]:
        tu_hash, nsites, path = report["modules"][site["module"]]
        if path not in cache:
            cache[path] = site_tables(path) if os.path.exists(path) else {}
        table = cache[path].get(tu_hash)
        if table is None or site["index"] >= len(table):
            site.update(function="?", file="?", line=0)
            continue
        kind, function, file, line, column = table[site["index"]]
        site.update(function=function, file=file, line=line, table_kind=kind)


def marker_lines(source):
    marks = {}
    with open(source) as f:
        for number, text in enumerate(f, 1):
            for m in re.finditer(r"LINE:(\w+)", text):
                marks[m.group(1)] = number
    return marks


def value_of(text, marks):
    m = re.fullmatch(r"@(\w+)([+-]\d+)?", text)
    if m:
        return marks[m.group(1)] + int(m.group(2) or 0)
    return float(text)


def compare(actual, op, expected, marks):
    if op == "in":
        low, high = (value_of(x, marks) for x in expected.split(".."))
        return low <= actual <= high
    value = value_of(expected, marks)
    return {"==": actual == value, "!=": actual != value, "<": actual < value, "<=": actual <= value,
            ">": actual > value, ">=": actual >= value}[op]


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    run_txt, source, expectations = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        report = load_report(run_txt)
        resolve(report)
        marks = marker_lines(source)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print(f"report_check: {e}")
        return 2
    failures = 0
    for expectation in expectations:
        words = expectation.split()
        ok, detail = False, ""
        try:
            if words == ["complete"]:
                ok = report["complete"]
                detail = "report has no 'end' line"
            elif words[0] in ("exit", "signal"):
                ok = words[0] in report and compare(report[words[0]], words[1], words[2], marks)
                detail = f"{words[0]} is {report.get(words[0], 'absent')}"
            elif words[0] == "option":
                ok = report["options"].get(words[1]) == words[3]
                detail = f"option {words[1]} is {report['options'].get(words[1])!r}"
            else:
                function, kind, field, op, expected = words
                matching = [s for s in report["sites"]
                            if function in ("*", s["function"]) and kind in ("*", s["kind"])]
                if field == "count":
                    ok = compare(len(matching), op, expected, marks)
                    detail = f"{len(matching)} matching sites"
                elif not matching:
                    detail = "no such site in the report"
                else:
                    bad = [s for s in matching if not compare(s[field], op, expected, marks)]
                    ok = not bad
                    detail = "; ".join(f"{s['function']} {s['kind']} at {os.path.basename(s['file'])}:{s['line']}"
                                       f" has {field}={s[field]}" for s in (bad or matching)[:3])
        except (ValueError, KeyError, IndexError) as e:
            detail = f"malformed expectation ({e})"
        if not ok:
            failures += 1
            print(f"expected '{expectation}': {detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
