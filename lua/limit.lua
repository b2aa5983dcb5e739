-- limit.lua: the rate and connection limits of routes (limit-rps,
-- limit-rpm, limit-burst-multiplier, limit-connections, limit-rate,
-- limit-rate-after, limit-allowlist). A route's limit is
--
--   rps, rpm          requests per second and per minute (0 or absent: none)
--   burstMultiplier   burst = rate * burstMultiplier, admitted without delay
--   connections       requests in progress
--   rate, rateAfter   bytes per second of the response after its first
--                     rateAfter bytes ($limit_rate, limit_rate_after)
--   allowlist         CIDRs the request and connection limits skip
--   reqStatus, connStatus   the answers beyond them (absent: 503)
--   invalid           an annotation did not parse: the route answers 503
--
-- The state lives in ONE shared dict, ingress_limits, per nginx instance
-- (as ingress-nginx's zones are per replica), keyed by the Ingress and the
-- client's binary address: every route of an Ingress shares its buckets, as
-- its locations share ingress-nginx's zone.
--
-- Requests: nginx's limit_req algorithm (a leaky bucket with nodelay) in
-- its "theoretical arrival time" form, so that one atomic incr decides:
-- the dict holds u, the time (ms) when the bucket will have drained one
-- request's worth beyond empty; a request at now passes when u - now <=
-- burst * T (T = the time of one request at the rate) and moves u by T.
-- That admits burst + 1 requests at once and then one per T, exactly as
-- limit_req's excess. A refused request is taken back (it is not counted,
-- as in nginx); a bucket found drained (u < now) restarts at now + T.
-- With both rps and rpm a request must pass both.
--
-- Connections: a counter incremented here, in the rewrite phase, and
-- decremented in the log phase (phases.lua's log calls _M.log), through
-- $ingress_limit_conn, which survives the router's internal redirects.
--
-- A full dict: incr drops the least recently used entries (as nginx drops
-- the oldest state of a full zone); when even that leaves no room the
-- request gets the limit's status code, never an unlimited pass.

local ipmatch = require("ipmatch")
local settings = require("settings")

local ngx = ngx
local nvar = require("nvar")
local var_get, var_set = nvar.get, nvar.set
local ngx_now = nvar.now
local type = type
local floor = math.floor
local tostring = tostring

local _M = {}

local MAX_COUNT = 1048576
local MAX_MULTIPLIER = 1000
local MAX_BYTES = 1099511627776

local dict = ngx.shared[settings.LIMITS]

-- count accepts nil or a whole number of 0 to max.
local function count(v, max)
  return v == nil or (type(v) == "number" and v >= 0 and v <= max and floor(v) == v)
end

local function status(v)
  if v == nil then
    return 503
  end
  if type(v) == "number" and v >= 400 and v <= 599 and floor(v) == v then
    return v
  end
  return nil
end

-- bucket returns the parameters of one rate: the key prefix, T and the
-- tolerance burst * T (ms), or nil for no rate.
local function bucket(prefix, n, period, multiplier)
  if not n or n == 0 then
    return nil
  end
  local t = period / n
  return { prefix = prefix, t = t, tol = n * multiplier * t }
end

-- compile returns the worker's form of a route's limit, or nil and an
-- error (the router then makes the route answer 503).
function _M.compile(l, ingress)
  if type(l) ~= "table" then
    return nil, "limit must be an object"
  end
  if l.invalid then
    return { invalid = true }
  end
  if not (count(l.rps, MAX_COUNT) and count(l.rpm, MAX_COUNT) and count(l.connections, MAX_COUNT)
      and count(l.burstMultiplier, MAX_MULTIPLIER) and count(l.rate, MAX_BYTES) and count(l.rateAfter, MAX_BYTES)) then
    return nil, "limit: invalid number"
  end
  local req, conn = status(l.reqStatus), status(l.connStatus)
  if not req or not conn then
    return nil, "limit: status codes must be 400 to 599"
  end
  local id = (type(ingress) == "string" and ingress or "") .. "\0"
  local c = {
    rpm = bucket("m" .. id, l.rpm, 60000, l.burstMultiplier or 0),
    rps = bucket("s" .. id, l.rps, 1000, l.burstMultiplier or 0),
    conn = l.connections ~= 0 and l.connections or nil, conn_prefix = "c" .. id,
    rate = l.rate ~= 0 and l.rate or nil, rate_after = l.rateAfter ~= 0 and l.rateAfter or nil,
    req_status = req, conn_status = conn,
  }
  if c.conn then
    _M.counting = true -- phases.lua's log then calls _M.log
  end
  if l.allowlist ~= nil then
    local m, err = ipmatch.new(l.allowlist)
    if not m then
      return nil, "limit allowlist: " .. tostring(err)
    end
    c.allow = m
  end
  return c
end

-- take admits one request into bucket b of key, or returns false; nil
-- and an error when the dict has no room.
local function take(b, key, now)
  local t = b.t
  local v, err = dict:incr(key, t, now)
  if not v then
    return nil, err
  end
  local u = v - t
  if u - now > b.tol then
    dict:incr(key, -t)
    return false
  end
  if u < now then
    dict:set(key, now + t) -- drained: the bucket restarts at now
  end
  return true
end

-- give_back undoes take for a request another limit refused.
local function give_back(b, key)
  dict:incr(b.prefix .. key, -b.t)
end

local function requests(c, addr)
  local now = ngx_now() * 1000
  local m, s = c.rpm, c.rps
  if m then
    local ok, err = take(m, m.prefix .. addr, now)
    if not ok then
      return false, err
    end
  end
  if s then
    local ok, err = take(s, s.prefix .. addr, now)
    if not ok then
      if m then
        give_back(m, addr)
      end
      return false, err
    end
  end
  return true
end

-- connection counts the request in progress, or returns false.
local function connection(c, addr)
  local key = c.conn_prefix .. addr
  local v, err = dict:incr(key, 1, 0)
  if not v then
    return false, err
  end
  if v > c.conn then
    dict:incr(key, -1)
    return false
  end
  var_set("ingress_limit_conn", key)
  return true
end

-- check runs in the router for a route with a limit. It returns nil when
-- the request may go on, else the status code to answer.
function _M.check(c)
  if c.invalid then
    return 503
  end
  if c.rate then
    var_set("limit_rate", c.rate)
    if c.rate_after then
      var_set("ingress_limit_rate_after", c.rate_after)
    end
  end
  if not (c.conn or c.rpm or c.rps) or (c.allow and ipmatch.match(c.allow, var_get("remote_addr"))) then
    return nil
  end
  local addr = var_get("binary_remote_addr")
  if c.conn then
    local ok, err = connection(c, addr)
    if not ok then
      if err then
        ngx.log(ngx.ERR, "limit-connections: ", settings.LIMITS, ": ", err)
      end
      return c.conn_status
    end
  end
  if c.rpm or c.rps then
    local ok, err = requests(c, addr)
    if not ok then
      if err then
        ngx.log(ngx.ERR, "limit-rps/rpm: ", settings.LIMITS, ": ", err)
      end
      return c.req_status
    end
  end
  return nil
end

-- log runs in the log phase of every request once a route of this worker
-- has a connection limit (_M.counting): it takes back what check counted.
function _M.log()
  local key = var_get("ingress_limit_conn")
  if key and key ~= "" then
    dict:incr(key, -1)
  end
end

return _M
