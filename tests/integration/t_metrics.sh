#!/usr/bin/env bash
# t_metrics.sh: GET /metrics scraped by a real Prometheus (Debian's package, our own
# instance on a free loopback port, 1 s scrapes, bearer auth with the admin token) during a
# short mixed load with known counts: the counters it answers through /api/v1/query moved by
# exactly what this test did, histograms by the expected _count, gauges (workers, sandboxes)
# as the stack is; `promtool check metrics` is clean on a scrape; who may read it (401, 403
# with SPEC's texts, 200 beside them; an allowed address without a token); and neither every
# worker SIGKILLed nor a SIGHUP loses any count. Prometheus and its folder go at exit, also
# on failure.
. "$(dirname "$0")/lib.sh"

: "${SANDBOXD_PID_FILE:?local.env has no SANDBOXD_PID_FILE}"
for c in prometheus promtool; do
	command -v "$c" >/dev/null || { fail "$c is installed" "deploy/install-deps.sh installs prometheus"; finish; }
done
HOSTPORT=${SANDBOXD_URL#http://}
HOSTPORT=${HOSTPORT%%/*}

# --- who may read it ---------------------------------------------------------------------
mk_user "met$SFX" || exit 1
UT=$LAST_TOKEN
api GET /metrics "" -
expect_error 401 'authentication required' 'no token, no allowed address: 401 authentication required'
expect_header WWW-Authenticate 'Bearer realm="sandboxd"' '401 carries the Bearer challenge'
api GET /metrics "" "$UT"
expect_error 403 'this needs a site admin' "a user's token: 403 this needs a site admin"
api GET /metrics "" "raw:Bearer dfy_nonsense"
expect_status 401 'a token that is not one: 401'
api POST /api/v3/user/repos '{"name":"jobs"}' "$UT"
expect_status 201 'a repository for a job token'
api POST "/api/v3/repos/met$SFX/jobs/job-tokens" '{"scope":"read"}' "$UT"
expect_status 201 'a job token'
JT=$(_json .token)
api GET /metrics "" "$JT"
expect_error 403 'job tokens can only be used on their repository' 'a job token: 403 with its text'
mk_account "madm$SFX" --site-admin || exit 1
AT=$(mk_token "madm$SFX" read) || exit 1
api GET /metrics "" "$AT"
expect_status 200 "another site admin's read-scoped token: 200 (a read needs no write scope)"
api GET /metrics
expect_status 200 "the admin's token: 200"
expect_header 'Content-Type' 'text/plain; version=0.0.4; charset=utf-8' 'Content-Type of the text format 0.0.4'
# The scrape is read from the file api wrote: once a stack has served many suites it is
# larger than one argument may be (128 KiB), so it cannot go through bash -c's argv.
every_series() {
	local s
	for s in sandboxd_http_requests_total sandboxd_http_request_duration_seconds_bucket \
		sandboxd_sandbox_create_duration_seconds_count sandboxd_exec_duration_seconds_count \
		sandboxd_docker_request_duration_seconds_count sandboxd_workers sandboxd_git_bytes_total \
		sandboxd_reaper_passes_total sandboxd_build_info; do
		grep -q "^${s}[{ ]" "$_T/body" || { echo "missing $s"; return 1; }
	done
}
# (paired with the routes' series above: the check reads a scrape that has them)
no_raw_labels() { ! grep -E "route=\"[^\"]*(met$SFX|sb_[0-9a-z]{6})" "$_T/body"; }
check 'the scrape names every series of SPEC §8 we keep' every_series
check 'no label carries a raw path or an id (only route patterns)' no_raw_labels

# --- our own Prometheus ------------------------------------------------------------------
PROM=$_T/prom
mkdir -p "$PROM/tsdb"
printf '%s' "$SANDBOXD_TOKEN" >"$PROM/token"
chmod 600 "$PROM/token"
PPORT=$(free_port)
cat >"$PROM/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sandboxd
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: $PROM/token
    static_configs:
      - targets: ['$HOSTPORT']
YML
check 'promtool check config' promtool check config "$PROM/prometheus.yml"
prometheus --config.file="$PROM/prometheus.yml" --web.listen-address="127.0.0.1:$PPORT" \
	--storage.tsdb.path="$PROM/tsdb" --storage.tsdb.retention.time=1h \
	>"$PROM/prometheus.log" 2>&1 </dev/null &
PROM_PID=$!
AT_EXIT+=("kill $PROM_PID 2>/dev/null; wait $PROM_PID 2>/dev/null")
PURL=http://127.0.0.1:$PPORT

q() { # EXPR: the value of a scalar-ish instant query ("" when none)
	curl -s -m 5 "$PURL/api/v1/query" --data-urlencode "query=$1" |
		jq -r 'if .status == "success" and (.data.result | length) > 0
			then .data.result[0].value[1] else "" end' 2>/dev/null
}
qn() { local v; v=$(q "sum($1) or vector(0)"); printf '%s' "${v:-0}"; } # a sum, absent as 0
up() { [[ $(q 'up{job="sandboxd"}') == 1 ]]; }
# scraped_after T: Prometheus holds a scrape that began after T (epoch seconds), so every
# request answered before T is in what it reads.
scraped_after() { awk -v s="$(q 'timestamp(up{job="sandboxd"})')" -v t="$1" 'BEGIN { exit !(s != "" && s > t) }'; }
fresh() { # wait for a scrape that began after now
	local t
	t=$(date +%s.%N)
	wait_until 20 scraped_after "$t"
}
if ! check 'our Prometheus scrapes /metrics with the bearer token (up == 1)' wait_until 30 up; then
	tail -n 20 "$PROM/prometheus.log" | sed 's/^/#   /'
	finish
fi

# The series the checks read, by a short name.
declare -A Q=(
	[U200]='sandboxd_http_requests_total{route="/api/v3/user",method="GET",status="200"}'
	[N404]='sandboxd_http_requests_total{route="unmatched",method="GET",status="404"}'
	[M403]='sandboxd_http_requests_total{route="/metrics",status="403"}'
	[M401]='sandboxd_http_requests_total{route="/metrics",status="401"}'
	[UCNT]='sandboxd_http_request_duration_seconds_count{route="/api/v3/user"}'
	[CREATE]='sandboxd_http_requests_total{route="/api/v3/repos/{owner}/{repo}/diffinery/sandboxes",method="POST",status="201"}'
	[EXEC]='sandboxd_http_requests_total{route="/api/v3/repos/{owner}/{repo}/diffinery/sandboxes/{id}/exec",method="POST",status="200"}'
	[CCNT]='sandboxd_sandbox_create_duration_seconds_count'
	[XCNT]='sandboxd_exec_duration_seconds_count'
	[DCREATE]='sandboxd_docker_request_duration_seconds_count{op="create"}'
	[GIN]='sandboxd_git_bytes_total{direction="in"}'
	[GOUT]='sandboxd_git_bytes_total{direction="out"}'
)
declare -A B A
# shellcheck disable=SC2034  # into is the caller's array, by name
read_all() { # into the array named $1
	local -n into=$1
	local s
	for s in "${!Q[@]}"; do into[$s]=$(qn "${Q[$s]}"); done
}
delta() { awk -v a="${A[$1]}" -v b="${B[$1]}" 'BEGIN { printf "%d", a - b }'; }

# The warm pool (SANDBOXD_POOL_SIZE) full before and after the load: a create that takes a
# warm container makes none, and the refill makes exactly the one it took; a cold create
# makes its own and no refill follows. Either way: one Docker create in the window.
POOL=${SANDBOXD_POOL_SIZE:-2}
check 'the warm pool is full before the load' wait_until 60 warm_ready_at_least "$POOL"
check 'a scrape after the access checks' fresh
read_all B

# --- the load: known counts ------------------------------------------------------------
N=25 M=7
for ((i = 0; i < N; i++)); do
	if ((i % 2)); then api GET /api/v3/user "" "$UT"; else api GET /api/v3/user; fi
	[[ $STATUS == 200 ]] || fail "GET /api/v3/user $i: 200" "got $STATUS"
done
for ((i = 0; i < M; i++)); do
	api GET "/api/v3/nope-$SFX-$i" "" "$UT"
	[[ $STATUS == 404 ]] || fail "GET /api/v3/nope-…-$i: 404" "got $STATUS"
done
api GET /metrics "" "$UT"
expect_status 403 'one more 403 on /metrics, counted'
api GET /metrics "" -
expect_status 401 'one more 401 on /metrics, counted'
mk_repo "metr$SFX" r  # a repository and a push: git bytes in
git clone -q "http://t:$OT@$HOSTPORT/$R.git" "$_T/clone" && ok 'a clone: git bytes out' || fail 'a clone' "git clone failed"
api POST "$SB" '{}' "$OT"
expect_status 201 'one sandbox created'
ID=$(_json .id)
api POST "$SB/$ID/exec" '{"cmd":"echo hi"}' "$OT"
expect_json .stdout hi 'one exec'
api POST "$SB/$ID/close" "" "$OT"
expect_status 204 'the sandbox closed'
check 'the warm pool is full again (its refill done)' wait_until 60 warm_ready_at_least "$POOL"

check 'a scrape after the load' fresh
read_all A
check_eq "GET /api/v3/user 200: exactly $N more" "$N" "$(delta U200)"
check_eq "unmatched GET 404: exactly $M more" "$M" "$(delta N404)"
check_eq '/metrics 403: exactly 1 more' 1 "$(delta M403)"
check_eq '/metrics 401: exactly 1 more' 1 "$(delta M401)"
check_eq "the /api/v3/user duration histogram: _count $N more" "$N" "$(delta UCNT)"
check_eq 'sandbox create 201 by its route pattern: 1 more' 1 "$(delta CREATE)"
check_eq 'exec 200 by its route pattern: 1 more' 1 "$(delta EXEC)"
check_eq 'sandboxd_sandbox_create_duration_seconds_count: 1 more' 1 "$(delta CCNT)"
check_eq 'sandboxd_exec_duration_seconds_count: 1 more' 1 "$(delta XCNT)"
check_eq 'docker op="create" (one container): 1 more' 1 "$(delta DCREATE)"
check_cond 'git bytes in grew with the push' "(( $(delta GIN) > 0 ))"
check_cond 'git bytes out grew with the clone' "(( $(delta GOUT) > 0 ))"
check_cond 'the create histogram holds a duration (_sum > 0)' \
	"awk 'BEGIN { exit !($(qn sandboxd_sandbox_create_duration_seconds_sum) > 0) }'"
check_eq 'histogram buckets are cumulative: +Inf equals _count' \
	"$(qn 'sandboxd_http_request_duration_seconds_count{route="/api/v3/user"}')" \
	"$(qn 'sandboxd_http_request_duration_seconds_bucket{route="/api/v3/user",le="+Inf"}')"
check_eq 'workers{pool="api"}: SANDBOXD_WORKERS processes' "${SANDBOXD_WORKERS:-4}" "$(qn 'sandboxd_workers{pool="api"}')"
check_eq 'workers{pool="reaper"}: one' 1 "$(qn 'sandboxd_workers{pool="reaper"}')"
check_cond 'a busy API worker: the one answering the scrape' "(( $(qn 'sandboxd_workers{pool="api",state="busy"}') >= 1 ))"
check_eq 'build_info names the version' 1 "$(q 'count(sandboxd_build_info{version=~"[0-9].+"})')"
# The gauges from PostgreSQL: refreshed by the reaper every 5 s, so wait for them.
closed_sql=$(sql "select count(*) from sandboxes where state = 'closed'")
gauge_closed() { [[ $(qn 'sandboxd_sandboxes{state="closed"}') == "$closed_sql" ]]; }
check "sandboxd_sandboxes{state=\"closed\"} reaches the table's count ($closed_sql) within 15 s" wait_until 15 gauge_closed
check_eq 'sandboxd_sandboxes has its five states' 5 "$(q 'count(sandboxd_sandboxes)')"
P0=$(qn sandboxd_reaper_passes_total)
passes_grew() { [[ $(qn sandboxd_reaper_passes_total) -gt $P0 ]]; }
check 'sandboxd_reaper_passes_total grows' wait_until 30 passes_grew

# --- promtool on a scrape -----------------------------------------------------------------
# As it came (api's BODY has lost its last newline, which the format requires).
curl -s -m 10 -o "$_T/scrape.txt" -H "Authorization: Bearer $SANDBOXD_TOKEN" "$SANDBOXD_URL/metrics"
if out=$(promtool check metrics <"$_T/scrape.txt" 2>&1); then
	check_eq 'promtool check metrics: clean (no finding at all)' '' "$out"
else
	fail 'promtool check metrics: clean' "$out"
fi

# --- SIGKILL: no count lost ----------------------------------------------------------------
M_PID=$(cat "$SANDBOXD_PID_FILE")
procs() { pgrep -P "$M_PID" -x "$1" | sort -n; }
OLD="$(procs sandboxd) $(procs sandboxd-git)"
read_all B
# shellcheck disable=SC2086
kill -KILL $OLD
all_new() {
	local now p
	now="$(procs sandboxd) $(procs sandboxd-git)"
	[[ $(wc -w <<<"$now") -eq $(wc -w <<<"$OLD") ]] || return 1
	for p in $OLD; do grep -qw "$p" <<<"$now" && return 1; done
	return 0
}
check "every API and git worker SIGKILLed ($(wc -w <<<"$OLD")): all replaced within 15 s" wait_until 15 all_new
check 'a scrape after the kill' fresh
read_all A
for s in "${!Q[@]}"; do
	check_eq "after SIGKILL of every worker: ${Q[$s]} unchanged" "${B[$s]}" "${A[$s]}"
done
check_eq 'after SIGKILL: still SANDBOXD_WORKERS API workers' "${SANDBOXD_WORKERS:-4}" "$(qn 'sandboxd_workers{pool="api"}')"

# --- SIGHUP: the old workers drain on their slots while the new ones count on others -------
OLD="$(procs sandboxd) $(procs sandboxd-git)"
B=()
read_all B
kill -HUP "$M_PID"
check 'SIGHUP: every worker replaced within 15 s' wait_until 15 all_new
check 'a scrape after the SIGHUP' fresh
A=()
read_all A
for s in "${!Q[@]}"; do
	check_eq "after SIGHUP: ${Q[$s]} unchanged" "${B[$s]}" "${A[$s]}"
done
check_eq 'after SIGHUP: SANDBOXD_WORKERS API workers, none draining' "${SANDBOXD_WORKERS:-4}" \
	"$(qn 'sandboxd_workers{pool="api",state!="draining"}')"
check_eq 'Prometheus saw no counter reset through all of it' 0 "$(qn "resets(${Q[U200]}[5m])")"

# --- an allowed address needs no token ----------------------------------------------------
stack_restart allow-loopback SANDBOXD_METRICS_ALLOW='10.255.0.0/16, 127.0.0.1'
api GET /metrics "" -
expect_status 200 'SANDBOXD_METRICS_ALLOW lists 127.0.0.1: 200 without a token'
check 'and it is the exposition' grep -q '^sandboxd_build_info{' <<<"$BODY"
api GET /api/v3/user "" -
expect_error 401 'authentication required' 'the allowed address opens /metrics only'
stack_restart allow-other SANDBOXD_METRICS_ALLOW=10.255.0.1
api GET /metrics "" -
expect_error 401 'authentication required' 'an allow list without us: 401 again'
stack_restart suite-settings
api GET /metrics "" -
expect_error 401 'authentication required' 'the suite settings again: 401'

finish
