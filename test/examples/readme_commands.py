"""Runs the tool commands of a Markdown file's ```sh blocks as written.

readme_commands.py MARKDOWN SOURCE_ROOT TOOLS_DIR WORKDIR

Every line of a sh block that starts with build/bin/ is run from WORKDIR,
where examples/ is the source tree's (a fresh clone's layout), with
build/bin/ standing for TOOLS_DIR. A command that exits non-zero, or a
file the command names under examples/ that does not exist, is reported;
the exit status is the number of failures.
"""
import os
import re
import shlex
import subprocess
import sys

markdown, source_root, tools_dir, workdir = sys.argv[1:5]
tools_dir = os.path.abspath(tools_dir)
os.makedirs(workdir, exist_ok=True)
link = os.path.join(workdir, "examples")
if not os.path.lexists(link):
    os.symlink(os.path.join(source_root, "examples"), link)

commands = []
in_sh = False
with open(markdown) as f:
    for line in f:
        stripped = line.strip()
        if stripped.startswith("```"):
            in_sh = stripped == "```sh" and not in_sh
            continue
        if in_sh and stripped.startswith("build/bin/"):
            commands.append(stripped)

failures = 0
for command in commands:
    argv = shlex.split(command, comments=True)
    argv[0] = os.path.join(tools_dir, argv[0][len("build/bin/"):])
    for word in argv[1:]:
        for path in re.findall(r"examples/[^\s=,]+", word):
            if not os.path.exists(os.path.join(workdir, path)):
                print("%s: names %s, which does not exist" % (command, path))
                failures += 1
    done = subprocess.run(argv, cwd=workdir, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print("%s: exit status %d\n%s" % (command, done.returncode,
                                          done.stderr.strip()))
        failures += 1
    else:
        print("ran: " + command)
print("%d commands, %d failures" % (len(commands), failures))
sys.exit(min(failures, 1))
