#!/usr/bin/python3
"""check-openapi.py: the route table and docs/openapi.yaml name the same operations.

Reads every route of app/api/routes.c (method, path, audit action) and every operation of
the OpenAPI document (method, path, operationId), and fails naming each route the document
lacks and each operation that is no route. A route and its operation must also agree on
the operationId (the route's audit action), so that a renamed action is drift too.

Paths compare after one spelling: the table's {name+} (spans '/') and its trailing "/…"
(the raw files' rest of the path, matched by a function) are the document's {name} and
/{path}. Prose only, by issue 33's precisions: git's smart HTTP and LFS (the "*" route
that hands everything under /{owner}/{repo}.git/ to the git handler) and nginx's internal
preview check. The macros the paths use (REPO, SB, API_*) are read from routes.c and the
headers under include/, so a new one needs nothing here.

Usage: check-openapi.py [--routes FILE] [--document FILE] [--include DIR]
Debian's python3 and python3-yaml (deploy/install-deps.sh). Exit 0 when they agree.
"""
import argparse
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Routes described in prose, not as operations (the document's info.description says so).
PROSE_ONLY = {
    "git.request": "git's smart HTTP and Git LFS, under /{owner}/{repo}.git/",
    "preview.check": "nginx's internal auth_request location for previews",
}

METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")

DEFINE = re.compile(r'^\s*#\s*define\s+([A-Z_][A-Z0-9_]*)\s+(.+?)\s*$', re.M)
# One entry of the table: { "METHOD", <path: literals and macros>, handler, "action", ...
ENTRY = re.compile(r'\{\s*"([A-Z*]+)"\s*,\s*((?:"[^"]*"|[A-Z_][A-Z0-9_]*)'
                   r'(?:\s+(?:"[^"]*"|[A-Z_][A-Z0-9_]*))*)\s*,\s*\w+\s*,\s*"([^"]+)"')
PIECE = re.compile(r'"([^"]*)"|([A-Z_][A-Z0-9_]*)')


def macros(routes_text, include_dir):
    """Every #define of routes.c and the headers, as raw expressions."""
    found = {}
    for root, _, files in os.walk(include_dir):
        for f in sorted(files):
            if f.endswith(".h"):
                with open(os.path.join(root, f), encoding="utf-8") as h:
                    found.update(DEFINE.findall(h.read()))
    found.update(DEFINE.findall(routes_text))
    return found


def expand(expr, defs, depth=0):
    if depth > 8:
        raise ValueError("macro loop in " + expr)
    out = ""
    for lit, name in PIECE.findall(expr):
        if name:
            if name not in defs:
                raise ValueError("unknown macro %s in a route's path" % name)
            out += expand(defs[name], defs, depth + 1)
        else:
            out += lit
    return out


def normal(path):
    path = re.sub(r"\{([A-Za-z0-9_]+)\+\}", r"{\1}", path)
    if path.endswith("/…"):
        path = path[: -len("/…")] + "/{path}"
    return path


def table(routes_file, include_dir):
    with open(routes_file, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    start = text.find("api_routes[]")
    if start < 0:
        raise ValueError("%s has no api_routes[] table" % routes_file)
    defs = macros(text, include_dir)
    routes = {}
    for method, expr, action in ENTRY.findall(text[start:]):
        if action in PROSE_ONLY:
            continue
        routes[(method, normal(expand(expr, defs)))] = action
    if not routes:
        raise ValueError("no route found in %s" % routes_file)
    return routes


def document(doc_file):
    with open(doc_file, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    ops = {}
    for path, item in (doc.get("paths") or {}).items():
        for method in METHODS:
            if method in (item or {}):
                ops[(method.upper(), path)] = item[method].get("operationId")
    return ops


def short(path):
    """A path as the messages name it: relative to here when it is below here."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--routes", default=os.path.join(ROOT, "app/api/routes.c"))
    ap.add_argument("--document", default=os.path.join(ROOT, "docs/openapi.yaml"))
    ap.add_argument("--include", default=os.path.join(ROOT, "include"))
    a = ap.parse_args()
    a.routes, a.document = short(a.routes), short(a.document)
    try:
        routes = table(a.routes, a.include)
        ops = document(a.document)
    except (OSError, ValueError, yaml.YAMLError) as e:
        print("check-openapi: %s" % e, file=sys.stderr)
        return 2
    bad = 0
    for key in sorted(set(routes) - set(ops)):
        print("check-openapi: route %s %s (%s) is missing from %s"
              % (key[0], key[1], routes[key], a.document))
        bad += 1
    for key in sorted(set(ops) - set(routes)):
        print("check-openapi: %s documents %s %s (%s), which is no route of %s"
              % (a.document, key[0], key[1], ops[key], a.routes))
        bad += 1
    for key in sorted(set(ops) & set(routes)):
        if ops[key] != routes[key]:
            print("check-openapi: %s %s: operationId %s, but the route's action is %s"
                  % (key[0], key[1], ops[key], routes[key]))
            bad += 1
    if bad:
        print("check-openapi: %d differences between the route table and the document" % bad)
        return 1
    print("check-openapi: %d routes, %d operations: the same" % (len(routes), len(ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
