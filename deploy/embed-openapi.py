#!/usr/bin/python3
"""embed-openapi.py: docs/openapi.yaml as the JSON GET /api/v3/openapi.json answers, in C.

The build converts the document once (Debian's python3-yaml), so the service parses no YAML
and depends on no path: openapi_json (the bytes, compact, UTF-8), openapi_json_len and
openapi_etag (a strong ETag, the first 32 hex digits of the JSON's SHA-256, quoted).
  usage: embed-openapi.py docs/openapi.yaml > openapi_doc.c
"""
import datetime
import hashlib
import json
import sys

import yaml


def plain(o):
    # YAML reads an unquoted 2026-01-01 as a date; JSON has none: the text it was.
    if isinstance(o, (datetime.date, datetime.datetime)):
        return o.isoformat()
    raise TypeError("%r has no JSON form" % (o,))


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict) or doc.get("openapi") != "3.1.0":
        sys.exit("embed-openapi: %s is not an OpenAPI 3.1.0 document" % sys.argv[1])
    data = json.dumps(doc, ensure_ascii=False, separators=(",", ":"), default=plain).encode()
    etag = hashlib.sha256(data).hexdigest()[:32]
    out = ['/* Made by deploy/embed-openapi.py from %s: do not edit. */' % sys.argv[1],
           '#include "sandboxd/api/openapi.h"',
           'const unsigned char openapi_json[] = {']
    for i in range(0, len(data), 16):
        out.append("".join("0x%02x," % b for b in data[i:i + 16]))
    out.append("};")
    out.append("const size_t openapi_json_len = %d;" % len(data))
    out.append('const char openapi_etag[] = "\\"%s\\"";' % etag)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
