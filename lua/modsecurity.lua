-- modsecurity.lua: a route's ModSecurity (pkg/nginx/modsecurity.go).
--
-- nginx.conf holds one internal location per ModSecurity profile,
-- "@modsec_<profile>", with the connector on and the profile's rules
-- file. The router sends a route's request there (enter) instead of to
-- its proxy location, which it leaves in $ingress_modsecurity_next;
-- ModSecurity inspects the request headers and body in the rewrite and
-- preaccess phases, and the location's access phase (access) sends the
-- request on to that proxy location, unless ModSecurity answered first.
--
-- A route's modsecurity item: {profile, txid, unavailable}: profile names
-- a profile of settings.modsec_profiles; txid is the nginx variable (its
-- name, without '$') whose value names the transaction; unavailable, or a
-- profile nginx.conf does not hold, answers 503 (fail closed).

local ngx = ngx
local nvar = require("nvar")
local settings = require("settings")
local var_get, var_set = nvar.get, nvar.set
local str_byte = string.byte
local type = type
local tostring = tostring

local _M = {}

-- compile validates a route's modsecurity item m and returns the worker's
-- form: {loc, txid}, or {fail = true}; nil and an error for a malformed
-- item.
function _M.compile(m, path, ingress)
  if type(m) ~= "table" or not (m.unavailable == nil or type(m.unavailable) == "boolean") then
    return nil, "invalid modsecurity"
  end
  if m.unavailable == true then -- the syncer says why (a Problem on the Ingress)
    return { fail = true }
  end
  if not (m.profile == nil or type(m.profile) == "string")
      or not (m.txid == nil or (type(m.txid) == "string" and m.txid:find("^[a-z][a-z0-9_]*$") and #m.txid <= 64)) then
    return nil, "invalid modsecurity"
  end
  local profiles = settings.get().modsec_profiles or {}
  if not profiles[m.profile] then
    ngx.log(ngx.WARN, "route ", path, " of ", tostring(ingress), " answers 503: its ModSecurity profile ",
      tostring(m.profile), " is not in nginx.conf")
    return { fail = true }
  end
  return { loc = "@modsec_" .. m.profile, txid = m.txid }
end

-- enter sends the request to the route's ModSecurity location ms, to
-- continue at loc (nil: location /'s proxy, "@modsec_http").
function _M.enter(ms, loc)
  var_set("ingress_modsecurity_next", loc or "@modsec_http")
  if ms.txid then
    var_set("ingress_modsecurity_txid", var_get(ms.txid) or "")
  end
  local v = ngx.exec(ms.loc)
  return v
end

-- access runs in the access phase of a ModSecurity location, after the
-- connector let the request through: on to the route's proxy location,
-- which the router set (a named location; anything else answers 500).
function _M.access()
  local loc = var_get("ingress_modsecurity_next")
  if type(loc) ~= "string" or str_byte(loc, 1) ~= 64 then -- '@'
    return ngx.exit(500)
  end
  local v = ngx.exec(loc)
  return v
end

return _M
