#!/usr/bin/python3
"""Writes a deterministic bare git repository for the gitweb crawl of bench/dust.sh.

    gen_git_repo.py REPO_DIR [--commits N] [--files F] [--seed S]

A project's history, made with `git fast-import` (so 300 commits take a second, not a minute of
`git commit`): F text files under src/, docs/, tests/ and tools/ (nested one level more every
fourth file), N commits on master, each changing one to three files (a few lines rewritten,
appended or removed) or adding a file; a branch `stable` forked at 2/3 of the history with its
own fixes, a branch `feature/parser` forked at 3/4, and a tag every 25 commits (v0.1, v0.2 ...),
the names gitweb links (a=shortlog;h=refs/heads/stable, a=tag ...). Authors, dates and texts
come from the seed, so two runs give the same commit ids. Prints the commit and file counts.
"""

import argparse
import os
import random
import subprocess

WORDS = ("crawl frontier politeness queue robots canonical fragment anchor header parser token "
         "index archive section request response latency budget filter bloom hash digest host "
         "origin scheme path query table figure record column storage journal static dynamic "
         "network socket buffer stream thread worker signal resume snapshot").split()
AUTHORS = [("Ada Lovelace", "ada@example.org"), ("Alan Turing", "alan@example.org"),
           ("Grace Hopper", "grace@example.org"), ("Edsger Dijkstra", "edsger@example.org"),
           ("Barbara Liskov", "barbara@example.org")]
DIRS = ["src", "docs", "tests", "tools"]
START = 1_600_000_000  # the first commit's time (2020-09-13), one commit every ~7 hours after


def line(rng):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(4, 12)))


def file_name(i):
    directory = DIRS[i % len(DIRS)]
    if i % 4 == 3:
        directory += f"/part{i % 3}"
    return f"{directory}/file{i}.txt"


class Stream:
    """A git fast-import stream, written to the process's stdin."""

    def __init__(self, out):
        self.out = out
        self.mark = 0

    def data(self, text):
        raw = text.encode()
        self.out.write(b"data %d\n" % len(raw) + raw + b"\n")

    def commit(self, ref, when, author, message, changes, parent=None):
        """changes: {path: text or None (deleted)}. Returns the commit's mark."""
        self.mark += 1
        name, email = author
        self.out.write(f"commit {ref}\nmark :{self.mark}\n".encode())
        self.out.write(f"author {name} <{email}> {when} +0000\n".encode())
        self.out.write(f"committer {name} <{email}> {when} +0000\n".encode())
        self.data(message)
        if parent is not None:
            self.out.write(f"from :{parent}\n".encode())
        for path, text in sorted(changes.items()):
            if text is None:
                self.out.write(f"D {path}\n".encode())
            else:
                self.out.write(f"M 100644 inline {path}\n".encode())
                self.data(text)
        return self.mark

    def tag(self, name, mark, when, author):
        self.out.write(f"tag {name}\nfrom :{mark}\n".encode())
        self.out.write(f"tagger {author[0]} <{author[1]}> {when} +0000\n".encode())
        self.data(f"Release {name}\n")


def edit(rng, text):
    """The file's text with a few lines rewritten, appended or removed."""
    lines = text.splitlines()
    for _ in range(rng.randrange(1, 4)):
        r = rng.random()
        if r < 0.5 and lines:
            lines[rng.randrange(len(lines))] = line(rng)
        elif r < 0.85 or len(lines) < 5:
            lines.insert(rng.randrange(len(lines) + 1), line(rng))
        else:
            del lines[rng.randrange(len(lines))]
    return "\n".join(lines) + "\n"


def history(stream, rng, files, ref, count, first_time, parent, label):
    """count commits on ref after parent (a mark); returns (mark, time, files) per commit."""
    marks = []
    when = first_time
    for n in range(count):
        when += rng.randrange(3600, 40000)
        changes = {}
        if rng.random() < 0.08 or not files:
            path = file_name(len(files) + 1000 * (label != "master") + n)
            files[path] = "\n".join(line(rng) for _ in range(rng.randrange(5, 30))) + "\n"
            changes[path] = files[path]
            verb = "Add"
        else:
            for path in rng.sample(sorted(files), min(len(files), rng.randrange(1, 4))):
                files[path] = edit(rng, files[path])
                changes[path] = files[path]
            verb = rng.choice(["Fix", "Update", "Rework", "Document", "Simplify", "Speed up"])
        subject = f"{verb} {rng.choice(WORDS)} {rng.choice(WORDS)} in {sorted(changes)[0]}"
        body = "\n".join(line(rng) for _ in range(rng.randrange(0, 4)))
        message = subject + ("\n\n" + body if body else "") + "\n"
        parent = stream.commit(ref, when, rng.choice(AUTHORS), message, changes, parent)
        marks.append((parent, when, dict(files)))
    return marks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo_dir")
    ap.add_argument("--commits", type=int, default=300)
    ap.add_argument("--files", type=int, default=120)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=args.repo_dir)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "master", args.repo_dir], check=True,
                   env=env)
    git = subprocess.Popen(["git", "-C", args.repo_dir, "fast-import", "--quiet"],
                           stdin=subprocess.PIPE, env=env)
    stream = Stream(git.stdin)

    files = {file_name(i): "\n".join(line(rng) for _ in range(rng.randrange(5, 40))) + "\n"
             for i in range(args.files)}
    root = stream.commit("refs/heads/master", START, AUTHORS[0], "Initial import\n", dict(files))
    master = history(stream, rng, files, "refs/heads/master", args.commits - 1, START, root,
                     "master")
    for k in range(25, len(master), 25):
        mark, when, _ = master[k - 1]
        stream.tag(f"v0.{k // 25}", mark, when, AUTHORS[k % len(AUTHORS)])
    for name, share, count in (("stable", 2 / 3, 30), ("feature/parser", 3 / 4, 20)):
        fork, when, fork_files = master[int(len(master) * share)]
        history(stream, rng, fork_files, f"refs/heads/{name}", count, when, fork, name)
    git.stdin.close()
    if git.wait() != 0:
        raise SystemExit("git fast-import failed")
    # gitweb's project list shows these.
    with open(os.path.join(args.repo_dir, "description"), "w") as f:
        f.write("A generated project history for the DUST benchmark\n")
    with open(os.path.join(args.repo_dir, "config"), "a") as f:
        f.write("[gitweb]\n\towner = Ada Lovelace\n")
    print(f"{args.commits} commits on master, 50 on branches, {len(files)} files on master")


if __name__ == "__main__":
    main()
