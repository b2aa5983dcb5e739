-- digest.lua: HTTP digest auth of a route (auth-type digest), as the
-- auth_digest module ingress-nginx builds in: RFC 2617 with
-- algorithm=MD5 and qop=auth. A route's users map a name to its HA1, the
-- hex MD5 of "user:realm:password" (htdigest), for the route's realm.
--
-- The challenge is
--   WWW-Authenticate: Digest algorithm="MD5", qop="auth", realm="<realm>", nonce="<nonce>"
-- with stale="true" added when the client's nonce was good but expired.
-- A nonce is 8 hex digits of its time, 8 random, and 16 of an HMAC-SHA1
-- over both with a key kept in the ingress_limits dict (so every worker,
-- and nginx after a reload, accepts the nonces of the others): no state is
-- kept for a nonce until it is first used. As the module's defaults, a
-- nonce must be first used within TIMEOUT seconds, then serves EXPIRES
-- seconds and at most REPLAYS requests, each with a new nc (a repeated nc
-- is a replay: 401). MAXTRIES failed sign-ins from one client address
-- refuse it (401) for EVASION seconds; credentials that verify before then
-- clear its count. A verified request's response carries
-- Authentication-Info with rspauth, cnonce and nc, as the module's.

local ngx = ngx
local nvar = require("nvar")
local settings = require("settings")
local var_get = nvar.get
local md5 = ngx.md5
local hmac_sha1 = ngx.hmac_sha1
local str_byte = string.byte
local str_find = string.find
local str_format = string.format
local str_sub = string.sub

local equal = require("secure").equal

local _M = {}

local TIMEOUT = 60 -- auth_digest_timeout: from the challenge to the first use
local EXPIRES = 10 -- auth_digest_expires: from the first use
local REPLAYS = 20 -- auth_digest_replays: requests a nonce serves
local MAXTRIES = 5 -- auth_digest_maxtries: failed sign-ins of a client address...
local EVASION = 300 -- auth_digest_evasion_time: ...before it is refused this long
local KEY = "digest:key"

local dict = ngx.shared[settings.LIMITS]
local key -- this worker's copy of the shared nonce key

local seeded = false

-- nonce_key returns the key the nonces are signed with, created once per
-- nginx instance (the shared dict outlives reloads).
local function nonce_key()
  if key then
    return key
  end
  local k = dict:get(KEY)
  if not k then
    local f = io.open("/dev/urandom", "rb")
    local fresh = f and f:read(32)
    if f then
      f:close()
    end
    if not fresh or #fresh ~= 32 then
      return nil
    end
    dict:add(KEY, fresh) -- another worker may win: read what is there
    k = dict:get(KEY)
  end
  key = k
  return key
end

local function hex(s)
  return (s:gsub(".", function(c)
    return str_format("%02x", str_byte(c))
  end))
end

local function sign(prefix)
  return str_sub(hex(hmac_sha1(nonce_key(), prefix)), 1, 16)
end

local function new_nonce()
  if not seeded then
    math.randomseed(nvar.now() * 1000 + ngx.worker.pid())
    seeded = true
  end
  local prefix = str_format("%08x%08x", nvar.time(), math.random(0, 0x7fffffff))
  return prefix .. sign(prefix)
end

-- params parses the parameters of a Digest Authorization header (name=token
-- or name="quoted \" string"); nil when it is not one.
local function params(h)
  if not h or str_sub(h, 1, 7):lower() ~= "digest " then
    return nil
  end
  local p, i, n = {}, 8, #h
  while i <= n do
    local s, e, name = str_find(h, "^[%s,]*([%w%-]+)%s*=%s*", i)
    if not s then
      break
    end
    i = e + 1
    local v
    if str_sub(h, i, i) == '"' then
      local buf = {}
      i = i + 1
      while true do
        local c = str_sub(h, i, i)
        if c == "" then
          return nil -- unterminated
        elseif c == '"' then
          i = i + 1
          break
        elseif c == "\\" then
          i = i + 1
          c = str_sub(h, i, i)
        end
        buf[#buf + 1] = c
        i = i + 1
      end
      v = table.concat(buf)
    else
      local _, te, tok = str_find(h, "^([^%s,]*)", i)
      v, i = tok, te + 1
    end
    name = name:lower()
    if p[name] ~= nil then
      return nil -- a repeated parameter
    end
    p[name] = v
  end
  return p
end
_M.params = params

-- nonce_state returns "ok", "stale" or "bad" for a nonce the client sent
-- with a correct response, and records the use of nc.
local function nonce_state(nonce, nc)
  local prefix = str_sub(nonce, 1, 16)
  if #nonce ~= 32 or not str_find(prefix, "^%x+$") or not equal(sign(prefix), str_sub(nonce, 17)) then
    return "bad"
  end
  local now = nvar.time()
  local issued = tonumber(str_sub(prefix, 1, 8), 16)
  if issued > now + 1 then
    return "bad"
  end
  local ttl = TIMEOUT + EXPIRES
  local first = dict:get("digest:t:" .. nonce)
  if not first then
    if now - issued > TIMEOUT then
      return "stale"
    end
    dict:add("digest:t:" .. nonce, now, ttl)
    first = dict:get("digest:t:" .. nonce) or now
  end
  if now - first > EXPIRES then
    return "stale"
  end
  local uses = dict:incr("digest:n:" .. nonce, 1, 0, ttl)
  if uses and uses > REPLAYS then
    return "stale"
  end
  if not dict:add("digest:c:" .. nonce .. ":" .. nc, true, ttl) then
    return "bad" -- this nc was used: a replay
  end
  return "ok"
end

-- verify reports "ok" when p are the credentials of one of a's users for
-- this request, "stale" when they are but the nonce expired, with the
-- user's HA1 for both; else "bad".
local function verify(a, p)
  local ha1 = p and p.username and a.users[p.username]
  if not ha1 or p.realm ~= a.realm or p.qop ~= "auth" or (p.algorithm and p.algorithm:upper() ~= "MD5") then
    return "bad"
  end
  local nonce, nc, cnonce, uri, resp = p.nonce, p.nc, p.cnonce, p.uri, p.response
  if not (nonce and cnonce and uri and resp) or not nc or not str_find(nc, "^%x%x%x%x%x%x%x%x$") then
    return "bad"
  end
  if uri ~= var_get("request_uri") then
    return "bad"
  end
  local ha2 = md5(ngx.req.get_method() .. ":" .. uri)
  if not equal(md5(ha1 .. ":" .. nonce .. ":" .. nc .. ":" .. cnonce .. ":auth:" .. ha2), resp:lower()) then
    return "bad"
  end
  local state = nonce_state(nonce, nc:lower())
  if state == "bad" then -- a forged nonce or a replayed nc
    return "bad"
  end
  return state, ha1
end

-- auth_info is the Authentication-Info of a verified request, as the
-- module's: rspauth is the response digest with the HA2 of ":" .. uri
-- (RFC 2617 3.2.3), so the client can check the server knew its HA1.
local function auth_info(ha1, p)
  local rspauth = md5(ha1 .. ":" .. p.nonce .. ":" .. p.nc .. ":" .. p.cnonce .. ":auth:" .. md5(":" .. p.uri))
  return 'qop="auth", rspauth="' .. rspauth .. '", cnonce="' .. p.cnonce .. '", nc=' .. p.nc
end

-- check answers 401 with a fresh challenge unless the request carries the
-- digest credentials of one of the route's users; it returns the status
-- to answer, or nil to go on.
function _M.check(a)
  if not nonce_key() then
    ngx.log(ngx.ERR, "digest auth: no nonce key (cannot read /dev/urandom)")
    return 503
  end
  local p = params(var_get("http_authorization"))
  local fails = "digest:f:" .. var_get("remote_addr")
  local tries = dict:get(fails) or 0
  local state, ha1 = "bad", nil
  if tries < MAXTRIES then
    state, ha1 = verify(a, p)
  end
  if ha1 and tries > 0 then
    -- The client's credentials verified (with a good or a stale nonce):
    -- its failed sign-ins are forgotten, as the module's.
    dict:delete(fails)
  end
  if state == "ok" then
    ngx.header["Authentication-Info"] = auth_info(ha1, p)
    return nil
  end
  if p and state == "bad" and tries < MAXTRIES then
    -- A failed sign-in (credentials that do not verify); MAXTRIES of them
    -- refuse the address for EVASION seconds, as the module's evasion.
    dict:incr(fails, 1, 0, EVASION)
  end
  local challenge = 'Digest algorithm="MD5", qop="auth", realm="' .. a.realm .. '", nonce="' .. new_nonce() .. '"'
  if state == "stale" then
    challenge = challenge .. ', stale="true"'
  end
  ngx.header["WWW-Authenticate"] = challenge
  return 401
end

return _M
