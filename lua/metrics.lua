-- metrics.lua: ingress-nginx's per-request traffic metrics
-- (nginx_ingress_controller_requests and the latency and size histograms),
-- counted in the log phase into the shared dict ingress_metrics and read by
-- the syncer from GET /ingress_metrics on the loopback status server.
--
-- Settings (settings.lua's metrics, from nginx.conf; nil: off; read by
-- init, which phases.lua's init calls):
--   per_host      the host label is the Ingress rule's host ("" otherwise)
--   max_series    most distinct label sets; samples of a new one beyond it
--                 are dropped and counted
--   time, length, size   histogram bucket bounds (ingress-nginx's
--                 --time-buckets, --length-buckets, --size-buckets)
--
-- A label set is the route's labels (namespace, Ingress, backend, path,
-- host, canary backend), which router.lua computes once per route when it
-- compiles a host (route_keys), and the request's method and status. The
-- router sets $ingress_metrics to the route's key; log adds the method and
-- status through a per-worker cache, so a request builds no string once its
-- label set was seen. The first request of a new label set gives it an id
-- in the dict (the cap is checked there). A request then only adds to
-- Lua numbers of its worker; every second (FLUSH, the batching interval of
-- ingress-nginx's monitor.lua) and when the worker exits, each worker adds
-- what it counted to the dict: one incr per counter, histogram bucket and
-- histogram sum of the label sets it saw, under short keys:
--
--   "#n"           ids given (label sets)
--   "#d"           samples dropped by max_series
--   "#e"           entries lost because the dict was full
--   "L<id>"        the labels, separated by \31: namespace, ingress,
--                  backend, path, host, canary, method, status
--   "m<labels>"    the id of a label set
--   "r<id>"        requests
--   "<h><id>:<i>"  requests in bucket i (not cumulative; #bounds+1: +Inf)
--   "<h><id>:s"    sum of the observed values
--
-- with h: d request_duration_seconds, u response_duration_seconds, c
-- connect_duration_seconds, h header_duration_seconds, q request_size, p
-- response_size (whose sum bytes_sent shares) and b bytes_sent.
--
-- The dict survives reloads (its size unchanged): counters keep counting
-- across them, as ingress-nginx's, which live in the controller process.
-- A restart of nginx starts them from zero.

local settings = require("settings")

local ngx = ngx
local nvar = require("nvar")
local var_get = nvar.get
local ngx_now = nvar.now
local start_time = nvar.start_time
local get_method = ngx.req.get_method
local tonumber = tonumber
local tostring = tostring
local type = type
local concat = table.concat
local pairs = pairs

local SEP = "\31"

local _M = { enabled = false }

local dict = ngx.shared[settings.METRICS]
-- enabled: settings.lua's metrics are set (init); else routes get no label
-- key and phases.lua's log does not call log.
local enabled = false

-- SLOTS: bucket bounds are padded with +Inf to this many, so that bucket
-- finds the index in 7 steps without a loop (pkg/nginx allows 64 bounds).
local SLOTS = 127

local function padded(bounds)
  local p = {}
  for i = 1, SLOTS do
    p[i] = bounds[i] or math.huge
  end
  return p
end

local per_host, max_series, time_b, length_b, size_b

-- init reads the metrics settings (phases.lua's init, after settings.init).
function _M.init()
  local m = settings.get().metrics
  enabled = m ~= nil and dict ~= nil
  _M.enabled = enabled
  if enabled then
    per_host, max_series = m.per_host == true, m.max_series or 0
    time_b, length_b, size_b = padded(m.time or {}), padded(m.length or {}), padded(m.size or {})
  end
end

-- clean makes a label value printable on one line of the endpoint's text.
local function clean(v)
  if type(v) ~= "string" then
    return ""
  end
  return (v:gsub("[%c]", "?"))
end

-- route_keys returns the label keys of route r of host item name: the
-- main backend's and the canary's (nil when none); nil when metrics are off.
function _M.route_keys(host, r)
  if not enabled or type(r) ~= "table" then
    return nil
  end
  local ns, name = "", ""
  if type(r.ingress) == "string" then
    ns, name = r.ingress:match("^([^/]*)/(.*)$")
    if not ns then
      ns, name = "", r.ingress
    end
  end
  local h = ""
  if per_host and host ~= "_" then
    h = host
  end
  local base = concat({ clean(ns), clean(name), clean(r.backend), clean(r.path), clean(h) }, SEP)
  local canary
  if type(r.canary) == "table" and type(r.canary.backend) == "string" then
    canary = base .. SEP .. clean(r.canary.backend)
  end
  return base .. SEP, canary
end

-- cache: key -> method -> status -> series of this worker (ids seen);
-- bounded by max_series, as only accepted label sets enter it.
local cache = {}

-- new_series returns the id of label set full, giving it one when the cap
-- allows; nil: dropped.
local function new_series(full)
  local id = dict:get("m" .. full)
  if id then
    return id
  end
  if (dict:get("#n") or 0) >= max_series then
    return nil
  end
  local n = dict:incr("#n", 1, 0)
  if not n or n > max_series then
    return nil
  end
  if not dict:safe_set("L" .. n, full) then
    dict:incr("#e", 1, 0)
    return nil
  end
  local ok, err = dict:safe_add("m" .. full, n)
  if ok then
    return n
  end
  dict:delete("L" .. n)
  if err ~= "exists" then
    dict:incr("#e", 1, 0)
    return nil
  end
  return dict:get("m" .. full) -- another worker gave it an id first
end

-- HISTS are the histogram letters; a series entry has one table per
-- letter: c (counts per bucket index of this worker since its last
-- flush), keys (the dict keys of the buckets, built on first use), sum.
local HISTS = { "d", "u", "c", "h", "q", "p", "b" }

-- dirty lists the series entries with counts not yet flushed.
local dirty, ndirty = {}, 0
local dropped = 0

-- series returns this worker's entry of the label set, nil when dropped.
local function series(key, method, status)
  local by_method = cache[key]
  if not by_method then
    by_method = {}
    cache[key] = by_method
  end
  local by_status = by_method[method]
  if not by_status then
    by_status = {}
    by_method[method] = by_status
  end
  local s = by_status[status]
  if s then
    return s
  end
  local id = new_series(key .. SEP .. method .. SEP .. tostring(status))
  if not id then
    return nil
  end
  id = tostring(id)
  s = { r = "r" .. id, n = 0 }
  for i = 1, #HISTS do
    local h = HISTS[i]
    s[h] = { prefix = h .. id .. ":", sum_key = h .. id .. ":s", c = {}, keys = {}, sum = 0 }
  end
  by_status[status] = s
  return s
end

-- bucket counts value v in histogram t with padded bounds b (the first
-- bucket whose bound is >= v; past the last bound: +Inf), and adds it to the
-- sum unless nosum. A binary search without a loop: LuaJIT does not compile
-- a loop inside a function every request enters (see nvar.lua).
local function bucket(t, b, v, nosum)
  local i = 0
  if v > b[i + 64] then i = i + 64 end
  if v > b[i + 32] then i = i + 32 end
  if v > b[i + 16] then i = i + 16 end
  if v > b[i + 8] then i = i + 8 end
  if v > b[i + 4] then i = i + 4 end
  if v > b[i + 2] then i = i + 2 end
  if v > b[i + 1] then i = i + 1 end
  i = i + 1
  local c = t.c
  c[i] = (c[i] or 0) + 1
  if not nosum then
    t.sum = t.sum + v
  end
end

local function incr(k, v)
  local _, err, forcible = dict:incr(k, v, 0)
  if err or forcible then
    dict:incr("#e", 1, 0)
  end
end

-- flush_hist adds histogram t's counts to the dict and clears them.
local function flush_hist(t)
  local c, keys = t.c, t.keys
  for i, n in pairs(c) do
    local k = keys[i]
    if not k then
      k = t.prefix .. i
      keys[i] = k
    end
    incr(k, n)
    c[i] = nil
  end
  if t.sum ~= 0 then
    incr(t.sum_key, t.sum)
    t.sum = 0
  end
end

-- flush adds this worker's counts to the dict: every FLUSH seconds, and
-- when the worker exits (premature).
local function flush()
  for i = 1, ndirty do
    local s = dirty[i]
    incr(s.r, s.n)
    s.n = 0
    for j = 1, #HISTS do
      flush_hist(s[HISTS[j]])
    end
    s.dirty = nil
    dirty[i] = nil
  end
  ndirty = 0
  if dropped > 0 then
    dict:incr("#d", dropped, 0)
    dropped = 0
  end
end
_M.flush = flush

local FLUSH = 1 -- second, as ingress-nginx's monitor.lua batches
local started = false

-- log counts the request of a route (router.lua set $ingress_metrics) in
-- this worker; flush adds the counts to the dict.
function _M.log()
  local key = var_get("ingress_metrics")
  if not key or key == "" then
    return
  end
  if not started then
    started = ngx.timer.every(FLUSH, flush) ~= nil
  end
  local s = series(key, get_method(), ngx.status)
  if not s then
    dropped = dropped + 1
    return
  end
  if not s.dirty then
    s.dirty = true
    ndirty = ndirty + 1
    dirty[ndirty] = s
  end
  s.n = s.n + 1
  -- $request_time without formatting it: the same cached clock.
  bucket(s.d, time_b, ngx_now() - start_time())
  local v = tonumber(var_get("request_length"))
  if v then
    bucket(s.q, length_b, v)
  end
  v = tonumber(var_get("bytes_sent"))
  if v then
    bucket(s.p, length_b, v)
    bucket(s.b, size_b, v, true)
  end
  -- Several tries ("0.001, 0.002") or none ("-") are not observed, as
  -- ingress-nginx.
  v = tonumber(var_get("upstream_connect_time"))
  if v then
    bucket(s.c, time_b, v)
  end
  v = tonumber(var_get("upstream_header_time"))
  if v then
    bucket(s.h, time_b, v)
  end
  v = tonumber(var_get("upstream_response_time"))
  if v then
    bucket(s.u, time_b, v)
  end
end

-- serve answers GET /ingress_metrics: one "key\tvalue" line per entry but
-- the "m" markers.
function _M.serve()
  ngx.header["Content-Type"] = "text/plain"
  if not enabled then
    return ngx.exit(404)
  end
  local keys = dict:get_keys(0)
  local out, n = {}, 0
  for i = 1, #keys do
    local k = keys[i]
    if k:byte(1) ~= 109 then -- "m"
      local v = dict:get(k)
      if v ~= nil then
        out[n + 1], out[n + 2], out[n + 3], out[n + 4] = k, "\t", tostring(v), "\n"
        n = n + 4
      end
    end
  end
  ngx.print(out)
end

return _M
