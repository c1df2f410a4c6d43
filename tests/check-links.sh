#!/usr/bin/env bash
# tests/check-links.sh: every relative link of the docs resolves. Reads README.md,
# CONTRIBUTING.md and docs/**/*.md; for each link [text](path) or [text](path#anchor) outside
# code (fenced blocks and `code spans`), the path must name a file or folder of the tree
# (relative to the page; /path from the tree's root), and an anchor into a .md file (or into the page itself: (#anchor))
# must name one of its headings as GitHub makes their anchors: lower case, punctuation
# dropped, each space a hyphen, a repeated heading's anchor suffixed -1, -2, ...
# Absolute URLs (scheme:) are not checked. Prints the broken links and exits 1, else prints
# "links: N checked, all resolve".
#
#   bash tests/check-links.sh [FILE.md ...]     # default: the pages above
set -euo pipefail
export LC_ALL=C.UTF-8
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$ROOT"

if (($# > 0)); then
	PAGES=("$@")
else
	PAGES=(README.md CONTRIBUTING.md)
	if [[ -d docs ]]; then
		while IFS= read -r -d '' f; do PAGES+=("$f"); done < <(find docs -name '*.md' -type f -print0 | sort -z)
	fi
fi

# links FILE: "LINE<TAB>TARGET" for each link outside code, one a line.
links() {
	awk '
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence { next }
		{
			line = $0
			gsub(/`[^`]*`/, "", line)          # code spans
			while (match(line, /\]\([^)[:space:]]+([ \t]+"[^"]*")?\)/)) {
				t = substr(line, RSTART + 2, RLENGTH - 3)
				sub(/[ \t].*$/, "", t)         # a title after the target
				print NR "\t" t
				line = substr(line, RSTART + RLENGTH)
			}
		}' "$1"
}

# anchors FILE: the anchors GitHub gives the headings of FILE, one a line.
anchors() {
	awk '
		/^[ \t]*(```|~~~)/ { fence = !fence; next }
		fence { next }
		/^##?#?#?#?#?[ \t]/ {
			h = $0
			sub(/^#+[ \t]+/, "", h)
			sub(/[ \t]+#+[ \t]*$/, "", h)    # closing hashes
			sub(/[ \t]+$/, "", h)
			print h
		}' "$1" |
		sed -E 's/\[([^]]*)\]\([^)]*\)/\1/g' |
		tr '[:upper:]' '[:lower:]' |
		sed -E 's/[^[:alnum:] _-]//g; s/ /-/g' |
		awk '{ n = seen[$0]++; print (n ? $0 "-" n : $0) }'
}

declare -A ANCHORS=()
has_anchor() { # FILE ANCHOR
	if [[ -z ${ANCHORS[$1]+set} ]]; then
		ANCHORS[$1]=$'\n'"$(anchors "$1")"$'\n'
	fi
	[[ ${ANCHORS[$1]} == *$'\n'"$2"$'\n'* ]]
}

CHECKED=0
BROKEN=()
for page in "${PAGES[@]}"; do
	if [[ ! -f $page ]]; then
		BROKEN+=("$page: no such page")
		continue
	fi
	dir=$(dirname "$page")
	while IFS=$'\t' read -r line target; do
		[[ $target =~ ^[a-zA-Z][a-zA-Z0-9+.-]*: ]] && continue # http:, https:, mailto:, ...
		CHECKED=$((CHECKED + 1))
		path=${target%%#*}
		anchor=''
		[[ $target == *'#'* ]] && anchor=${target#*#}
		if [[ -z $path ]]; then
			file=$page
		elif [[ $path == /* ]]; then
			file=.$path # GitHub reads /path from the repository's root
		else
			file=$dir/$path
		fi
		if [[ ! -e $file ]]; then
			BROKEN+=("$page:$line: $target: no such file ($file)")
			continue
		fi
		if [[ -n $anchor && $file == *.md && -f $file ]]; then
			# GitHub matches the anchor of a link as it is written, percent escapes decoded
			anchor=$(printf '%b' "${anchor//%/\\x}")
			has_anchor "$file" "${anchor,,}" ||
				BROKEN+=("$page:$line: $target: no heading with the anchor #$anchor in $file")
		fi
	done < <(links "$page")
done

if ((${#BROKEN[@]} > 0)); then
	printf '%s\n' "${BROKEN[@]}"
	echo "links: $CHECKED checked, ${#BROKEN[@]} broken"
	exit 1
fi
echo "links: $CHECKED checked, all resolve"
