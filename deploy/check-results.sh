#!/bin/sh
# check-results.sh HEADER...: every public function that returns int (a result code or a
# count) is declared __attribute__((warn_unused_result)), so that no caller drops an
# error. Prints each declaration that is not, and fails when there is one.
# A declaration starts at column 0 with "int " and runs to its ';'. err_set and its kin
# (err.h) are not checked: they return the code they were given, for `return err_set(…)`,
# and a call as a statement loses nothing.
awk '
	function check() {
		if (decl != "" && decl !~ /warn_unused_result/) {
			print FILENAME ":" line ": " substr(decl, 1, 100)
			bad++
		}
		decl = ""
	}
	decl != "" { decl = decl " " $0; if ($0 ~ /;/) check(); next }
	/^int err_[a-z]+\(/ { next }
	/^int [a-z_0-9]+\(/ { decl = $0; line = FNR; if ($0 ~ /;/) check() }
	END {
		if (bad) { print bad " int-returning declarations without warn_unused_result"; exit 1 }
	}
' "$@"
