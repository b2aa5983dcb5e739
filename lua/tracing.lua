-- tracing.lua: OpenTelemetry server spans, as ingress-nginx's nginx module
-- (opentelemetry-cpp-contrib) makes them, recorded for the syncer to export.
--
-- A route's tracing (routes.lua compiles it with compile below; pkg/config's
-- Tracing) is {trustIncoming, operationName, sampler, ratio, parentBased}.
-- For a request of a traced route, start (router.lua, once the route is
-- chosen) takes the request's W3C traceparent as the parent when the route
-- trusts it, else starts a new trace; gives the span a new id; decides
-- sampling (the parent's flag when parentBased and a parent came, else
-- the sampler: AlwaysOn, AlwaysOff, or TraceIdRatioBased, which samples
-- when the trace id's last 8 hex digits, as a number, are below ratio *
-- 2^32); and sends the backend traceparent 00-<trace>-<span>-<flags>
-- (without a trusted parent, the client's tracestate is removed too). A
-- sampled span is kept in $ingress_trace (variables survive the router's
-- ngx.exec, ngx.ctx does not): the first five fields of the span's line.
--
-- log (the log phase, through phases.lua) then keeps the span's fields
-- in its worker's buffer, one slot each, and builds no string: flush, a
-- timer every 0.1 s, joins them into entries of the list "q" of the
-- shared dict ingress_traces (one entry per CHUNK spans, so that the dict
-- sees a few operations a second and no string reaches LuaJIT's large
-- allocations). The fields are separated by NUL, and each span ends with a
-- field "\n" (nginx refuses NUL, CR and LF in the request line and header
-- values, so a field never holds a separator; pkg/tracing drops a span
-- whose field count is wrong and makes the values valid UTF-8 without
-- control characters):
--
--   trace, span, parent ("" none), name, http.server_name, start, end
--   (seconds), http.method, http.flavor, http.target, http.host,
--   http.user_agent, http.status_code, http.scheme, net.host.port,
--   net.peer.ip, net.peer.port
--
-- the module's attributes. At most MAX_CHUNKS entries wait in the dict
-- ("#c" counts them) and WORKER_MAX spans in a worker: beyond, or when the
-- dict is full, a span is dropped and counted ("#d"); the request never
-- waits. serve answers GET /ingress_traces on the loopback status server:
-- "#d\t<dropped since the last read>\n", then the entries it takes off
-- the list (at most BATCH spans), joined by NUL (pkg/tracing reads it and
-- exports over OTLP/gRPC).
--
-- The span name is operationName with $host, $request_method,
-- $request_uri, $scheme and $uri replaced by the request's values, or the
-- route's path when it has none (the module names the span after its
-- location).

local settings = require("settings")
local nvar = require("nvar")

local ngx = ngx
local var_get, var_set = nvar.get, nvar.set
local ngx_now, start_time = nvar.now, nvar.start_time
local get_method = ngx.req.get_method
local http_version = ngx.req.http_version
local set_header, clear_header = ngx.req.set_header, ngx.req.clear_header
local random = math.random
local tohex = bit.tohex
local str_byte, str_sub, str_find = string.byte, string.sub, string.find
local concat = table.concat
local tonumber, tostring, type = tonumber, tostring, type
local min = math.min

local _M = { used = false }

local CHUNK = 64 -- spans in one entry of the dict's list
local MAX_CHUNKS = 128 -- entries waiting in the dict: 8192 spans
local BATCH = 32 -- entries one read takes: 2048 spans
local FIELDS = 14 -- slots of a span in a worker's buffer (17 fields: the first holds 5)

local dict = ngx.shared[settings.TRACES]

local SAMPLERS = { AlwaysOn = true, AlwaysOff = true, TraceIdRatioBased = true }
local VARIABLES = { host = true, request_method = true, request_uri = true, scheme = true, uri = true }

-- compile_name splits an operation name into literal strings and variable
-- names ({var = name}); nil and an error for what pkg/config refuses.
local function compile_name(s)
  if #s > 256 or str_find(s, "[^%w%s%-_%./:%$]") or str_find(s, "[\t\n\r\f\v]") then
    return nil, "invalid tracing operationName"
  end
  local parts, i = {}, 1
  while i <= #s do
    local d = str_find(s, "$", i, true)
    if not d then
      parts[#parts + 1] = str_sub(s, i)
      break
    end
    if d > i then
      parts[#parts + 1] = str_sub(s, i, d - 1)
    end
    local _, e, name = str_find(s, "^([a-z_]*)", d + 1)
    if not VARIABLES[name] then
      return nil, "tracing operationName: unknown variable $" .. name
    end
    parts[#parts + 1] = { var = name }
    i = e + 1
  end
  return parts
end

-- compile checks route item r's tracing and sets route.tracing; false and
-- an error when it is invalid (the host is refused).
function _M.compile(route, r)
  local t = r.tracing
  if t == nil then
    return true
  end
  if type(t) ~= "table" or not SAMPLERS[t.sampler] then
    return false, "tracing needs a sampler"
  end
  local ratio = t.ratio or 0
  if type(ratio) ~= "number" or ratio < 0 or ratio > 1 then
    return false, "tracing ratio must be from 0 to 1"
  end
  local parts = { route.path }
  if type(t.operationName) == "string" and t.operationName ~= "" then
    local p, err = compile_name(t.operationName)
    if not p then
      return false, err
    end
    parts = p
  end
  route.tracing = {
    trust = t.trustIncoming == true, parent_based = t.parentBased == true, parts = parts,
    on = t.sampler == "AlwaysOn", ratio = t.sampler == "TraceIdRatioBased" and ratio * 4294967296 or nil,
  }
  _M.used = true
  return true
end

-- is_hex reports whether s is n lower-case hex digits, not all zero.
local function is_hex(s, n)
  return #s == n and not str_find(s, "[^0-9a-f]") and str_find(s, "[^0]") ~= nil
end

-- parent returns the trace id, parent span id and sampled flag of a valid
-- version-00 traceparent header, nil otherwise.
local function parent(h)
  if type(h) ~= "string" or #h < 55 or str_byte(h, 3) ~= 45 or str_byte(h, 36) ~= 45 or str_byte(h, 53) ~= 45 then
    return nil
  end
  local version = str_sub(h, 1, 2)
  if version == "ff" or (version == "00" and #h ~= 55) then
    return nil
  end
  local trace, span, flags = str_sub(h, 4, 35), str_sub(h, 37, 52), tonumber(str_sub(h, 54, 55), 16)
  if not (flags and is_hex(trace, 32) and is_hex(span, 16)) then
    return nil
  end
  return trace, span, flags % 2 == 1
end

local function new_id(words)
  local s = tohex(random(0, 4294967295), 8) .. tohex(random(1, 4294967295), 8)
  if words == 4 then
    s = tohex(random(0, 4294967295), 8) .. tohex(random(0, 4294967295), 8) .. s
  end
  return s
end

-- clean makes an expanded span name one field (control characters
-- become "?"; pkg/tracing cleans the request's values).
local function clean(v)
  if type(v) ~= "string" then
    return ""
  end
  if not str_find(v, "%c") then
    return v
  end
  return (v:gsub("%c", "?"))
end

-- name expands the span name's parts with the request's variables; a
-- name without variables (the route's path, checked when the route was
-- compiled) is returned as it is, without a pattern match on the request
-- path (string.find with a pattern is not compiled by LuaJIT).
local function name(parts)
  if #parts == 1 and type(parts[1]) == "string" then
    return parts[1]
  end
  local out = {}
  for i = 1, #parts do
    local p = parts[i]
    if type(p) == "table" then
      p = p.var == "request_method" and get_method() or var_get(p.var) or ""
    end
    out[i] = p
  end
  return clean(concat(out))
end

-- start starts the span of a request of a route with tracing t on the
-- host named server (see the header).
function _M.start(t, server)
  local trace, pspan, sampled
  if t.trust then
    trace, pspan, sampled = parent(var_get("http_traceparent"))
  end
  if not trace then
    trace, pspan = new_id(4), nil
    if var_get("http_tracestate") then
      clear_header("tracestate")
    end
  end
  if not (pspan and t.parent_based) then
    sampled = t.on or (t.ratio ~= nil and tonumber(str_sub(trace, 25, 32), 16) < t.ratio)
  end
  local span = new_id(2)
  set_header("traceparent", "00-" .. trace .. "-" .. span .. (sampled and "-01" or "-00"))
  if sampled then
    local c = str_find(server, ":", 1, true) -- a Gateway port's "<port>:<host>"
    if c then
      server = str_sub(server, c + 1)
    end
    var_set("ingress_trace", trace .. "\0" .. span .. "\0" .. (pspan or "") .. "\0" .. name(t.parts) .. "\0" .. server)
  end
end

-- flavor is http.flavor of the request's HTTP version (a comparison, not a
-- table with a fractional key, which LuaJIT does not compile).
local function flavor()
  local v = http_version()
  if v == 1.1 then
    return "1.1"
  elseif v == 2 then
    return "2.0"
  elseif v == 1 then
    return "1.0"
  elseif v == 3 then
    return "3.0"
  end
  return ""
end


-- buf holds this worker's spans, FIELDS slots each, until flush adds them
-- to the dict (every FLUSH seconds and when the worker exits), so that a
-- request takes no lock of the dict and builds no string; at most
-- WORKER_MAX wait there, more are dropped. Slots past nbuf keep stale
-- values until overwritten (at most WORKER_MAX spans' worth).
local buf, nbuf, wdropped = {}, 0, 0
local WORKER_MAX = 1024
local FLUSH = 0.1
local started = false

-- push adds spans first to last of buf as one entry of the dict's list;
-- the count of spans dropped.
local function push(first, last)
  local n = last - first + 1
  local waiting = dict:incr("#c", 1, 0)
  if not waiting or waiting > MAX_CHUNKS then
    dict:incr("#c", -1, 0)
    return n
  end
  if not dict:rpush("q", concat(buf, "\0", (first - 1) * FIELDS + 1, last * FIELDS)) then
    dict:incr("#c", -1, 0)
    return n
  end
  return 0
end

local function flush()
  local d, n = wdropped, nbuf
  wdropped, nbuf = 0, 0
  for first = 1, n, CHUNK do
    d = d + push(first, min(first + CHUNK - 1, n))
  end
  if d > 0 then
    dict:incr("#d", d, 0)
  end
end
_M.flush = flush

-- log records the request's sampled span, if any (see the header).
function _M.log()
  local v = var_get("ingress_trace")
  if not v or v == "" then
    return
  end
  if not started then
    started = ngx.timer.every(FLUSH, flush) ~= nil
  end
  if nbuf >= WORKER_MAX then
    wdropped = wdropped + 1
    return
  end
  local i = nbuf * FIELDS
  nbuf = nbuf + 1
  buf[i + 1], buf[i + 2], buf[i + 3], buf[i + 4] = v, start_time(), ngx_now(), get_method()
  buf[i + 5], buf[i + 6], buf[i + 7] = flavor(), var_get("request_uri") or "", var_get("http_host") or ""
  buf[i + 8], buf[i + 9], buf[i + 10] = var_get("http_user_agent") or "", ngx.status, var_get("scheme") or ""
  buf[i + 11], buf[i + 12], buf[i + 13] = var_get("server_port") or "", var_get("remote_addr") or "", var_get("remote_port") or ""
  buf[i + 14] = "\n"
end

-- serve answers GET /ingress_traces (see the header).
function _M.serve()
  ngx.header["Content-Type"] = "application/octet-stream"
  local d = dict:get("#d") or 0
  if d > 0 then
    dict:incr("#d", -d, 0)
  end
  local out = { "#d\t", tostring(d), "\n" }
  for _ = 1, BATCH do
    local chunk = dict:lpop("q")
    if not chunk then
      break
    end
    dict:incr("#c", -1, 0)
    if #out > 3 then
      out[#out + 1] = "\0"
    end
    out[#out + 1] = chunk
  end
  ngx.print(out)
end

-- init_worker seeds this worker's ids.
function _M.init_worker()
  math.randomseed(os.time() + ngx.worker.pid() * 7919)
end

return _M
