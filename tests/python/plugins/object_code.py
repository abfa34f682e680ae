"""The object code of a compiled plugin, for the tests that check what a kernel compiled to."""
import re
import subprocess


def functions(library):
    """{demangled name: [instruction lines]} of a shared library's text (binutils' objdump)."""
    out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", library],
                         capture_output=True, text=True, check=True).stdout
    funcs, name = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            name = m.group(1)
            funcs[name] = []
        elif name and line.strip():
            funcs[name].append(line)
    return funcs
