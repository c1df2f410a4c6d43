-- mix.lua: a wrk script that sends a fixed mix of sandboxd requests and checks every answer.
--
--   wrk -t N -c N -s tests/load/mix.lua URL       (one connection per thread: -t = -c)
--
-- One connection per thread makes request() and response() strictly alternate, so each
-- answer is paired with its request: its route, its latency (CLOCK_MONOTONIC through the
-- LuaJIT FFI) and a check of its status and body. Settings, from the environment:
--
--   LOAD_TARGETS   a file, one target a line: "TOKEN OWNER/REPO SANDBOX_ID"; thread i works
--                  on target i mod n (its token, its repository, its sandbox)
--   LOAD_MIX       route weights, e.g. "user=4,exec=2,write=2,read=1,over=1" (the default);
--                  routes: user (GET /api/v3/user), repo (GET the repository), exec (a
--                  short command in the sandbox), write and read (a file of the thread's
--                  own in the sandbox; the read checks the bytes), over (POST a sandbox
--                  for an account at its limit: a deliberate 429, anything else is bad)
--   LOAD_REQUESTS  stop each thread after this many answers (0 or unset: no cap)
--   LOAD_FILE_BYTES the size of the file written (default 4096)
--   LOAD_OUT       where done() writes its results for the caller (see the end)
--
-- Each thread starts at a different place in the mix, so threads do not move in step.

local ffi = require("ffi")
local bit = require("bit")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } load_timespec;
int clock_gettime(int clk, load_timespec *tp);
]]
local ts = ffi.new("load_timespec")
local function now_ms()
	ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
	return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local ROUTES = { "user", "repo", "exec", "write", "read", "over" }

local function parse_mix(s)
	local w = {}
	for name, n in string.gmatch(s, "(%a+)=(%d+)") do
		w[name] = tonumber(n)
	end
	return w
end

-- ---- main thread: one id per thread, and the threads for done() ---------------------------
local threads = {}
local next_id = 0
function setup(thread)
	thread:set("id", next_id)
	next_id = next_id + 1
	table.insert(threads, thread)
end

-- ---- each thread ----------------------------------------------------------------------------
local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
	local out = {}
	for i = 1, #s, 3 do
		local a, b, c = s:byte(i, i + 2)
		local n = bit.bor(bit.lshift(a, 16), bit.lshift(b or 0, 8), c or 0)
		local q = {}
		for k = 1, 4 do
			local v = bit.band(bit.rshift(n, 6 * (4 - k)), 63)
			q[k] = B64:sub(v + 1, v + 1)
		end
		if not b then q[3] = "=" end
		if not c then q[4] = "=" end
		out[#out + 1] = table.concat(q)
	end
	return table.concat(out)
end

local cycle = {} -- the mix as a sequence of route names
local pos, cap, done_n = 1, 0, 0
local req = {}   -- route -> the prepared request
local cur, t0 = nil, 0
local written = false
local content = ""
-- Results, read by done() through thread:get. Only numbers and strings cross: wrk 4.1's
-- copy of a table between Lua states pops the thread's stack once too often (script.c,
-- script_copy_value pops the table and script_thread_get pops it again), which corrupts
-- the thread's Lua state and crashed wrk at 64 threads. So a thread keeps, as globals:
--   h_<route>_<k>   answers whose latency fell in bucket k (see bucket() below)
--   hk_<route>      the buckets used, "k,k,...," (grows only when a new bucket is hit)
--   max_<route>     the longest latency in ms
--   ok_<route>, bad_<route>  answers as expected, and any other
--   st_<route>_<status>, sl_<route>  counts by status, and the statuses seen, "200,429,"
--   samples         the first few unexpected answers, one a line
local ok_n, bad_n = {}, {}
local seen = {}  -- route -> bucket or status -> true, to grow hk_ and sl_ once per key
local n_samples = 0
samples = ""

-- Latency buckets 1% wide from 0.01 ms: a percentile read off them is within 1% of the
-- exact one, and a thread's results are a few hundred numbers instead of one per answer.
local LOG_STEP = math.log(1.01)
local function bucket(ms)
	if ms < 0.01 then return 0 end
	return math.floor(math.log(ms / 0.01) / LOG_STEP)
end
local function bucket_ms(k) -- the middle of bucket k
	return 0.01 * math.exp((k + 0.5) * LOG_STEP)
end

local function count(prefix, list, key)
	local g = prefix .. "_" .. key
	_G[g] = (_G[g] or 0) + 1
	if not seen[list .. key] then
		seen[list .. key] = true
		_G[list] = (_G[list] or "") .. key .. ","
	end
end

function init(args)
	local tpath = os.getenv("LOAD_TARGETS")
	assert(tpath, "LOAD_TARGETS is not set")
	local f = assert(io.open(tpath))
	local targets = {}
	for line in f:lines() do
		local tok, repo, sb = line:match("^(%S+)%s+(%S+)%s+(%S+)")
		if tok then targets[#targets + 1] = { tok = tok, repo = repo, sb = sb } end
	end
	f:close()
	assert(#targets > 0, "LOAD_TARGETS names no target")
	local t = targets[id % #targets + 1]
	local w = parse_mix(os.getenv("LOAD_MIX") or "user=4,exec=2,write=2,read=1,over=1")
	for _, r in ipairs(ROUTES) do
		for _ = 1, (w[r] or 0) do cycle[#cycle + 1] = r end
		ok_n[r], bad_n[r] = 0, 0
		_G["ok_" .. r], _G["bad_" .. r], _G["max_" .. r] = 0, 0, 0
		_G["hk_" .. r], _G["sl_" .. r] = "", ""
	end
	assert(#cycle > 0, "LOAD_MIX names no route")
	-- spread the threads over the mix; a read before any write becomes a write
	pos = id % #cycle + 1
	cap = tonumber(os.getenv("LOAD_REQUESTS") or "0") or 0

	local size = tonumber(os.getenv("LOAD_FILE_BYTES") or "4096")
	local line = string.format("thread %d of sandboxd's load mix\n", id)
	content = base64(string.rep(line, math.ceil(size / #line)):sub(1, size))
	local path = string.format("load-%d.txt", id)
	local auth = { ["Authorization"] = "Bearer " .. t.tok }
	local json = { ["Authorization"] = "Bearer " .. t.tok, ["Content-Type"] = "application/json" }
	local repo = "/api/v3/repos/" .. t.repo
	local sb = repo .. "/diffinery/sandboxes/" .. t.sb
	req.user = wrk.format("GET", "/api/v3/user", auth)
	req.repo = wrk.format("GET", repo, auth)
	req.exec = wrk.format("POST", sb .. "/exec", json, '{"cmd":"echo hi; true"}')
	req.write = wrk.format("POST", sb .. "/write", json,
		string.format('{"path":"%s","content":"%s"}', path, content))
	req.read = wrk.format("POST", sb .. "/read", json, string.format('{"path":"%s"}', path))
	req.over = wrk.format("POST", repo .. "/diffinery/sandboxes", json, "{}")
end

function request()
	cur = cycle[pos]
	pos = pos % #cycle + 1
	if cur == "read" and not written then cur = "write" end
	t0 = now_ms()
	return req[cur]
end

local function has(body, s)
	return body ~= nil and string.find(body, s, 1, true) ~= nil
end

local function expected(route, status, body)
	if route == "over" then
		return status == 429 and has(body, "sandbox limit reached")
	end
	if status ~= 200 then return false end
	if route == "user" then return has(body, '"login"') end
	if route == "repo" then return has(body, '"name"') end
	if route == "exec" then return has(body, '"exitCode":0') and has(body, '"stdout":"hi\\n"') end
	if route == "write" then return has(body, '"ok":true') end
	if route == "read" then return has(body, '"content":"' .. content .. '"') end
	return false
end

function response(status, headers, body)
	local r = cur
	if r == nil then return end
	cur = nil
	local ms = now_ms() - t0
	count("h_" .. r, "hk_" .. r, bucket(ms))
	if ms > _G["max_" .. r] then _G["max_" .. r] = ms end
	count("st_" .. r, "sl_" .. r, status)
	if expected(r, status, body) then
		ok_n[r] = ok_n[r] + 1
		_G["ok_" .. r] = ok_n[r]
		if r == "write" then written = true end
	else
		bad_n[r] = bad_n[r] + 1
		_G["bad_" .. r] = bad_n[r]
		if n_samples < 5 then
			n_samples = n_samples + 1
			samples = samples .. string.format("thread %d %s -> %d %s\n", id, r, status,
				((body or ""):sub(1, 300):gsub("%s+", " ")))
		end
	end
	done_n = done_n + 1
	if cap > 0 and done_n >= cap then wrk.thread:stop() end
end

-- ---- main thread, at the end: merge, print, write LOAD_OUT ---------------------------------
-- pct: the latency at percentile p of a merged histogram (bucket -> count, n answers),
-- nearest rank, as the middle of its bucket
local function pct(hist, keys, n, p)
	if n == 0 then return 0 end
	local rank = math.max(1, math.ceil(p / 100 * n))
	local seen_n = 0
	for _, k in ipairs(keys) do
		seen_n = seen_n + hist[k]
		if seen_n >= rank then return bucket_ms(k) end
	end
	return bucket_ms(keys[#keys])
end

local function split(s)
	local out = {}
	for v in string.gmatch(s or "", "([^,]+),") do out[#out + 1] = v end
	return out
end

function done(summary, latency, requests)
	local all = {}
	for _, r in ipairs(ROUTES) do all[r] = { hist = {}, n = 0, max = 0, ok = 0, bad = 0, st = {} } end
	local bad_samples = {}
	for _, t in ipairs(threads) do
		for _, r in ipairs(ROUTES) do
			local a = all[r]
			for _, k in ipairs(split(t:get("hk_" .. r))) do
				local c = t:get("h_" .. r .. "_" .. k) or 0
				k = tonumber(k)
				a.hist[k] = (a.hist[k] or 0) + c
				a.n = a.n + c
			end
			a.max = math.max(a.max, t:get("max_" .. r) or 0)
			a.ok = a.ok + (t:get("ok_" .. r) or 0)
			a.bad = a.bad + (t:get("bad_" .. r) or 0)
			for _, s in ipairs(split(t:get("sl_" .. r))) do
				a.st[s] = (a.st[s] or 0) + (t:get("st_" .. r .. "_" .. s) or 0)
			end
		end
		for s in string.gmatch(t:get("samples") or "", "([^\n]+)") do
			if #bad_samples < 5 then bad_samples[#bad_samples + 1] = s end
		end
	end
	local e = summary.errors
	local secs = summary.duration / 1e6
	local lines = {}
	local function out(s) lines[#lines + 1] = s end
	print(string.format("%-6s %8s %8s %8s %10s %10s %10s  %s", "route", "answers", "expected",
		"other", "p50 ms", "p99 ms", "max ms", "statuses"))
	local total, total_bad = 0, 0
	for _, r in ipairs(ROUTES) do
		local a = all[r]
		if a.n > 0 then
			local keys = {}
			for k in pairs(a.hist) do keys[#keys + 1] = k end
			table.sort(keys)
			local sts = {}
			for s, n in pairs(a.st) do sts[#sts + 1] = s .. "x" .. n end
			table.sort(sts)
			local p50, p99, mx = pct(a.hist, keys, a.n, 50), pct(a.hist, keys, a.n, 99), a.max
			print(string.format("%-6s %8d %8d %8d %10.1f %10.1f %10.1f  %s", r, a.n, a.ok,
				a.bad, p50, p99, mx, table.concat(sts, " ")))
			out(string.format("route %s answers %d expected %d other %d p50 %.1f p99 %.1f max %.1f statuses %s",
				r, a.n, a.ok, a.bad, p50, p99, mx, table.concat(sts, ",")))
			total = total + a.n
			total_bad = total_bad + a.bad
		end
	end
	print(string.format("%d answers in %.1f s (%.1f/s), %d not as expected; socket errors: " ..
		"connect %d, read %d, write %d, timeout %d", total, secs, total / secs, total_bad,
		e.connect, e.read, e.write, e.timeout))
	for _, s in ipairs(bad_samples) do print("  " .. s) end
	out(string.format("total answers %d other %d seconds %.1f", total, total_bad, secs))
	out(string.format("socket connect %d read %d write %d timeout %d", e.connect, e.read,
		e.write, e.timeout))
	for _, s in ipairs(bad_samples) do out("sample " .. s) end
	local path = os.getenv("LOAD_OUT")
	if path then
		local f = assert(io.open(path, "w"))
		f:write(table.concat(lines, "\n"), "\n")
		f:close()
	end
end
