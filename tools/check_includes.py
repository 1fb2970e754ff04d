#!/usr/bin/env python3
"""Checks that includes point down the layers (docs/architecture.md, "Layers").

Every folder of the library is a layer with the layers it may use, below. A file may include a
header of its own folder or of a folder its folder may use (directly or through another); anything
else is an upward or sideways include, and fails the check with the file, the line and the rule.
A forwarding header (a moved public header kept for one release: its first line says "Forwarding
header") is exempt, and nothing inside the tree may include one.

  tools/check_includes.py [ROOT]          check the tree (exit 1 on a violation)
  tools/check_includes.py --self-test     plant an upward include in a copy of the graph: must fail
"""
import os
import re
import sys

# folder -> the folders it may use directly (the rest follow transitively).
LAYERS = {
    'base': [],
    'base/encoding': ['base'],
    'url': ['base/encoding'],
    'redis': ['base'],
    'dedup/state': ['base'],
    'dedup/bloom': ['dedup/state'],
    'dedup/redis': ['dedup/bloom'],
    'dedup/redis/module': ['dedup/redis'],  # a shared object Redis loads: a leaf
    'dedup/content': ['base', 'redis'],
    'dedup': ['dedup/bloom', 'dedup/content', 'dedup/redis', 'dedup/state', 'url', 'redis'],
    'frontier': ['url'],
    'crawler/fetch': ['base'],
    'crawler/output': ['frontier'],
    'crawler/metrics': ['crawler/output'],
    'crawler/config': ['crawler/metrics', 'crawler/fetch', 'dedup'],
    'crawler/sitemap': ['url'],
    'crawler/state': ['crawler/metrics', 'crawler/sitemap', 'dedup'],
    'crawler/page': ['crawler/state', 'crawler/fetch', 'crawler/output'],
    'crawler/crawl': ['crawler/page', 'crawler/config'],
    'crawler/cluster': ['crawler/crawl', 'redis'],
    'crawler/deploy': ['crawler/cluster'],
    'crawler/cli': ['crawler/deploy'],
    'python': ['dedup'],
    'examples': ['dedup'],
}
LIBRARY_FOLDERS = [f for f in LAYERS if f not in ('python', 'examples')]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
FORWARDING = 'Forwarding header'


def closure(layers):
    allowed = {}
    def visit(folder, seen):
        for dep in layers[folder]:
            if dep not in seen:
                seen.add(dep)
                visit(dep, seen)
        return seen
    for folder in layers:
        allowed[folder] = visit(folder, {folder})
    return allowed


def scan(root):
    """(path, line number, included path) for every quoted include of the library's files."""
    edges, forwarding = [], set()
    for folder in LAYERS:
        directory = os.path.join(root, folder)
        if not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            path = os.path.join(folder, name)
            if not name.endswith(('.h', '.cc', '.c')) or not os.path.isfile(os.path.join(root, path)):
                continue
            with open(os.path.join(root, path), encoding='utf-8') as f:
                lines = f.read().split('\n')
            if lines and FORWARDING in lines[0]:
                forwarding.add(path)
                continue
            for number, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if m:
                    edges.append((path, number, m.group(1)))
    return edges, forwarding


def check(edges, forwarding, layers):
    allowed = closure(layers)
    problems = []
    for path, number, target in edges:
        folder = os.path.dirname(path)
        target_folder = os.path.dirname(target)
        if target in forwarding:
            problems.append(f'{path}:{number}: includes the forwarding header "{target}": '
                            f'include what it forwards to')
        elif target_folder in layers and target_folder not in allowed[folder]:
            problems.append(f'{path}:{number}: "{target}" is in {target_folder}/, which '
                            f'{folder}/ may not use (it may use: '
                            f'{", ".join(sorted(allowed[folder] - {folder})) or "nothing"})')
    return problems


def main(argv):
    if argv[1:2] == ['--self-test']:
        edges = [('url/url_canonicalizer.cc', 1, 'base/status.h'),
                 ('url/url_canonicalizer.cc', 2, 'dedup/seen_set.h')]
        problems = check(edges, set(), LAYERS)
        ok = len(problems) == 1 and 'dedup/' in problems[0]
        sideways = check([('redis/redis_client.cc', 1, 'url/url_chars.h')], set(), LAYERS)
        ok = ok and len(sideways) == 1 and not check(edges[:1], set(), LAYERS)
        print('self-test:', 'ok' if ok else 'FAILED', *problems, *sideways, sep='\n  ')
        return 0 if ok else 1
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    edges, forwarding = scan(root)
    problems = check(edges, forwarding, LAYERS)
    for problem in problems:
        print(problem)
    print(f'check_includes: {len(edges)} includes in {len(LAYERS)} layers, '
          f'{len(problems)} pointing up or sideways')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
