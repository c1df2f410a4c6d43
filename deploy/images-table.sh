#!/usr/bin/env bash
# Prints the README's "What's inside" table from a running sandboxd: GET
# /api/v3/sandbox-images, one row per tool, one column per image (its reference and size
# in the header; "–" where the image lacks the tool). The versions are what the images
# recorded when they were built (the label sandboxd.packages), not a list kept anywhere.
#   usage: images-table.sh URL TOKEN      e.g. images-table.sh "$SANDBOXD_URL" "$SANDBOXD_TOKEN"
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
curl -sSf -H "Authorization: Bearer $2" "${1%/}/api/v3/sandbox-images" | jq -r '
    def mb: if . == null then "not built" else "\((. / 1000000) | floor) MB" end;
    . as $imgs
    | ([.[].packages[].name] | reduce .[] as $n ([]; if index([$n]) then . else . + [$n] end)) as $tools
    | "| tool | " + ($imgs | map("`\(.name)`\(if .default then " (default)" else "" end): `\(.image)`, \(.size | mb)") | join(" | ")) + " |",
      "|---|" + ($imgs | map("---|") | join("")),
      ($tools[] as $t | "| \($t) | " + ($imgs | map((.packages[] | select(.name == $t) | .version) // "–") | join(" | ")) + " |")'
