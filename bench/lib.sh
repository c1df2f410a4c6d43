# bench/lib.sh: what the bench scripts share (sourced).

# A TCP port nothing on this machine listens on.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		ss -Htan | awk '{print $4}' | grep -qE "[:.]$p\$" || { echo "$p"; return; }
	done
}
